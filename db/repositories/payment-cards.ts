import { eq } from "drizzle-orm";
import type { Db } from "../client";
import { paymentCards } from "../schema";

/** Inserts a payment card: its last four digits readable, the rest sealed (server/tools/payment-cards.ts). */
export async function insertPaymentCard(tx: Db, card: { id: string; userId: string; sessionId: string; last4: string; sealed: string }): Promise<void> {
  await tx.insert(paymentCards).values({ id: card.id, userId: card.userId, sessionId: card.sessionId, last4: card.last4, sealed: card.sealed });
}

/** The sealed details of a payment card, or null for an unknown id. */
export async function sealedPaymentCard(db: Db, cardId: string): Promise<string | null> {
  const [row] = await db.select({ sealed: paymentCards.sealed }).from(paymentCards).where(eq(paymentCards.id, cardId));
  return row?.sealed ?? null;
}
