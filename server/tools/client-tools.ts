import { z } from "zod";
import { paymentCards } from "../../db/schema";
import { newId } from "../core/ids";
import { encryptSecret } from "../host/secret-store";
import type { TClientTool } from "./types";

/** An ordinary client tool: the browser reports the page it shows. */
export const getPageContextTool: TClientTool = {
  kind: "client",
  name: "get_page_context",
  description: "Ask the connected client for the page the user is looking at.",
  argsSchema: z.strictObject({}),
  outputSchema: z.object({ url: z.string(), title: z.string(), text: z.string().optional() }),
};

const ZCardInput = z.object({
  number: z.string().regex(/^\d{13,19}$/, "number must be 13 to 19 digits"),
  expiry: z.string().regex(/^(0[1-9]|1[0-2])\/\d{2}$/, "expiry must be MM/YY"),
  name: z.string().min(1, "name is required").max(200),
});

/** A private-input client tool: card details reach only this handler; the model sees `last4`. */
export const collectCardDetailsTool: TClientTool = {
  kind: "client",
  name: "collect_card_details",
  description: "Collect payment card details privately from the user.",
  argsSchema: z.strictObject({}),
  outputSchema: ZCardInput,
  inputJsonSchema: {
    type: "object",
    additionalProperties: false,
    required: ["number", "expiry", "name"],
    properties: {
      number: { type: "string", pattern: "^\\d{13,19}$", description: "Card number, 13–19 digits" },
      expiry: { type: "string", pattern: "^(0[1-9]|1[0-2])/\\d{2}$", description: "Expiry, MM/YY" },
      name: { type: "string", minLength: 1, description: "Name on the card" },
    },
  },
  handlePrivateInput: async (input, { tx, userId, sessionId, secretKey }) => {
    const card = ZCardInput.parse(input);
    const last4 = card.number.slice(-4);
    const id = newId("card");
    // Only last4 is stored readable; number, expiry and name are sealed, so no table, WAL page or dump holds them in plain text.
    const sealed = encryptSecret(secretKey, JSON.stringify({ number: card.number, expiry: card.expiry, name: card.name }), id);
    await tx.insert(paymentCards).values({ id, userId, sessionId, last4, sealed });
    return { cardOnFile: true, last4 };
  },
};
