import { z } from "zod";
import type { TActor } from "../../core/actor";
import type { TAnswers } from "../../core/questions/schema";
import type { TDeps } from "../../host/deps";
import { questionTopic, waitFor } from "../../host/wait-for";
import { questionById, visibleQuestion } from "../../../db/repositories/question-records";

export const ZWaitParams = z.strictObject({
  id: z.string().min(1),
  /** Any wait from 1 s is accepted; one call waits at most MAX_WAIT_MS and then answers `pending` (the client waits again). */
  timeoutMs: z.number().int().min(1000, "timeoutMs must be at least 1000").optional(),
  includeResolutionId: z.boolean().optional(),
});

/** The longest one waiter call holds its request open (10 min): a bound on open connections, not on the question. */
export const MAX_WAIT_MS = 600_000;

export type TWaitResult =
  | { status: "pending" }
  | { status: "answered"; answers: TAnswers; resolutionId?: string }
  | { status: "cancelled" }
  | { status: "expired" };

/**
 * Long-polls a question until it is terminal or the waiter's own timeout passes
 * (`pending`). The receipt is returned only when asked for and only for a committed answer.
 */
export async function waitAnswer(deps: TDeps, actor: TActor, params: z.infer<typeof ZWaitParams>): Promise<TWaitResult> {
  // The creator's own id or the key: from here on, the key.
  const { id } = await visibleQuestion(deps.db, actor, params.id);
  const deadline = Date.now() + Math.min(params.timeoutMs ?? 30_000, MAX_WAIT_MS);
  const settled = await waitFor(
    questionTopic(deps.bus, id),
    async (): Promise<TWaitResult | null> => {
      const row = await questionById(deps.db, id);
      if (!row) return { status: "cancelled" };
      if (row.status === "answered") {
        // A submission that carries a receipt may have committed a moment before recording it:
        // wait for its outcome (bounded by this waiter's deadline) before reading the receipt.
        const open = params.includeResolutionId ? deps.receipts.pending(row.id) : undefined;
        if (open) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([open, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
          clearTimeout(timer);
        }
        const receipt = params.includeResolutionId ? deps.receipts.get(row.id) : undefined;
        return { status: "answered", answers: row.answers ?? {}, ...(receipt ? { resolutionId: receipt } : {}) };
      }
      if (row.status !== "pending") return { status: row.status };
      // Past its expiry, the sweep settles it within moments: keep waiting a little for that outcome.
      return Date.now() > row.expiresAt.getTime() + 1500 ? { status: "pending" } : null;
    },
    { deadline, pollMs: 5000 },
  );
  return settled ?? { status: "pending" };
}
