/**
 * A minimal native harness exercising the host's authority capabilities (plugin API 1.1) and side questions (1.2), loaded
 * only through the plugins configuration (never imported by the host). Its input is a script,
 * `{ "steps": [...] }`, played in its first turn; the turn's text is the JSON list of what each
 * step returned. Steps:
 *
 * - `{ "say": text }`: returns the text.
 * - `{ "ask": text, "authority"?: "unscoped" | "source-bound", "source"?: name, "form"?: fields }`:
 *   asks the run's owner through the question dispatcher (with `form`: a schema-backed form of
 *   those fields); a source-bound question is bound to the plugin-side source `name` (current
 *   until a step `{ "endSource": name }` of any run ends it).
 * - `{ "submit": questionId, "answer": text, "lose"?: true }`: dispatches an input as that
 *   question's answer (`lose`: the response is treated as lost right after dispatch).
 * - `{ "retain": name }`, `{ "check": name }`, `{ "release": name }`: retained source authority,
 *   kept by name across runs (native work outliving the foreground turn).
 * - `{ "spawn": agent, "input": ..., "user"?: "self" | id }`: native subagent spawn admission.
 * - `{ "compact": summary }`: a compaction with the host's `assertActive` and retained source.
 * - `{ "asyncWork": true }`: async work with two resources (one released before the result).
 * - `{ "keep": name }` / `{ "late": name }`: keeps this attempt's capabilities, and later calls
 *   them after that attempt settled (they fail closed).
 * - `{ "claim": name, "text": text, "kind"?: "run" | "source-bound", "current"?: false, "questionId"?: id }`:
 *   through the capabilities kept as `name` (another run, waiting on its question), claims the
 *   input that run waits on with `text` (`messageInjectionV2.claimPendingUserInputAnswer`, V2);
 *   `current: false` passes an assertion that no longer holds.
 * - `{ "cancelInput": name, "resolvedBy": label, "kind"?, "current"?: false }`: cancels it instead
 *   (`cancelPendingUserInput`).
 * - `{ "tokens": n }`: reports one completed model response's output tokens (`reportOutputTokens`).
 * - `{ "review": command, "cwd"?: dir, "reason"?: text }`: asks the configured exec reviewer about
 *   a command this harness would run with its own exec tool; returns the decision (it runs nothing:
 *   a real harness runs an `allow-once` command once, tells the model a `deny`'s rationale and
 *   guidance, and asks a person on `ask`).
 *
 * Both harnesses answer side questions (plugin API 1.2) with a JSON text describing what the
 * handler saw (run, asker, transcript, whether the transcript is frozen). The question `keep`
 * keeps that side question's capabilities; `late` then calls them (they fail closed); `fail`
 * makes the handler throw.
 */
import type {
  AgentHarnessSideQuestionParamsV2,
  TCountersignPlugin,
  THarnessAttemptParams,
  THarnessDriver,
  THostCapabilities,
  TRetainedSourceAuthority,
  TSideQuestionAnswer,
  TSideQuestionCapabilities,
} from "../../../plugin-sdk";
import type { TQuestion } from "../../../plugin-sdk/wire";

type TStep = Record<string, unknown>;

