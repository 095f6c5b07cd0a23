import { z } from "zod";
import type { Db } from "../../db/client";
import { insertPaymentCard, sealedPaymentCard } from "../../db/repositories/payment-cards";
import { newId } from "../core/ids";
import type { TSecretSealer } from "../ports/secrets";

/** What `collect_card_details` collects; the error messages never echo a value back. */
export const ZCardDetails = z.object({
  number: z.string().regex(/^\d{13,19}$/, "number must be 13 to 19 digits"),
  expiry: z.string().regex(/^(0[1-9]|1[0-2])\/\d{2}$/, "expiry must be MM/YY"),
  name: z.string().min(1, "name is required"),
});
export type TCardDetails = z.infer<typeof ZCardDetails>;

/**
 * Stores a card for the application handler: `last4` readable, number, expiry and name sealed
 * with the secret key through `secrets` (the card id is the additional data, so a sealed value cannot be moved to
 * another row). No table, WAL page, log or dump holds them in plain text.
 */
export async function storePaymentCard(tx: Db, secrets: TSecretSealer, owner: { userId: string; sessionId: string }, card: TCardDetails): Promise<{ id: string; last4: string }> {
  const id = newId("card");
  const last4 = card.number.slice(-4);
  const sealed = secrets.seal(JSON.stringify({ number: card.number, expiry: card.expiry, name: card.name }), id);
  await insertPaymentCard(tx, { id, userId: owner.userId, sessionId: owner.sessionId, last4, sealed });
  return { id, last4 };
}

/**
 * The full card back, for the application handler that charges it (never for records or the
 * model); null for an unknown id. Throws when the key is wrong or the sealed value was altered.
 */
export async function readPaymentCard(db: Db, secrets: TSecretSealer, cardId: string): Promise<TCardDetails | null> {
  const sealed = await sealedPaymentCard(db, cardId);
  return sealed !== null ? ZCardDetails.parse(JSON.parse(secrets.open(sealed, cardId))) : null;
}
