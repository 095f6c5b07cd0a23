/**
 * Runs the installed `@countersign/client` against a live server (COUNTERSIGN_URL,
 * COUNTERSIGN_API_KEY). tests/integration/clients.test.ts packs the package (`npm pack`),
 * installs the tarball into a scratch project, type-checks this file there against the
 * installed types, runs it, and decides each approval through /v1 as another user. Each step
 * prints one JSON line; a `requested` line names its `step`, which tells the driver how to decide.
 */
import { ApprovalDenied, ApprovalEdited, Countersign, CountersignError, type TApproval } from "@countersign/client";

const emit = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify(event)}\n`);
};
const requested = (step: string) => (created: TApproval) => emit({ event: "requested", step, id: created.id, status: created.status });

async function main(): Promise<number> {
  emit({ event: "module", file: import.meta.resolve("@countersign/client") });
  const cs = new Countersign();
  const ran: string[] = [];
  const run = async (args: { command: string }) => {
    ran.push(args.command);
    return `ran ${args.command}`;
  };

  // request → wait → approved (with an edit) → consume → run the approver's arguments.
  const edited = cs.requireApproval("exec", run, { message: (a) => `Run ${a.command}?`, onRequest: requested("edit") });
  emit({ event: "edit", value: await edited({ command: "make deploy ENV=prod" }) });

  // A denial with a reply throws ApprovalDenied with the reply; nothing runs.
  const denied = await cs.requireApproval("exec", run, { onRequest: requested("deny") })({ command: "rm -rf build" }).catch((e: unknown) => e);
  if (!(denied instanceof ApprovalDenied)) return fail("deny", denied);
  emit({ event: "deny", status: denied.status, message: denied.message });

  // The retry after an edit: the first attempt asked and stopped; the retry (same key) runs the edited arguments.
  const key = `retry-${crypto.randomUUID()}`;
  await firstAttempt(cs, "retry", key, "deploy v1");
  const retried = cs.requireApproval("exec", run, { idempotencyKey: () => key, onRequest: (c) => emit({ event: "retried", status: c.status, edited: c.edited, arguments: c.arguments }) });
  emit({ event: "retry", value: await retried({ command: "deploy v1" }) });

  // With edits refused: ApprovalEdited (an ApprovalDenied), nothing runs, the approval stays unconsumed.
  const refusedKey = `refused-${crypto.randomUUID()}`;
  await firstAttempt(cs, "retry-refused", refusedKey, "deploy v1");
  const refused = await cs.requireApproval("exec", run, { idempotencyKey: refusedKey, acceptEdits: false })({ command: "deploy v1" }).catch((e: unknown) => e);
  if (!(refused instanceof ApprovalEdited)) return fail("retry-refused", refused);
  emit({ event: "retry-refused", id: refused.approvalId, arguments: refused.arguments, original: refused.originalArguments, denied: refused instanceof ApprovalDenied });

  // An operation that already ran is never run again: its retry is 409 already_consumed.
  const again = await retried({ command: "deploy v1" }).catch((e: unknown) => e);
  if (!(again instanceof CountersignError)) return fail("replay", again);
  emit({ event: "replay", status: again.status, code: again.code });

  // The caller's own action, declared by no agent: a person approves it (an edit of the subject), and the function runs with what was approved.
  const sendEmail = cs.requireApproval("send_email", async (a: { to: string; subject: string }) => `sent "${a.subject}" to ${a.to}`, { onRequest: requested("send-email") });
  emit({ event: "send-email", value: await sendEmail({ to: "ops@example.com", subject: "Weekly report" }) });

  emit({ event: "done", ran });
  return 0;
}

/** The first attempt: requested, then waited on as an observer until the approver has decided (so the retry meets the edit). */
async function firstAttempt(cs: Countersign, step: string, idempotencyKey: string, command: string): Promise<void> {
  const first = await cs.approvals.request({ action: "exec", arguments: { command }, idempotencyKey });
  requested(step)(first);
  await cs.approvals.wait(first.id);
}

function fail(step: string, error: unknown): number {
  emit({ event: "failed", step, error: String(error) });
  return 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
