import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The load driver: many concurrent sessions, each one flow through the `/v1` API, requests
 * spread round-robin over the replica URLs.
 * - approval flow: POST /v1/responses (scripted `exec`) → requires_action → POST /v1/approvals/{id}
 *   (approve, or deny for a share of flows; for another share a second, concurrent decision goes to
 *   another replica and must lose with 409) → completed (or denied).
 * - question flow: POST /v1/responses (scripted `ask_user`) → requires_action (question) →
 *   POST /v1/gateway/question.resolve (optionally raced on another replica) → the events stream
 *   (GET /v1/responses/{id}/events, a third replica) until the terminal frame.
 * Bounded by `sessions`, `concurrency` and `durationMs` (a hard stop aborting what is in flight).
 */

export type TLoadOptions = {
  urls: string[];
  key: string;
  sessions: number;
  concurrency: number;
  durationMs: number;
  /** The servers' data directories, where the approved commands' side effects are checked (none: unchecked). */
  dataDirs?: string[];
  /** Share of flows that ask a question instead of needing an approval (default 0.25). */
  questionShare?: number;
  /** Share of approval flows that deny (default 0.1). */
  denyShare?: number;
  /** Share of flows whose decision/answer is sent twice, concurrently, to two replicas (default 0.2). */
  duplicateShare?: number;
  /** Per-request bound (default 60 s). */
  requestTimeoutMs?: number;
  onProgress?: (line: string) => void;
};

export type TOpStats = { count: number; errors: number; p50: number; p95: number; p99: number; max: number; mean: number };

export type TFlow = {
  index: number;
  kind: "approval" | "question";
  responseId?: string;
  sessionId?: string;
  decision?: "approve" | "deny";
  duplicated: boolean;
  outcome: "completed" | "denied" | "waiting" | "aborted" | "error";
  /** A decision/answer was sent and may have committed (then the run may still move on). */
  decisionSent: boolean;
  problem?: string;
};

export type TLoadResult = {
  elapsedMs: number;
  requests: number;
  flows: TFlow[];
  outcomes: Record<TFlow["outcome"], number>;
  throughput: { flowsPerSec: number; requestsPerSec: number };
  ops: Record<string, TOpStats>;
  /** Unexpected answers, by `op status code`. */
  errors: Record<string, number>;
  /** Expected losers of duplicated decisions/answers (409 / QUESTION_ALREADY_TERMINAL). */
  raceLosers: number;
  /** Duplicated decisions/answers with exactly one winner. */
  racesWithOneWinner: number;
  races: number;
  rateLimited: number;
  sideEffects: { checked: number; exactlyOnce: number; violations: string[] };
};

type TReply = { status: number; body: Record<string, unknown> | null; text: string; ms: number; error?: string };

