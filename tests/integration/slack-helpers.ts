import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TTestApp } from "../../server/testing/test-app";

/** A Block Kit message as the fake Slack's incoming webhook received it. */
export type TSlackPost = { text: string; blocks?: Array<{ type: string; block_id?: string; elements?: Array<{ type: string; action_id: string; value?: string; text: { text: string } }> }> };

/** What Countersign posted to an interaction's `response_url`. */
export type TResponsePost = { path: string; body: { text: string; replace_original?: boolean; response_type?: string } };

/**
 * A fake Slack: an incoming webhook (`/incoming`), the Web API's `users.info` (`/api/users.info`,
 * bearer token checked, emails from `people`) and `response_url`s (`/respond/<n>`). `click` sends
 * an interaction to Countersign signed exactly as Slack documents it.
 */
export async function startFakeSlack(options: { signingSecret: string; botToken: string; people: Record<string, string> }) {
  const messages: TSlackPost[] = [];
  const responses: TResponsePost[] = [];
  const lookups: string[] = [];
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
      if (url.pathname === "/api/users.info") {
        if (req.headers.authorization !== `Bearer ${options.botToken}`) return json(200, { ok: false, error: "invalid_auth" });
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

  /** Sends a button click (`block_actions`) as Slack would; `secret` and `timestamp` can be wrong on purpose. */
  const click = async (
    app: TTestApp,
    input: { slackUser: string; actionId: string; value: string; replyText?: string; secret?: string; timestamp?: number; tamper?: (body: string) => string },
  ): Promise<{ status: number; body: Record<string, unknown>; responseUrl: string }> => {
    const responseUrl = `${base}/respond/${++responseCounter}`;
    const payload = {
      type: "block_actions",
      user: { id: input.slackUser, username: "someone", team_id: "T1" },
      api_app_id: "A1",
      container: { type: "message", message_ts: "1.2" },
      response_url: responseUrl,
      actions: [{ type: "button", action_id: input.actionId, block_id: "countersign_decide", value: input.value, action_ts: "1.3" }],
      state: { values: { countersign_reply: { countersign_reply_text: { type: "plain_text_input", value: input.replyText ?? null } } } },
    };
    const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
    // Exactly as Slack documents it, written out here rather than borrowed from the server.
    const signature = `v0=${createHmac("sha256", input.secret ?? options.signingSecret).update(`v0:${timestamp}:${raw}`).digest("hex")}`;
    const res = await fetch(`${app.url}/v1/slack/interactions`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": timestamp, "x-slack-signature": signature },
      body: input.tamper ? input.tamper(raw) : raw,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, responseUrl };
  };

  return {
    url: base,
    messages,
    responses,
    lookups,
    click,
    /** What Countersign posted to one click's response_url. */
    responsesTo: (responseUrl: string) => responses.filter((r) => `${base}${r.path}` === responseUrl),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
