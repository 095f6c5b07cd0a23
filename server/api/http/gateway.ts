import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import { z as zod } from "zod";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import { QuestionError } from "../../core/questions/errors";
import { ZQuestionRecord } from "../../core/questions/record";
import { ZAnswers } from "../../core/questions/schema";
import type { TRunDeps } from "../../host/deps";
import { getQuestion, listQuestions } from "../../services/questions/list-questions";
import { requestQuestion, ZRequestParams } from "../../services/questions/request-question";
import { resolveQuestion, ZResolveParams } from "../../services/questions/resolve-question";
import { waitAnswer, ZWaitParams } from "../../services/questions/wait-answer";
import { describeIssues, readJson } from "./body";
import { HTTP_STATUS, toDomainError } from "../shared/errors";
import { sendJson } from "../shared/respond";

const ZIdOnly = zod.strictObject({ id: zod.string().min(1) });
const ZEmpty = zod.strictObject({});

const ZRequested = zod.object({ id: zod.string(), expiresAtMs: zod.number().int() });
const ZWaitResult = zod.discriminatedUnion("status", [
  zod.object({ status: zod.literal("pending") }),
  zod.object({ status: zod.literal("answered"), answers: ZAnswers, resolutionId: zod.string().optional() }),
  zod.object({ status: zod.literal("cancelled") }),
  zod.object({ status: zod.literal("expired") }),
]);
const ZResolveResult = zod.discriminatedUnion("status", [zod.object({ status: zod.literal("answered"), answers: ZAnswers }), zod.object({ status: zod.literal("cancelled") })]);

/** `{"ok":false,"error":{...}}`: how a Gateway method fails (400 / 503). */
export const ZGatewayError = zod.object({
  ok: zod.literal(false),
  error: zod.object({ code: zod.string(), message: zod.string(), details: zod.looseObject({ reason: zod.string() }) }),
});

type TMethod = { summary: string; schema: z.ZodType; payload: z.ZodType; run: (deps: TRunDeps, actor: TActor, params: never) => Promise<unknown> };

/** A method whose result must fit the payload schema the API document shows. */
const method = <S extends z.ZodType, P extends z.ZodType>(summary: string, schema: S, payload: P, run: (deps: TRunDeps, actor: TActor, params: z.infer<S>) => Promise<z.input<P>>): TMethod => ({
  summary,
  schema,
  payload,
  run: run as TMethod["run"],
});

/** The Gateway question methods; the same services back the tRPC `question.*` procedures. */
export const GATEWAY_METHODS: Record<string, TMethod> = {
  "question.request": method("Ask a person 1 to 3 questions", ZRequestParams, ZRequested, (deps, actor, p) => requestQuestion(deps, actor, p, "http")),
  "question.waitAnswer": method("Wait for a question's answer (long poll)", ZWaitParams, ZWaitResult, (deps, actor, p) => waitAnswer(deps, actor, p)),
  "question.resolve": method("Answer or cancel a question", ZResolveParams, ZResolveResult, (deps, actor, p) => resolveQuestion(deps, actor, { ...p, via: "http" })),
  "question.get": method("Read one question", ZIdOnly, zod.object({ question: ZQuestionRecord }), async (deps, actor, p) => ({ question: await getQuestion(deps, actor, p.id) })),
  "question.list": method("List the pending questions the caller may see", ZEmpty, zod.object({ questions: zod.array(ZQuestionRecord) }), async (deps, actor) => ({ questions: await listQuestions(deps, actor) })),
};

function sendGatewayError(res: ServerResponse, error: unknown): void {
  if (error instanceof QuestionError) {
    const status = error.reason === "UNAVAILABLE" ? 503 : 400;
    sendJson(res, status, { ok: false, error: { code: status === 503 ? "UNAVAILABLE" : "INVALID_REQUEST", message: error.message, details: { reason: error.reason, ...error.details } } });
    return;
  }
  const domain = toDomainError(error);
  if (domain.code === "internal" || domain.code === "capacity") {
    sendJson(res, 503, { ok: false, error: { code: "UNAVAILABLE", message: "The question store is unavailable; try again.", details: { reason: "UNAVAILABLE" } } });
    return;
  }
  const status = HTTP_STATUS[domain.code];
  const reason = status === 400 || status === 413 || status === 415 ? "INVALID_PARAMS" : domain.code.toUpperCase();
  sendJson(res, status, { ok: false, error: { code: status === 400 ? "INVALID_REQUEST" : domain.code.toUpperCase(), message: domain.message, details: { reason } } });
}

/** `POST /v1/gateway/{method}`: params as the JSON body; `{ok:true,payload}` or `{ok:false,error}`. */
export async function handleGateway(deps: TRunDeps, req: IncomingMessage, res: ServerResponse, actor: TActor, method: string): Promise<void> {
  // Own entries only: `constructor`, `toString`, `__proto__` ... are unknown methods, not crashes.
  const entry = Object.hasOwn(GATEWAY_METHODS, method) ? GATEWAY_METHODS[method] : undefined;
  if (!entry) throw new DomainError("not_found", `There is no gateway method ${method}.`);
  try {
    const body = await readJson(req);
    const parsed = entry.schema.safeParse(body);
    if (!parsed.success) throw new QuestionError("INVALID_PARAMS", `Invalid params: ${describeIssues(parsed.error)}.`);
    const payload = await entry.run(deps, actor, parsed.data as never);
    sendJson(res, 200, { ok: true, payload });
  } catch (error) {
    if (!(error instanceof DomainError)) deps.log.error({ err: error, method }, "gateway method failed");
    sendGatewayError(res, error);
  }
}