const sources = new Map<string, boolean>();
const retained = new Map<string, TRetainedSourceAuthority>();
const kept = new Map<string, THostCapabilities>();
let keptSide: TSideQuestionCapabilities | null = null;

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function play(step: TStep, host: THostCapabilities): Promise<unknown> {
  if (typeof step.say === "string") return step.say;
  if (typeof step.endSource === "string") {
    sources.set(step.endSource, false);
    return { ended: step.endSource };
  }
  if (typeof step.ask === "string") {
    const name = typeof step.source === "string" ? step.source : "default";
    if (!sources.has(name)) sources.set(name, true);
    const authority = step.authority === "source-bound" ? { kind: "source-bound" as const, assertCurrent: () => sources.get(name) === true } : { kind: "unscoped" as const };
    // With `form`: a schema-backed form question (its fields), answered on the answer page or through question.resolve.
    const question: TQuestion = Array.isArray(step.form)
      ? { questionId: "form", header: "Native", question: step.ask, options: [], presentation: "form", fields: step.form as NonNullable<TQuestion["fields"]> }
      : { questionId: "q", header: "Native", question: step.ask, options: [], isOther: true, isSecret: false };
    return host.questions.ask({ questions: [question], authority, timeoutMs: 120_000 });
  }
  if (typeof step.submit === "string") {
    const lost = new AbortController();
    const pending = host.questions.submit({ questionId: step.submit, answers: { q: [String(step.answer ?? "")] }, authority: { kind: "unscoped" }, signal: lost.signal });
    if (step.lose === true) lost.abort();
    return pending;
  }
  if (typeof step.claim === "string" || typeof step.cancelInput === "string") {
    const caps = kept.get(String(step.claim ?? step.cancelInput));
    if (!caps) return { unknownKept: step.claim ?? step.cancelInput };
    const assertCurrent = () => step.current !== false;
    // Any other kind is passed on as given: the host refuses it.
    const kind = (step.kind ?? "run") as "run" | "source-bound";
    const v2 = caps.messageInjectionV2;
    if (typeof step.claim === "string") return v2.claimPendingUserInputAnswer(String(step.text ?? ""), typeof step.questionId === "string" ? { questionId: step.questionId } : {}, assertCurrent, kind);
    return v2.cancelPendingUserInput(String(step.resolvedBy ?? ""), assertCurrent, kind);
  }
  // The output tokens of one model response this harness completed (reported live, once per response).
  if (typeof step.tokens === "number") return host.reportOutputTokens(step.tokens);
  if (typeof step.review === "string") {
    return host.reviewExec({
      command: step.review,
      ...(typeof step.cwd === "string" ? { cwd: step.cwd } : {}),
      ...(typeof step.reason === "string" ? { reason: step.reason } : {}),
    });
  }
  if (typeof step.retain === "string") {
    retained.set(step.retain, host.retainSourceAuthority());
    return { retained: step.retain };
  }
  if (typeof step.check === "string") {
    const handle = retained.get(step.check);
    if (!handle) return { check: step.check, state: "unknown" };
    try {
      handle.assertCurrent();
      return { check: step.check, state: "current", aborted: handle.signal.aborted };
    } catch (error) {
      return { check: step.check, state: "ended", aborted: handle.signal.aborted, message: message(error) };
    }
  }
  if (typeof step.release === "string") {
    const handle = retained.get(step.release);
    handle?.release();
    // Idempotent: a second release changes nothing.
    handle?.release();
    return { released: step.release };
  }
  if (typeof step.spawn === "string") {
    const user = step.user === undefined || step.user === "self" ? host.subagents.requesterProfile().id : String(step.user);
    return host.subagents.spawn({ agent: step.spawn, input: step.input, user });
  }
  if (typeof step.compact === "string") {
    const summary = step.compact;
    return host.compact(async ({ assertActive, retainSourceAuthority }) => {
      const source = retainSourceAuthority();
      try {
        assertActive();
        source.assertCurrent();
        return { summary, tokensBefore: 1200, tokensAfter: 200 };
      } finally {
        source.release();
      }
    });
  }
  if (step.asyncWork === true) {
    const order: string[] = [];
    // The watcher's cleanup finishes only once the result is here: a host that withheld the result for it would never return.
    let resultHere = () => {};
    const returned = new Promise<void>((resolve) => {
      resultHere = resolve;
    });
    const result = await host.runWithAsyncWorkResources(async ({ onAcquired, assertCurrent }) => {
      assertCurrent();
      onAcquired({ name: "scratch-file", releaseBeforeResultWhenIdle: true, cleanup: () => void order.push("scratch-file") });
      onAcquired({
        name: "watcher",
        cleanup: async () => {
          await returned;
          order.push("watcher");
        },
      });
      order.push("work");
      return "work done";
    });
    order.push("result");
    resultHere();
    return { result, order };
  }
  if (typeof step.keep === "string") {
    kept.set(step.keep, host);
    return { kept: step.keep };
  }
  if (typeof step.late === "string") {
    const old = kept.get(step.late);
    if (!old) return { late: step.late, state: "unknown" };
    const outcomes: Record<string, string> = {};
    const attempt = async (name: string, call: () => unknown) => {
      try {
        await call();
        outcomes[name] = "ran";
      } catch (error) {
        outcomes[name] = message(error);
      }
    };
    await attempt("retainSourceAuthority", () => old.retainSourceAuthority());
    await attempt("ask", () => old.questions.ask({ questions: [{ questionId: "q", header: "Late", question: "late?", options: [], isOther: true, isSecret: false }], authority: { kind: "unscoped" } }));
    await attempt("spawn", () => old.subagents.spawn({ agent: "native-authority", input: { steps: [] }, user: "x" }));
    await attempt("compact", () => old.compact(async () => ({ summary: "late" })));
    await attempt("runWithAsyncWorkResources", () => old.runWithAsyncWorkResources(async () => "late"));
    await attempt("reviewExec", () => old.reviewExec({ command: "ls" }));
    // The V2 input methods answer a refusal instead of throwing (as queueMessage does).
    const claim = await old.messageInjectionV2.claimPendingUserInputAnswer("late", {}, () => true, "run");
    outcomes.claimPendingUserInputAnswer = claim.status === "rejected" ? claim.message : claim.status;
    return { late: step.late, outcomes };
  }
  return { unknownStep: Object.keys(step) };
}

