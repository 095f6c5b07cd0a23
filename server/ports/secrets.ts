/**
 * Seals and opens secrets at rest with the server's key (types only): AES-256-GCM, where `aad`
 * binds a sealed value to its row so it cannot be moved to another. server/host/secret-store.ts
 * implements it (`secretSealer(key)`); tools that keep secrets (payment cards) take it.
 */
export type TSecretSealer = {
  seal: (plaintext: string, aad: string) => string;
  /** Throws when the key is wrong or the sealed value was altered. */
  open: (sealed: string, aad: string) => string;
};
