import type { TNotifyDeps } from "./deps";
import type { TNotifyConfig } from "./config";
import { createDeliveryContext, deliverDue } from "./deliver";
import { planDue } from "./plan";

export type TNotifier = { wake: () => void; stop: () => Promise<void> };

/**
 * The notification loop of one process: plans requests, reminders and escalations and delivers
 * the outbox. It runs when the bus reports a new or changed approval or question (any replica)
 * and every `pollMs`, so due reminders and retries are found without a wake-up; every replica
 * may run it, since planning and claiming are decided by the database.
 */
export function startNotifier(deps: TNotifyDeps, config: TNotifyConfig, options: { publicUrl: string }): TNotifier {
  const ctx = createDeliveryContext(config, options.publicUrl);
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  const pass = async () => {
    await planDue(deps, config, options.publicUrl);
    // Keep sending while full batches come back, so a backlog drains without waiting for the poll.
    while (!stopped && (await deliverDue(deps, ctx)) > 0) {}
  };

  const wake = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await pass().catch((error: unknown) => {
          if (!stopped) deps.log.warn({ err: error }, "notification pass failed; retrying at the next poll");
        });
      } while (again && !stopped);
      running = null;
    })();
  };

  const unsubscribe = deps.bus.subscribeInbox((change) => {
    // A settled approval or question, or a finished run, may have put a lifecycle fact in the outbox.
    if (change.kind === "approval" || change.kind === "question" || change.kind === "response") wake();
  });
  const timer = setInterval(wake, config.pollMs);
  timer.unref();
  wake();

  return {
    wake,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      await running;
      ctx.mailer?.close();
    },
  };
}
