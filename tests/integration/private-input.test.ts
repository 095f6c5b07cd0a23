import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { clientToolRequests, paymentCards } from "../../db/schema";
import { loadSecretKey, secretSealer } from "../../server/host/secret-store";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { readPaymentCard } from "../../server/tools/payment-cards";
import { expectError, getResponse, LiveClient, ok200, readSse, rows, script, type TBody } from "./helpers";

let app: TTestApp;
let member: TTestUser;

beforeAll(async () => {
  app = await startTestApp();
  member = await app.user("member");
});
afterAll(async () => {
  await app?.close();
});

const CARD = { number: "4111111111111111", expiry: "12/29", name: "Ada Lovelace" };
const cardScript = script([{ text: "Let me take your card. ", toolCalls: [{ name: "collect_card_details" }] }, { text: "Card saved." }]);

/** Every table of the public schema whose rows, as text, contain `needle`. */
async function tablesContaining(needle: string): Promise<string[]> {
  const tables = await rows<{ table_name: string }>(
    app,
    "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name",
  );
  expect(tables.length).toBeGreaterThanOrEqual(10);
  const hits: string[] = [];
  for (const { table_name } of tables) {
    const found = await rows<{ n: number | string }>(app, `select count(*) as n from "${table_name}" t where t::text like '%${needle}%'`);
    if (Number(found[0]?.n ?? 0) > 0) hits.push(table_name);
  }
  return hits;
}

const submit = (id: string, output: unknown) => app.api(`/v1/client-tools/${id}`, { key: member.apiKey, body: { output } });

describe(`rule 6: private client input reaches only the application handler, sealed (${testDbKind()})`, () => {
  let first: TBody;
  let done: TBody;

  it("asks with privateInput and inputSchema; a bad expiry is 422 and the request stays pending", async () => {
    const res = await app.api("/v1/responses", { key: member.apiKey, body: { input: cardScript, stream: true } });
    const sse = readSse(res);
    await sse.done;
    const boundary = sse.events.at(-1)?.data as unknown as TBody & { responseId: string; type: string };
    expect(boundary.type).toBe("response.completed");
    expect(boundary.status).toBe("requires_action");
    first = { ...boundary, id: boundary.responseId };
    const action = boundary.requiredAction as { type: string; id: string; name: string; privateInput?: boolean; inputSchema?: Record<string, unknown>; arguments: unknown };
    expect(action).toMatchObject({ type: "client_tool", name: "collect_card_details", privateInput: true, arguments: {} });
    expect(action.id).toMatch(/^client_tool_[0-9a-f]{32}$/);
    expect(action.inputSchema).toMatchObject({ type: "object", required: ["number", "expiry", "name"] });
    expect(sse.events.map((e) => e.event)).toEqual(["response.created", "response.text.delta", "response.tool_call", "client_tool.requested", "response.completed"]);

    const bad = await expectError(await submit(action.id, { ...CARD, expiry: "13/29" }), 422, "validation_failed");
    expect(bad.detail).toMatch(/expiry/);
    expect(bad.detail).not.toContain(CARD.number);
    await expectError(await submit(action.id, { number: "41", expiry: "12/29", name: "x" }), 422, "validation_failed");
    await expectError(await submit(action.id, { expiry: "12/29", name: "x" }), 422, "validation_failed");

    const still = await ok200(await getResponse(app, member.apiKey, first.id, first.sessionId));
    expect(still.status).toBe("requires_action");
    expect(still.requiredAction?.id).toBe(action.id);
    const [request] = await app.deps.db.select().from(clientToolRequests).where(eq(clientToolRequests.id, action.id));
    expect(request?.status).toBe("pending");
    expect(await app.deps.db.select().from(paymentCards)).toHaveLength(0);
  });

  it("a valid submission resumes; the model sees only {cardOnFile, last4}", async () => {
    const requestId = first.requiredAction?.id as string;
    done = await ok200(await submit(requestId, CARD));
    expect(done).toMatchObject({ id: first.id, status: "completed", clientToolId: requestId, outputText: "Let me take your card. Card saved." });
    const results = done.output.filter((i) => i.type === "tool_result");
    expect(results).toEqual([{ type: "tool_result", callId: "call_0_0", name: "collect_card_details", output: { cardOnFile: true, last4: "1111" } }]);
    const cards = await app.deps.db.select().from(paymentCards);
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ userId: member.userId, sessionId: first.sessionId, last4: "1111" });
    expect(Object.keys(cards[0] ?? {}).sort()).toEqual(["createdAt", "id", "last4", "sealed", "sessionId", "userId"]);
    await expectError(await submit(requestId, CARD), 409, "already_submitted");
  });

  it("the application handler reads the whole card back with the secret key, and only with it", async () => {
    const [card] = await app.deps.db.select().from(paymentCards);
    expect(card?.sealed).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(await readPaymentCard(app.deps.db, secretSealer(app.deps.secretKey), card?.id as string)).toEqual(CARD);
    expect(await readPaymentCard(app.deps.db, secretSealer(app.deps.secretKey), "card_missing")).toBeNull();
    const otherKey = loadSecretKey(app.dataDir, Buffer.alloc(32, 7).toString("base64"));
    await expect(readPaymentCard(app.deps.db, secretSealer(otherKey), card?.id as string)).rejects.toThrow();
  });

  it("the card number, expiry and name are in no table in plain text, and never streamed", async () => {
    expect(await tablesContaining(CARD.number)).toEqual([]);
    expect(await tablesContaining(CARD.name)).toEqual([]);
    expect(await tablesContaining(CARD.expiry)).toEqual([]);

    const replay = readSse(await app.api(`/v1/responses/${first.id}/events?sessionId=${first.sessionId}`, { key: member.apiKey }));
    await replay.done;
    expect(replay.events.at(-1)?.data.status).toBe("completed");
    expect(replay.raw()).toContain("1111");
    expect(replay.raw()).not.toContain(CARD.number);
    expect(replay.raw()).not.toContain(CARD.name);
    expect(app.logs()).not.toContain(CARD.number);
  });

  it("over /v1/live the private input stays out of every frame too", async () => {
    const live = await LiveClient.open(app, member.apiKey);
    try {
      live.send({ type: "response.create", input: cardScript, requestId: "card-1" });
      const requested = await live.waitFor((f) => f.type === "client_tool.requested");
      const clientTool = requested.clientTool as { id: string; privateInput: boolean; inputSchema: unknown };
      expect(clientTool.privateInput).toBe(true);
      live.send({ type: "client_tool.result", requestId: clientTool.id, output: { ...CARD, number: "5500000000000004" } });
      const completed = await live.waitFor((f) => f.type === "response.completed" && f.status === "completed");
      expect(completed.output).toContainEqual({ type: "tool_result", callId: "call_0_0", name: "collect_card_details", output: { cardOnFile: true, last4: "0004" } });
      expect(JSON.stringify(live.frames)).not.toContain("5500000000000004");
      expect(await tablesContaining("5500000000000004")).toEqual([]);
      const [card] = await rows<{ id: string }>(app, `select id from payment_cards where session_id = '${live.sessionId}'`);
      expect(await readPaymentCard(app.deps.db, secretSealer(app.deps.secretKey), card?.id as string)).toEqual({ ...CARD, number: "5500000000000004" });
      expect(app.logs()).not.toContain("5500000000000004");
    } finally {
      live.close();
    }
  });
});
