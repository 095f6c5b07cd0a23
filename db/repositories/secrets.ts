import { eq } from "drizzle-orm";
import type { Db } from "../client";
import { secretValues } from "../schema";

export type TSecretValueRow = typeof secretValues.$inferSelect;

/** Stores one encrypted secret answer. */
export async function insertSecretValue(tx: Db, values: Pick<TSecretValueRow, "id" | "questionId" | "answerKey" | "userId" | "ciphertext">): Promise<void> {
  await tx.insert(secretValues).values(values);
}

/** One stored (still encrypted) secret by id. */
export async function secretValueById(db: Db, id: string): Promise<TSecretValueRow | null> {
  const [row] = await db.select().from(secretValues).where(eq(secretValues.id, id));
  return row ?? null;
}
