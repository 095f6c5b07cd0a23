import { createTRPCClient, httpBatchLink } from "@trpc/client";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import type { TTrpcContext } from "../server/api/trpc/context";
import { publicProcedure, router } from "../server/api/trpc/init";
import { DomainError, refused } from "../server/core/errors";
import { checkedFetch, errorSentence, type TErrorAction } from "./error-sentence";

/** Procedures built with the console's own tRPC setup (its error formatter and domain-error mapping). */
const testRouter = router({
  fail: publicProcedure.input(z.strictObject({ code: z.string() })).mutation(({ input }) => {
    const messages: Record<string, string> = {
      already_decided: "This approval was already approved; a decision is used once.",
      expired: "This approval has expired; the operation was not run.",
      binding_changed: "The approval's operation changed since it was shown.",
      validation_failed: "The edited arguments are not valid for exec: command must not be empty.",
      rate_limited: "Too many requests.",
      forbidden: "Your role cannot decide approvals.",
      internal: "boom",
    };
    if (input.code === "name_taken") throw refused("conflict", { code: "nameTaken", params: { name: "ＡＤＡ" } });
    throw new DomainError(input.code as "internal", messages[input.code] ?? "x");
  }),
  link: publicProcedure.input(z.strictObject({ token: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "This link is malformed; open the console and sign in instead.") })).query(() => "ok"),
});

const serverFetch: typeof fetch = (input, init) =>
  fetchRequestHandler({ endpoint: "/api/trpc", req: new Request(input as string, init), router: testRouter, createContext: () => ({}) as TTrpcContext });

/** A tRPC client exactly as the console builds it, over a `fetch` that answers as told. */
const clientOver = (answer: typeof fetch) =>
  createTRPCClient<typeof testRouter>({ links: [httpBatchLink({ url: "http://console.test/api/trpc", fetch: checkedFetch(answer) })] });

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("the call did not fail");
}

const decideFailure = (code: string) => failure(clientOver(serverFetch).fail.mutate({ code }));

/** No sentence may show JSON, HTML, a status line alone or a parser's complaint. */
function expectSentence(text: string): void {
  expect(text).toMatch(/^[A-Z].*[.!?]$/s);
  expect(text).not.toMatch(/[{}[\]<>]|Unexpected token|JSON|Failed to fetch|undefined|null/);
}

describe("error sentences for decision and answer surfaces", () => {
  test("a proxy's HTML error page names the proxy, the status and what to do", async () => {
    const html: typeof fetch = async () => new Response("<html><body><h1>502 Bad Gateway</h1></body></html>", { status: 502, headers: { "content-type": "text/html" } });
    const text = errorSentence(await failure(clientOver(html).fail.mutate({ code: "x" })), "decide");
    expectSentence(text);
    expect(text).toContain("proxy or gateway");
    expect(text).toContain("HTTP 502");
    expect(text).toContain("Your decision may not have arrived: reload the page");
  });

  test("a dropped connection says the decision may or may not have arrived", async () => {
    const dropped: typeof fetch = async () => {
      throw new TypeError("Failed to fetch");
    };
    const text = errorSentence(await failure(clientOver(dropped).fail.mutate({ code: "x" })), "decide");
    expectSentence(text);
    expect(text).toContain("connection to Countersign dropped");
    expect(text).toContain("not known whether your decision arrived");
    const load = errorSentence(await failure(clientOver(dropped).link.query({ token: "x".repeat(43) })), "load");
    expect(load).toBe("Countersign could not be reached: the connection dropped. Check your network connection, then reload the page.");
  });

  test("a cancelled call is not turned into a dropped connection", async () => {
    const aborted: typeof fetch = async () => {
      throw new DOMException("The operation was aborted.", "AbortError");
    };
    await expect(checkedFetch(aborted)("http://x")).rejects.toMatchObject({ name: "AbortError" });
  });

  test("409s keep the server's sentence and say what it means for the person", async () => {
    const decided = errorSentence(await decideFailure("already_decided"), "decide");
    expect(decided).toBe("This approval was already approved; a decision is used once. Your decision was not used.");
    expect(errorSentence(await decideFailure("expired"), "link")).toBe("This approval has expired; the operation was not run. Nothing is left to decide.");
    const changed = errorSentence(await decideFailure("binding_changed"), "decide");
    expect(changed).toContain("Check the request as it is now and decide again.");
    // A display name another user has: the sentence says to choose another; there is nothing to reload.
    const taken = errorSentence(await decideFailure("name_taken"), "change", undefined, (reason) => (reason as { code?: string }).code === "nameTaken" ? "Taken; choose another name." : null);
    expect(taken).toBe("Taken; choose another name.");
  });

  test("a 422 names what was refused and asks to correct it", async () => {
    const text = errorSentence(await decideFailure("validation_failed"), "decide");
    expect(text).toBe("Your decision was not accepted: the edited arguments are not valid for exec: command must not be empty. Correct it and try again.");
  });

  test("a 429 says to wait, with the server's Retry-After when there is one", async () => {
    const limited: typeof fetch = async () => new Response(JSON.stringify({ code: "rate_limited", detail: "Too many requests." }), { status: 429, headers: { "content-type": "application/json", "retry-after": "7" } });
    const text = errorSentence(await failure(clientOver(limited).fail.mutate({ code: "x" })), "answer");
    expectSentence(text);
    expect(text).toBe("Too many requests in a short time, so Countersign did not take your answer. Wait 7 seconds and try again.");
    const fromTrpc = errorSentence(await decideFailure("rate_limited"), "decide");
    expect(fromTrpc).toBe("Too many requests in a short time, so Countersign did not take your decision. Wait a few seconds and try again.");
  });

  test("a malformed link is a sentence, not zod's issues as JSON", async () => {
    const error = await failure(clientOver(serverFetch).link.query({ token: "not-a-token" }));
    expect((error as Error).message).toContain('"code": "invalid_format"');
    const text = errorSentence(error, "link");
    expectSentence(text);
    expect(text).toContain("This link is malformed");
  });

  test("a 500 never shows the server's internals; a 403 keeps the server's sentence", async () => {
    const text = errorSentence(await decideFailure("internal"), "decide");
    expect(text).toBe("Countersign could not complete this (HTTP 500). Your decision may not have arrived: reload the page to see the current state before trying again; if this keeps happening, tell your administrator.");
    expect(errorSentence(await decideFailure("forbidden"), "decide")).toBe("Your role cannot decide approvals.");
  });

  test.each<[unknown, TErrorAction]>([
    [new SyntaxError("Unexpected token '<', \"<!DOCTYPE \"... is not valid JSON"), "answer"],
    [new Error('{"error":"weird"}'), "load"],
    [new Error(""), "decide"],
    ["a string", "link"],
    [undefined, "decide"],
  ])("anything else is still a sentence (%s)", (error, action) => {
    expectSentence(errorSentence(error, action));
  });
});
