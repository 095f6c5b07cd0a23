import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TTestApp } from "../../server/testing/test-app";

type TSlackBlock = { type: string; block_id?: string; text?: { type: string; text: string }; fields?: Array<{ text: string }>; elements?: Array<{ type: string; action_id: string; value?: string; url?: string; text: { text: string } }> };

/** A Block Kit message as the fake Slack received it: at the incoming webhook, or by `chat.postMessage` (then with its `channel` and `ts`). */
export type TSlackPost = { text: string; blocks?: TSlackBlock[]; channel?: string; ts?: string };

/** A `chat.update` of a posted message. */
export type TSlackUpdate = { channel: string; ts: string; text: string; blocks?: TSlackBlock[] };

/** A form opened with `views.open`. */
export type TOpenedView = { triggerId: string; view: { callback_id: string; private_metadata: string; blocks: TSlackBlock[] } };

/** What Countersign posted to an interaction's `response_url`. */
export type TResponsePost = { path: string; body: { text: string; replace_original?: boolean; response_type?: string } };

/** The texts (mrkdwn and plain) inside some Block Kit value, in order. */
const textsIn = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.flatMap(textsIn);
  if (!value || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, x]) => (key === "text" && typeof x === "string" ? [x] : typeof x === "object" ? textsIn(x) : []));
};

/** Everything a message shows, as one text (its fallback text and every block's texts). */
export const slackTextOf = (m: { text: string; blocks?: TSlackBlock[] }): string => [m.text, ...textsIn(m.blocks ?? [])].join("\n");

/**
 * A fake Slack: an incoming webhook (`/incoming`), the Web API (`/api/…`, bearer token checked):
 * `users.info` (emails from `people`), `chat.postMessage`, `chat.update` and `views.open`, and
 * `response_url`s (`/respond/<n>`). `click` and `submitView` send interactions to Countersign
 * signed exactly as Slack documents it.
 */
export async function startFakeSlack(options: { signingSecret: string; botToken: string; people: Record<string, string> }) {
  const messages: TSlackPost[] = [];
  const updates: TSlackUpdate[] = [];
  const views: TOpenedView[] = [];
  const responses: TResponsePost[] = [];
  const lookups: string[] = [];
  let tsCounter = 0;
  const holds: Array<{ resolve: (answer: () => void) => void }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const body = Buffer.concat(chunks).toString("utf8");
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(value));
      };
      if (url.pathname === "/incoming") {
        messages.push(JSON.parse(body) as TSlackPost);
        return json(200, { ok: true });
      }
      if (url.pathname.startsWith("/api/") && req.headers.authorization !== `Bearer ${options.botToken}`) return json(200, { ok: false, error: "invalid_auth" });
      if (url.pathname === "/api/chat.postMessage") {
        const message = JSON.parse(body) as TSlackPost;
        const ts = `1700000000.${String(++tsCounter).padStart(6, "0")}`;
        messages.push({ ...message, ts });
        const answer = () => json(200, { ok: true, channel: message.channel, ts });
        const hold = holds.shift();
        // A held post is received (and shown) now, answered only when the test releases it.
        if (hold) hold.resolve(answer);
        else answer();
        return;
      }
      if (url.pathname === "/api/chat.update") {
        const update = JSON.parse(body) as TSlackUpdate;
        if (!messages.some((m) => m.channel === update.channel && m.ts === update.ts)) return json(200, { ok: false, error: "message_not_found" });
        updates.push(update);
        return json(200, { ok: true, channel: update.channel, ts: update.ts });
      }
      if (url.pathname === "/api/views.open") {
        const opened = JSON.parse(body) as { trigger_id: string; view: TOpenedView["view"] };
        views.push({ triggerId: opened.trigger_id, view: opened.view });
        return json(200, { ok: true, view: { id: `V${views.length}` } });
      }
      if (url.pathname === "/api/users.info") {
        const id = url.searchParams.get("user") ?? "";
        lookups.push(id);
        const email = options.people[id];
        return json(200, email ? { ok: true, user: { id, profile: { email } } } : { ok: false, error: "user_not_found" });
      }
      if (url.pathname.startsWith("/respond/")) {
        responses.push({ path: url.pathname, body: JSON.parse(body) as TResponsePost["body"] });
        return json(200, { ok: true });
      }
      json(404, { ok: false });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let responseCounter = 0;

  /** Sends an interaction payload to Countersign, signed as Slack does; `secret`, `timestamp` and the body can be wrong on purpose. */
  const send = async (app: TTestApp, payload: Record<string, unknown>, input: { secret?: string; timestamp?: number; tamper?: (body: string) => string }) => {
    const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
    // Exactly as Slack documents it, written out here rather than borrowed from the server.
    const signature = `v0=${createHmac("sha256", input.secret ?? options.signingSecret).update(`v0:${timestamp}:${raw}`).digest("hex")}`;
    return fetch(`${app.url}/v1/slack/interactions`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp, "x-slack-signature": signature },
      body: input.tamper ? input.tamper(raw) : raw,
    });
  };

  /** Sends a button click (`block_actions`) as Slack would. */
  const click = async (
    app: TTestApp,
    input: { slackUser: string; actionId: string; value: string; secret?: string; timestamp?: number; tamper?: (body: string) => string },
  ): Promise<{ status: number; body: Record<string, unknown>; responseUrl: string; triggerId: string }> => {
    const responseUrl = `${base}/respond/${++responseCounter}`;
    const triggerId = `trigger.${responseCounter}`;
    const payload = {
      type: "block_actions",
      user: { id: input.slackUser, username: "someone", team_id: "T1" },
      api_app_id: "A1",
      trigger_id: triggerId,
      container: { type: "message", message_ts: "1.2" },
      response_url: responseUrl,
      actions: [{ type: "button", action_id: input.actionId, block_id: "countersign_decide", value: input.value, action_ts: "1.3" }],
    };
    const res = await send(app, payload, input);
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, responseUrl, triggerId };
  };

  /** Submits a form Countersign opened (`view_submission`) with `text` in its field; Slack wants an empty 200 or `response_action`. */
  const submitView = async (app: TTestApp, input: { slackUser: string; view: TOpenedView["view"]; text: string | null }): Promise<{ status: number; raw: string }> => {
    const input0 = input.view.blocks.find((b) => b.type === "input") as TSlackBlock & { element: { action_id: string } };
    const payload = {
      type: "view_submission",
      user: { id: input.slackUser, username: "someone", team_id: "T1" },
      api_app_id: "A1",
      view: {
        id: "V1",
        type: "modal",
        callback_id: input.view.callback_id,
        private_metadata: input.view.private_metadata,
        state: { values: { [input0.block_id ?? ""]: { [input0.element.action_id]: { type: "plain_text_input", value: input.text } } } },
      },
    };
    const res = await send(app, payload, {});
    return { status: res.status, raw: await res.text() };
  };

  /** Holds the answer to the next chat.postMessage: `posted` resolves once it arrived, `release` answers it. */
  const holdNextPost = () => {
    let answer: (() => void) | null = null;
    const posted = new Promise<void>((resolve) => {
      holds.push({
        resolve: (a) => {
          answer = a;
          resolve();
        },
      });
    });
    return { posted, release: () => answer?.() };
  };

  return {
    url: base,
    holdNextPost,
    messages,
    updates,
    views,
    responses,
    lookups,
    click,
    submitView,
    /** What Countersign posted to one click's response_url. */
    responsesTo: (responseUrl: string) => responses.filter((r) => `${base}${r.path}` === responseUrl),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