/** Answers a side question from the run's transcript; it never steers the run. */
async function sideQuestion({ question, run, askedBy, transcript, hostCapabilities, signal }: AgentHarnessSideQuestionParamsV2): Promise<TSideQuestionAnswer> {
  if (question === "fail") throw new Error("the side channel is down");
  if (question === "keep") {
    keptSide = hostCapabilities;
    return { text: JSON.stringify({ kept: hostCapabilities.sideQuestionId }) };
  }
  if (question === "late") {
    try {
      keptSide?.trajectory.recordEvent("side.late", {});
      return { text: JSON.stringify({ late: "ran" }) };
    } catch (error) {
      return { text: JSON.stringify({ late: message(error) }) };
    }
  }
  let frozen = false;
  try {
    (transcript.items as unknown[]).push({ type: "message", text: "sneaked in" });
  } catch {
    frozen = true;
  }
  hostCapabilities.assertCurrent();
  hostCapabilities.trajectory.recordEvent("side.seen", { items: transcript.items.length });
  await hostCapabilities.trajectory.flush();
  return {
    text: JSON.stringify({
      question,
      runId: run.id,
      status: run.status,
      agent: run.agent.name,
      askedBy: askedBy.id,
      items: transcript.items.map((item) => item.type),
      steps: ((transcript.input as { steps?: unknown[] }).steps ?? []).length,
      frozen,
      aborted: signal.aborted,
    }),
  };
}

const plugin: TCountersignPlugin = {
  register(api) {
    const parseInput = (input: unknown) => {
      const steps = (input as { steps?: unknown } | null)?.steps;
      return Array.isArray(steps) && steps.every((s) => s !== null && typeof s === "object") ? { ok: true as const } : { ok: false as const, message: "The native-authority harness takes { steps: [...] }." };
    };
    const createDriver = ({ input, hostCapabilities }: THarnessAttemptParams): THarnessDriver => ({
      nextTurn: async (_conversation, turnIndex, _signal, _stream, beforeDispatch) => {
        if (turnIndex > 0) return null;
        beforeDispatch?.();
        const results: unknown[] = [];
        for (const step of (input as { steps: TStep[] }).steps) {
          try {
            results.push(await play(step, hostCapabilities));
          } catch (error) {
            results.push({ error: message(error) });
          }
        }
        return { text: JSON.stringify(results), toolCalls: [] };
      },
    });
    // Steering and answers stay in the run owner's profile.
    api.registerHarness({ id: "native-authority", supportsCrossProfileSteering: false, parseInput, createDriver, sideQuestion });
    // The same loop, open to other profiles' steering (the flag omitted).
    api.registerHarness({ id: "native-authority-shared", parseInput, createDriver, sideQuestion });
    api.registerAgent({
      name: "native-authority",
      harness: "native-authority",
      description: "The native-authority example plugin's agent: plays a script of host authority capabilities.",
      tools: [],
      maxTurns: 2,
    });
    api.registerAgent({
      name: "native-authority-shared",
      harness: "native-authority-shared",
      description: "The native-authority loop on a harness that accepts steering from other profiles.",
      tools: [],
      maxTurns: 2,
    });
  },
};

export default plugin;
