import type { Logger } from "pino";
import type postgres from "postgres";
import { newId } from "../core/ids";
import { createLocalBus, type EventBus } from "./bus";

const CHANNEL = "countersign";

type TMessage =
  | { k: "f"; o: string; r: string; s: number }
  | { k: "w"; o: string; r: string; why: "resume" | "cancel" }
  | { k: "i"; o: string; c: Parameters<EventBus["publishInbox"]>[0] }
  | { k: "q"; o: string; c: Parameters<EventBus["publishQuestion"]>[0] }
  | { k: "c"; o: string; c: Parameters<EventBus["publishCredentials"]>[0] };

/**
 * The bus for replicas on one PostgreSQL: local delivery as in one process, plus one small
 * NOTIFY per state change (never per event; state is read from the tables) to the others.
 */
export async function createPgBus(sql: postgres.Sql, log: Logger): Promise<EventBus & { close: () => Promise<void> }> {
  const local = createLocalBus();
  const origin = newId("replica");
  const notify = (message: TMessage) => {
    sql`select pg_notify(${CHANNEL}, ${JSON.stringify(message)})`.catch((error: unknown) => log.warn({ err: error }, "NOTIFY failed; peers will catch up by polling"));
  };
  const listening = await sql.listen(
    CHANNEL,
    (payload) => {
      let message: TMessage;
      try {
        message = JSON.parse(payload) as TMessage;
      } catch {
        return;
      }
      if (message.o === origin) return;
      if (message.k === "f") local.deliverHint?.({ hint: true, responseId: message.r, sequence: message.s });
      else if (message.k === "w") local.publishWake(message.r, message.why);
      else if (message.k === "i") local.publishInbox(message.c);
      else if (message.k === "q") local.publishQuestion(message.c);
      else if (message.k === "c") local.publishCredentials(message.c);
    },
    () => log.debug("listening for replica notifications"),
  );
  return {
    ...local,
    pollMs: 2000,
    publishFrames: (responseId, frames) => {
      local.publishFrames(responseId, frames);
      const last = frames[frames.length - 1];
      if (last) notify({ k: "f", o: origin, r: responseId, s: last.sequence });
    },
    publishWake: (responseId, why) => {
      local.publishWake(responseId, why);
      notify({ k: "w", o: origin, r: responseId, why });
    },
    publishInbox: (change) => {
      local.publishInbox(change);
      notify({ k: "i", o: origin, c: change });
    },
    publishQuestion: (change) => {
      local.publishQuestion(change);
      notify({ k: "q", o: origin, c: change });
    },
    publishCredentials: (change) => {
      local.publishCredentials(change);
      notify({ k: "c", o: origin, c: change });
    },
    close: async () => {
      await listening.unlisten().catch(() => {});
    },
  };
}
