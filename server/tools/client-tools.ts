import { z } from "zod";
import { storePaymentCard, ZCardDetails } from "./payment-cards";
import type { TClientTool } from "./types";

/** An ordinary client tool: the browser reports the page it shows. */
export const getPageContextTool: TClientTool = {
  kind: "client",
  name: "get_page_context",
  description: "Ask the connected client for the page the user is looking at.",
  argsSchema: z.strictObject({}),
  outputSchema: z.object({ url: z.string(), title: z.string(), text: z.string().optional() }),
};

/** A private-input client tool: card details reach only this handler; the model sees `last4`. */
export const collectCardDetailsTool: TClientTool = {
  kind: "client",
  name: "collect_card_details",
  description: "Collect payment card details privately from the user.",
  argsSchema: z.strictObject({}),
  outputSchema: ZCardDetails,
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
  handlePrivateInput: async (input, { tx, userId, sessionId, secrets }) => {
    const { last4 } = await storePaymentCard(tx, secrets, { userId, sessionId }, ZCardDetails.parse(input));
    return { cardOnFile: true, last4 };
  },
};
