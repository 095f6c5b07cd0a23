import { randomBytes } from "node:crypto";

/** A prefixed 128-bit random identifier, e.g. `resp_<32 hex>`. */
export const newId = (prefix: string): string => `${prefix}_${randomBytes(16).toString("hex")}`;

/** A random secret of `bytes` bytes encoded as base64url. */
export const newSecret = (bytes = 32): string => randomBytes(bytes).toString("base64url");
