/**
 * Builds a response's timeline from its trajectory events (response_events): the run as turns,
 * each turn's tool calls (run one after another, in order), and the waits for a person inside
 * them, each with its duration. Pure: the router reads the rows and the names.
 */

/** One trajectory event as the timeline carries it (the audit list's shape). */
export type TTimelineEvent = { seq: number; type: string; data: Record<string, unknown>; actorUserId: string | null; transport: string | null; createdAt: string };

/** A wait for a person: from the `*.requested` event to the event that settled it. */
export type TTimelineWait = {
  kind: "approval" | "question" | "client_tool";
  id: string;
  requestedAt: string;
  resolvedAt: string | null;
  /** Null while nobody has settled it yet. */
  waitedMs: number | null;
  outcome: "pending" | "approved" | "denied" | "answered" | "declined" | "submitted" | "expired" | "cancelled";
  byUserId: string | null;
  /** Who settled it: the display name, with the email beside it when the user is known. */
  byName: string | null;
  byEmail: string | null;
};

export type TTimelineCall = { callId: string; name: string; startedAt: string; endedAt: string | null; durationMs: number | null; events: TTimelineEvent[]; waits: TTimelineWait[] };

export type TTimelineTurn = {
  turn: number | null;
  model: string | null;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** From the turn's start to its `model.turn` event: the time the model took. */
  modelMs: number | null;
  /** The turn's visible text and reasoning, as streamed (deltas joined). */
  text: string;
  thinkingChars: number;
  outputTokens: number;
  events: TTimelineEvent[];
  calls: TTimelineCall[];
};

/** What a model turn emits; anything else between two turns belongs to the previous turn's tool calls. */
const MODEL_OUTPUT = new Set(["response.text.delta", "response.thinking.delta", "response.tool_call", "response.usage", "model.plan", "model.turn"]);
/** Shown through the turn's text and tokens, not as rows. */
const FOLDED = new Set(["response.text.delta", "response.thinking.delta", "response.usage", "model.turn"]);

const ms = (a: string, b: string): number => Date.parse(b) - Date.parse(a);
const rec = (v: unknown): Record<string, unknown> => (v && typeof v === "object" ? (v as Record<string, unknown>) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The wait an event opens (`*.requested`), if any. */
function opened(e: TTimelineEvent): Pick<TTimelineWait, "kind" | "id"> | null {
  if (e.type === "approval.requested") return { kind: "approval", id: str(rec(e.data.approval).id) };
  if (e.type === "question.requested") return { kind: "question", id: str(rec(e.data.question).id) };
  if (e.type === "client_tool.requested") return { kind: "client_tool", id: str(rec(e.data.clientTool).id) };
  return null;
}

/** The wait an event settles and how, if any. */
function settled(e: TTimelineEvent): { id: string; outcome: TTimelineWait["outcome"]; byName: string | null } | null {
  const d = e.data;
  switch (e.type) {
    case "approval.resolved":
      return { id: str(d.approvalId), outcome: d.decision === "approve" ? "approved" : "denied", byName: null };
    case "approval.expired":
      return { id: str(d.approvalId), outcome: "expired", byName: null };
    case "client_tool.submitted":
      return { id: str(d.clientToolId), outcome: "submitted", byName: null };
    case "client_tool.expired":
      return { id: str(d.clientToolId), outcome: "expired", byName: null };
    case "question.resolved":
    case "question.expired": {
      const q = rec(d.question);
      const status = str(q.status);
      const outcome = status === "answered" ? "answered" : status === "cancelled" ? "declined" : "expired";
      return { id: str(q.id), outcome, byName: str(rec(q.answeredBy).name) || null };
    }
    default:
      return null;
  }
}

function newTurn(at: string): TTimelineTurn {
  return { turn: null, model: null, startedAt: at, endedAt: at, durationMs: 0, modelMs: null, text: "", thinkingChars: 0, outputTokens: 0, events: [], calls: [] };
}

/**
 * Groups events (in `seq` order) into the run's start (events before the first turn) and its
 * turns. `nameOf` gives a user's display name for the person who settled a wait.
 */
export function buildTimeline(events: readonly TTimelineEvent[], personOf: (userId: string) => { name: string; email: string } | null) {
  const start: TTimelineEvent[] = [];
  const turns: TTimelineTurn[] = [];
  const waits = new Map<string, TTimelineWait>();
  let turn: TTimelineTurn | null = null;
  let inModel = false;
  let previousAt: string | null = null;
  for (const e of events) {
    if (MODEL_OUTPUT.has(e.type) && !inModel) {
      turn = newTurn(previousAt ?? e.createdAt);
      turns.push(turn);
      inModel = true;
    }
    previousAt = e.createdAt;
    if (!turn) {
      start.push(e);
      continue;
    }
    turn.endedAt = e.createdAt;
    if (e.type === "response.text.delta") turn.text += str(e.data.delta);
    if (e.type === "response.thinking.delta") turn.thinkingChars += str(e.data.delta).length;
    if (e.type === "model.turn") {
      turn.turn = typeof e.data.turn === "number" ? e.data.turn : null;
      turn.model = str(e.data.model) || null;
      turn.outputTokens = typeof e.data.outputTokens === "number" ? e.data.outputTokens : 0;
      turn.modelMs = ms(turn.startedAt, e.createdAt);
      inModel = false;
    }
    if (e.type === "response.tool_call") {
      turn.calls.push({ callId: str(e.data.id), name: str(e.data.name), startedAt: e.createdAt, endedAt: null, durationMs: null, events: [e], waits: [] });
      continue;
    }
    if (FOLDED.has(e.type)) continue;
    // Tool calls run one after another: what happens between two turns belongs to the first unfinished call.
    const call = inModel ? undefined : turn.calls.find((c) => c.endedAt === null);
    (call ? call.events : turn.events).push(e);
    const open = opened(e);
    if (open && call) {
      const wait: TTimelineWait = { ...open, requestedAt: e.createdAt, resolvedAt: null, waitedMs: null, outcome: "pending", byUserId: null, byName: null, byEmail: null };
      waits.set(open.id, wait);
      call.waits.push(wait);
    }
    const done = settled(e);
    const wait = done ? waits.get(done.id) : undefined;
    if (done && wait) {
      Object.assign(wait, { resolvedAt: e.createdAt, waitedMs: ms(wait.requestedAt, e.createdAt), outcome: done.outcome, byUserId: e.actorUserId });
      // The person as they are named now (with their email); the name the event recorded when the user is unknown.
      const person = e.actorUserId ? personOf(e.actorUserId) : null;
      wait.byName = person?.name ?? done.byName;
      wait.byEmail = person?.email ?? null;
    }
    if (call && e.type === "response.tool_result" && str(e.data.callId) === call.callId) {
      call.endedAt = e.createdAt;
      call.durationMs = ms(call.startedAt, e.createdAt);
    }
  }
  for (const t of turns) t.durationMs = ms(t.startedAt, t.endedAt);
  const all = [...waits.values()];
  return {
    start,
    turns,
    waitedMs: all.reduce((n, w) => n + (w.waitedMs ?? 0), 0),
    outputTokens: turns.reduce((n, t) => n + t.outputTokens, 0),
  };
}