const ASK = { questions: [{ id: "q", header: "Q", question: "?", options: [{ label: "a" }, { label: "b" }] }] };

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export async function runLoad(options: TLoadOptions): Promise<TLoadResult> {
  if (options.urls.length === 0) throw new Error("runLoad needs at least one URL");
  const questionShare = options.questionShare ?? 0.25;
  const denyShare = options.denyShare ?? 0.1;
  const duplicateShare = options.duplicateShare ?? 0.2;
  const requestTimeoutMs = options.requestTimeoutMs ?? 60_000;
  const stop = new AbortController();
  const latencies = new Map<string, number[]>();
  const opErrors = new Map<string, number>();
  const errors: Record<string, number> = {};
  const flows: TFlow[] = [];
  let requests = 0;
  let rateLimited = 0;
  let raceLosers = 0;
  let races = 0;
  let racesWithOneWinner = 0;
  const url = (i: number) => options.urls[((i % options.urls.length) + options.urls.length) % options.urls.length] as string;

  const unexpected = (op: string, reply: TReply) => {
    const code = reply.error ?? String((reply.body?.code as string | undefined) ?? ((reply.body?.error as { details?: { reason?: string } } | undefined)?.details?.reason ?? ""));
    const key = `${op} ${reply.status || "network"} ${code}`.trim();
    errors[key] = (errors[key] ?? 0) + 1;
    opErrors.set(op, (opErrors.get(op) ?? 0) + 1);
  };

  /** One request; 429 is retried after Retry-After (at most 5 times); never throws. */
  const call = async (op: string, base: string, method: string, path: string, body?: unknown): Promise<TReply> => {
    for (let attempt = 0; ; attempt++) {
      const started = performance.now();
      requests++;
      let reply: TReply;
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: { authorization: `Bearer ${options.key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.any([stop.signal, AbortSignal.timeout(requestTimeoutMs)]),
        });
        const text = await res.text();
        let parsed: Record<string, unknown> | null = null;
        try {
          parsed = JSON.parse(text) as Record<string, unknown>;
        } catch {}
        reply = { status: res.status, body: parsed, text, ms: performance.now() - started };
        if (res.status === 429 && attempt < 5 && !stop.signal.aborted) {
          rateLimited++;
          await sleep(Math.min(10, Number(res.headers.get("retry-after") ?? 1)) * 1000, stop.signal);
          continue;
        }
      } catch (error) {
        const e = error as { name?: string; cause?: { code?: string }; code?: string };
        const code = stop.signal.aborted ? "aborted" : e.name === "TimeoutError" ? "timeout" : (e.cause?.code ?? e.code ?? e.name ?? "error");
        reply = { status: 0, body: null, text: "", ms: performance.now() - started, error: code };
      }
      if (reply.status > 0) {
        const list = latencies.get(op) ?? [];
        list.push(reply.ms);
        latencies.set(op, list);
      }
      return reply;
    }
  };

  const approvalFlow = async (flow: TFlow, i: number) => {
    const created = await call("invoke", url(i), "POST", "/v1/responses", {
      input: { script: [{ toolCalls: [{ name: "exec", arguments: { command: `echo load-${i} >> load.txt` } }] }, { text: "done" }] },
    });
    const action = created.body?.requiredAction as { type?: string; id?: string } | undefined;
    if (created.status !== 200 || created.body?.status !== "requires_action" || action?.type !== "human_approval" || !action.id) {
      if (!stop.signal.aborted) unexpected("invoke", created);
      flow.outcome = stop.signal.aborted ? "aborted" : "error";
      flow.problem = `invoke → ${created.status} ${created.text.slice(0, 200)}`;
      return;
    }
    flow.responseId = created.body.id as string;
    flow.sessionId = created.body.sessionId as string;
    flow.outcome = "waiting";
    if (stop.signal.aborted) return;
    const decision = flow.decision as "approve" | "deny";
    flow.decisionSent = true;
    const sends = [call("decide", url(i + 1), "POST", `/v1/approvals/${action.id}`, { decision })];
    if (flow.duplicated) sends.push(call("decide.duplicate", url(i + 2), "POST", `/v1/approvals/${action.id}`, { decision }));
    const replies = await Promise.all(sends);
    const winners = replies.filter((r) => r.status === 200);
    const losers = replies.filter((r) => r.status === 409 && r.body?.code === "already_decided");
    if (flow.duplicated && replies.every((r) => r.status > 0)) {
      races++;
      if (winners.length === 1 && losers.length === 1) racesWithOneWinner++;
    }
    raceLosers += losers.length;
    for (const [n, r] of replies.entries()) {
      const ok = r.status === 200 || (flow.duplicated && r.status === 409 && r.body?.code === "already_decided");
      if (!ok && !stop.signal.aborted) unexpected(n === 0 ? "decide" : "decide.duplicate", r);
    }
    if (winners.length > 1) {
      flow.outcome = "error";
      flow.problem = "two decisions of one approval both answered 200";
      return;
    }
    const won = winners[0];
    if (!won) {
      flow.outcome = stop.signal.aborted ? "aborted" : "error";
      flow.problem ??= `decide → ${replies.map((r) => `${r.status} ${r.error ?? r.text.slice(0, 120)}`).join(" | ")}`;
      return;
    }
    const expected = decision === "approve" ? "completed" : "denied";
    if (won.body?.status !== expected || (decision === "approve" && won.body?.outputText !== "done")) {
      flow.outcome = "error";
      flow.problem = `decide answered ${won.text.slice(0, 200)}`;
      unexpected("decide", { ...won, status: won.status, error: `status:${String(won.body?.status)}` });
      return;
    }
    flow.outcome = expected;
  };

  const questionFlow = async (flow: TFlow, i: number) => {
    const created = await call("invoke", url(i), "POST", "/v1/responses", { input: { script: [{ toolCalls: [{ name: "ask_user", arguments: ASK }] }, { text: "done" }] } });
    const action = created.body?.requiredAction as { type?: string; id?: string } | undefined;
    if (created.status !== 200 || created.body?.status !== "requires_action" || action?.type !== "question" || !action.id) {
      if (!stop.signal.aborted) unexpected("invoke", created);
      flow.outcome = stop.signal.aborted ? "aborted" : "error";
      flow.problem = `invoke → ${created.status} ${created.text.slice(0, 200)}`;
      return;
    }
    flow.responseId = created.body.id as string;
    flow.sessionId = created.body.sessionId as string;
    flow.outcome = "waiting";
    if (stop.signal.aborted) return;
    flow.decisionSent = true;
    const params = { id: action.id, answers: { q: ["a"] } };
    const sends = [call("question.resolve", url(i + 1), "POST", "/v1/gateway/question.resolve", params)];
    if (flow.duplicated) sends.push(call("question.resolve.duplicate", url(i + 2), "POST", "/v1/gateway/question.resolve", params));
    const replies = await Promise.all(sends);
    const isLoser = (r: TReply) => r.status === 400 && (r.body?.error as { details?: { reason?: string } } | undefined)?.details?.reason === "QUESTION_ALREADY_TERMINAL";
    const winners = replies.filter((r) => r.status === 200 && r.body?.ok === true);
    const losers = replies.filter(isLoser);
    if (flow.duplicated && replies.every((r) => r.status > 0)) {
      races++;
      if (winners.length === 1 && losers.length === 1) racesWithOneWinner++;
    }
    raceLosers += losers.length;
    for (const [n, r] of replies.entries()) {
      const ok = (r.status === 200 && r.body?.ok === true) || (flow.duplicated && isLoser(r));
      if (!ok && !stop.signal.aborted) unexpected(n === 0 ? "question.resolve" : "question.resolve.duplicate", r);
    }
    if (winners.length !== 1) {
      flow.outcome = stop.signal.aborted ? "aborted" : "error";
      flow.problem = `question.resolve → ${replies.map((r) => `${r.status} ${r.error ?? r.text.slice(0, 120)}`).join(" | ")}`;
      return;
    }
    if (stop.signal.aborted) return;
    const events = await call("question.complete", url(i + 2), "GET", `/v1/responses/${flow.responseId}/events?sessionId=${encodeURIComponent(flow.sessionId)}&after=-1`);
    const frames = events.text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => JSON.parse(l.slice(5)) as { type: string; status?: string; outputText?: string; sequence: number });
    const last = frames[frames.length - 1];
    const contiguous = frames.every((f, n) => f.sequence === n);
    if (events.status !== 200 || last?.type !== "response.completed" || last.status !== "completed" || last.outputText !== "done" || !contiguous) {
      if (!stop.signal.aborted) unexpected("question.complete", { ...events, error: events.error ?? `last:${last?.type}/${last?.status}${contiguous ? "" : "/gap"}` });
      flow.outcome = stop.signal.aborted ? "aborted" : "error";
      flow.problem = `events ended with ${JSON.stringify(last)?.slice(0, 200)}${contiguous ? "" : " (sequence gap)"}`;
      return;
    }
    flow.outcome = "completed";
  };

  const started = performance.now();
  const hardStop = setTimeout(() => stop.abort(), options.durationMs);
  const progress = setInterval(() => {
    const done = flows.filter((f) => f.outcome !== "waiting").length;
    options.onProgress?.(`  … ${((performance.now() - started) / 1000).toFixed(0)} s: ${flows.length} started, ${done} finished, ${requests} requests`);
  }, 5000);
  let next = 0;
  const worker = async () => {
    while (!stop.signal.aborted && next < options.sessions) {
      const i = next++;
      const kind = Math.random() < questionShare ? "question" : "approval";
      const flow: TFlow = {
        index: i,
        kind,
        duplicated: options.urls.length > 0 && Math.random() < duplicateShare,
        decision: kind === "approval" ? (Math.random() < denyShare ? "deny" : "approve") : undefined,
        outcome: "waiting",
        decisionSent: false,
      };
      flows.push(flow);
      try {
        if (kind === "approval") await approvalFlow(flow, i);
        else await questionFlow(flow, i);
      } catch (error) {
        flow.outcome = "error";
        flow.problem = `driver error: ${(error as Error).message}`;
        errors[`driver ${(error as Error).message.slice(0, 80)}`] = (errors[`driver ${(error as Error).message.slice(0, 80)}`] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  clearTimeout(hardStop);
  clearInterval(progress);
  const elapsedMs = performance.now() - started;
  for (const f of flows) if (f.outcome === "waiting" && stop.signal.aborted) f.outcome = "aborted";

  const ops: Record<string, TOpStats> = {};
  for (const [op, list] of latencies) {
    const sorted = [...list].sort((a, b) => a - b);
    ops[op] = {
      count: sorted.length,
      errors: opErrors.get(op) ?? 0,
      p50: percentile(sorted, 50),
      p95: percentile(sorted, 95),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? 0,
      mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    };
  }
  const outcomes = { completed: 0, denied: 0, waiting: 0, aborted: 0, error: 0 } as Record<TFlow["outcome"], number>;
  for (const f of flows) outcomes[f.outcome]++;
  const finished = outcomes.completed + outcomes.denied;
  return {
    elapsedMs,
    requests,
    flows,
    outcomes,
    throughput: { flowsPerSec: finished / (elapsedMs / 1000), requestsPerSec: requests / (elapsedMs / 1000) },
    ops,
    errors,
    raceLosers,
    races,
    racesWithOneWinner,
    rateLimited,
    sideEffects: checkSideEffects(flows, options.dataDirs ?? []),
  };
}

/**
 * The approved command of each approval flow appends one line to `load.txt` in the session's
 * workspace (loopback: the same machine): completed → exactly one line, denied → none, a
 * decision that may or may not have committed → at most one.
 */
export function checkSideEffects(flows: TFlow[], dataDirs: readonly string[]): TLoadResult["sideEffects"] {
  let checked = 0;
  let exactlyOnce = 0;
  const violations: string[] = [];
  for (const f of flows) {
    // Clients only see workspace-relative paths: the session's workspace is in the data directory of the server that created it.
    const workspace = f.kind === "approval" && f.sessionId ? dataDirs.map((dir) => join(dir, "workspaces", f.sessionId as string)).find((dir) => existsSync(dir)) : undefined;
    if (!workspace) continue;
    const file = join(workspace, "load.txt");
    const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
    checked++;
    const expected = f.outcome === "completed" ? [1] : f.outcome === "denied" || !f.decisionSent ? [0] : [0, 1];
    if (!expected.includes(lines)) violations.push(`flow ${f.index} (${f.outcome}, ${f.responseId}): ${lines} line(s) in load.txt, expected ${expected.join(" or ")}`);
    else if (f.outcome === "completed") exactlyOnce++;
  }
  return { checked, exactlyOnce, violations };
}

/**
 * After the run: waits (bounded) until every response the load touched has left `in_progress`
 * (a decision in flight at the hard stop may still resume the run), re-checking side effects.
 */
export async function quiesce(options: { urls: string[]; key: string; timeoutMs?: number }, flows: TFlow[]): Promise<{ settled: number; stillRunning: string[] }> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  const open = flows.filter((f) => f.responseId && f.sessionId && f.outcome !== "completed" && f.outcome !== "denied");
  let stillRunning: string[] = [];
  for (let round = 0; round < 1000; round++) {
    stillRunning = [];
    for (const f of open) {
      const res = await fetch(`${options.urls[f.index % options.urls.length]}/v1/responses/${f.responseId}?sessionId=${encodeURIComponent(f.sessionId as string)}`, {
        headers: { authorization: `Bearer ${options.key}` },
        signal: AbortSignal.timeout(10_000),
      }).catch(() => null);
      const body = res?.ok ? ((await res.json()) as { status?: string }) : null;
      if (!body || body.status === "in_progress") stillRunning.push(f.responseId as string);
    }
    if (stillRunning.length === 0 || Date.now() > deadline) break;
    await sleep(250);
  }
  return { settled: open.length - stillRunning.length, stillRunning };
}

const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** The run as text lines. */
export function formatLoad(result: TLoadResult, replicas: number): string[] {
  const lines = [
    `load: ${result.flows.length} sessions over ${replicas} replica${replicas === 1 ? "" : "s"} in ${(result.elapsedMs / 1000).toFixed(1)} s`,
    `  outcomes: ${Object.entries(result.outcomes).map(([k, v]) => `${k} ${v}`).join(", ")}`,
    `  throughput: ${result.throughput.flowsPerSec.toFixed(1)} flows/s finished, ${result.throughput.requestsPerSec.toFixed(1)} requests/s (${result.requests} requests)`,
    `  races (same decision/answer sent to two replicas at once): ${result.races}, exactly one winner in ${result.racesWithOneWinner}; expected losers ${result.raceLosers}`,
    `  rate limited (429, retried): ${result.rateLimited}`,
    "  latency (ms)              count    p50     p95     p99     max   errors",
  ];
  for (const [op, s] of Object.entries(result.ops).sort()) {
    lines.push(`  ${op.padEnd(26)}${String(s.count).padStart(5)} ${ms(s.p50).padStart(7)} ${ms(s.p95).padStart(7)} ${ms(s.p99).padStart(7)} ${ms(s.max).padStart(7)} ${String(s.errors).padStart(6)}`);
  }
  const errorEntries = Object.entries(result.errors);
  lines.push(`  unexpected answers: ${errorEntries.length === 0 ? "none" : ""}`);
  for (const [k, v] of errorEntries) lines.push(`    ${v} × ${k}`);
  const problems = result.flows.filter((f) => f.outcome === "error").slice(0, 10);
  for (const f of problems) lines.push(`    flow ${f.index} (${f.kind}): ${f.problem}`);
  const se = result.sideEffects;
  lines.push(`  side effects: ${se.checked} workspaces checked, ${se.exactlyOnce} approved commands ran exactly once, ${se.violations.length} violations`);
  for (const v of se.violations.slice(0, 10)) lines.push(`    ${v}`);
  return lines;
}
