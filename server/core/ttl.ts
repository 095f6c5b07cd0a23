import { z } from "zod";

/** The longest an approval or client-tool request of one run waits (7 days): a pending one is a stored row and an inbox item. */
export const MAX_TTL_MS = 7 * 24 * 3_600_000;

/** How long a question waits when its asker names no timeout (10 minutes): gateway questions, a harness's questions, MCP elicitations. */
export const DEFAULT_QUESTION_TIMEOUT_MS = 10 * 60_000;

/** An input's `approvalTtlMs` / `clientToolTtlMs`: at least 1000 (the contract), anything longer shortened to MAX_TTL_MS; `expiresAt` shows the real expiry. */
export const ZTtlMs = z
  .number()
  .int()
  .min(1000)
  .transform((ms) => Math.min(ms, MAX_TTL_MS));
