import type { Logger } from "pino";
import type postgres from "postgres";
import { newId } from "../core/ids";
import { createLocalBus, PEER_CHANNEL } from "./bus";
import type { EventBus, TAnnouncement } from "../ports/bus";

type TMessage =
  | { k: "f"; r: string; s: number }
  | { k: "w"; r: string; why: "resume" | "cancel" }
  | { k: "i"; c: Parameters<EventBus["publishInbox"]>[0] }
  | { k: "q"; c: Parameters<EventBus["publishQuestion"]>[0] }
  | { k: "c"; c: Parameters<EventBus["publishCredentials"]>[0] };

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more. */
const MAX_PAYLOAD = 7000;

/** One small message per change: frames travel as a hint (their last sequence); peers read the table. */
function messageOf(a: TAnnouncement): TMessage | null {
  if (a.k === "frames") {
    const last = a.frames[a.frames.length - 1];
    return last ? { k: "f", r: a.responseId, s: last.sequence } : null;
  }
  if (a.k === "wake") return { k: "w", r: a.responseId, why: a.reason };
  if (a.k === "inbox") return { k: "i", c: a.change };
  if (a.k === "question") return { k: "q", c: a.change };
  return { k: "c", c: a.change };
}

/**
 * The bus for replicas on one PostgreSQL: local delivery as in one process, plus NOTIFY to the
 * others (never per event; state is read from the tables). A transaction sends its batch's
 * notice itself (`peerPayloads`), so announcing costs no commit; NOTIFY is delivered on commit only.
 */
export async function createPgBus(sql: postgres.Sql, log: Logger): Promise<EventBus & { close: () => Promise<void> }> {
  const local = createLocalBus();
  const origin = newId("replica");
  const payloads = (batch: readonly TAnnouncement[]): string[] => {
    const out: string[] = [];
    let chunk: TMessage[] = [];
    let size = 0;
    for (const a of batch) {
      const m = messageOf(a);
      if (!m) continue;
      const bytes = JSON.stringify(m).length;
      if (chunk.length > 0 && size + bytes > MAX_PAYLOAD) {
        out.push(JSON.stringify({ o: origin, m: chunk }));
        chunk = [];
        size = 0;
      }
      chunk.push(m);
      size += bytes;
    }
    if (chunk.length > 0) out.push(JSON.stringify({ o: origin, m: chunk }));
    return out;
  };
  const notify = (batch: readonly TAnnouncement[]) => {
    for (const payload of payloads(batch)) {
      sql`select pg_notify(${PEER_CHANNEL}, ${payload})`.catch((error: unknown) => log.warn({ err: error }, "NOTIFY failed; peers will catch up by polling"));
    }
  };
  const receive = (m: TMessage) => {
    if (m.k === "f") local.deliverHint?.({ hint: true, responseId: m.r, sequence: m.s });
    else if (m.k === "w") local.publishWake(m.r, m.why);
    else if (m.k === "i") local.publishInbox(m.c);
    else if (m.k === "q") local.publishQuestion(m.c);
    else if (m.k === "c") local.publishCredentials(m.c);
  };
  const listening = await sql.listen(
    PEER_CHANNEL,
    (payload) => {
      let parsed: { o?: string; m?: TMessage[] };
      try {
        parsed = JSON.parse(payload) as typeof parsed;
      } catch {
        return;
      }
      if (parsed.o === origin || !Array.isArray(parsed.m)) return;
      for (const m of parsed.m) receive(m);
    },
    () => log.debug("listening for replica notifications"),
  );
  const publish = (a: TAnnouncement) => {
    local.deliverLocally([a]);
    notify([a]);
  };
  return {
    ...local,
    pollMs: 2000,
    publishFrames: (responseId, frames) => publish({ k: "frames", responseId, frames }),
    publishWake: (responseId, reason) => publish({ k: "wake", responseId, reason }),
    publishInbox: (change) => publish({ k: "inbox", change }),
    publishQuestion: (change) => publish({ k: "question", change }),
    publishCredentials: (change) => publish({ k: "credentials", change }),
    peerPayloads: payloads,
    close: async () => {
      await listening.unlisten().catch(() => {});
    },
  };
}
