import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../../db/client";
import { insertSecretValue, secretValueById } from "../../db/repositories/secrets";
import { newId } from "../core/ids";
import type { TSecretSealer } from "../ports/secrets";

/** COUNTERSIGN_SECRET_KEY: 32 bytes, base64; throws naming the variable otherwise (checked at boot by server/config/index.ts). */
export function parseSecretKey(value: string): Buffer {
  const key = Buffer.from(value, "base64");
  if (key.length !== 32 || !/^[A-Za-z0-9+/]+={0,2}$/.test(value.trim())) throw new Error("COUNTERSIGN_SECRET_KEY must be 32 bytes, base64-encoded (e.g. openssl rand -base64 32).");
  return key;
}

/**
 * The key secrets are encrypted with: COUNTERSIGN_SECRET_KEY (32 bytes, base64), or a key
 * generated once into the data directory (mode 0600).
 */
export function loadSecretKey(dataDir: string, fromEnv?: string): Buffer {
  if (fromEnv) return parseSecretKey(fromEnv);
  const file = join(dataDir, "secret-key");
  if (existsSync(file)) return Buffer.from(readFileSync(file, "utf8").trim(), "base64");
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString("base64"), { mode: 0o600 });
  return key;
}

/** AES-256-GCM: `iv.tag.ciphertext`, base64url parts. */
export function encryptSecret(key: Buffer, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(aad));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64url")).join(".");
}

export function decryptSecret(key: Buffer, sealed: string, aad: string): string {
  const [iv, tag, body] = sealed.split(".").map((p) => Buffer.from(p, "base64url"));
  if (!iv || !tag || !body) throw new Error("Malformed secret.");
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
}

/** The sealing port over `key` (what tools that keep secrets are given). */
export const secretSealer = (key: Buffer): TSecretSealer => ({
  seal: (plaintext, aad) => encryptSecret(key, plaintext, aad),
  open: (sealed, aad) => decryptSecret(key, sealed, aad),
});

/** Stores one secret answer; the id is what the agent and records may see instead of the value. */
export async function storeSecret(tx: Db, key: Buffer, input: { questionId: string; answerKey: string; userId: string; value: string }): Promise<string> {
  const id = newId("secret");
  await insertSecretValue(tx, {
    id,
    questionId: input.questionId,
    answerKey: input.answerKey,
    userId: input.userId,
    ciphertext: encryptSecret(key, input.value, `${input.questionId}/${input.answerKey}`),
  });
  return id;
}

/** Reads a stored secret back (for application handlers only; never for records or the model). */
export async function readSecret(db: Db, key: Buffer, secretId: string): Promise<string | null> {
  const row = await secretValueById(db, secretId);
  return row ? decryptSecret(key, row.ciphertext, `${row.questionId}/${row.answerKey}`) : null;
}
