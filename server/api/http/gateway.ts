import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import { QuestionError } from "../../core/questions/errors";
import type { TRunDeps } from "../../host/deps";
import { getQuestion, listQuestions } from "../../services/questions/list-questions";
import { requestQuestion, ZRequestParams } from "../../services/questions/request-question";
import { resolveQuestion, ZResolveParams } from "../../services/questions/resolve-question";
import { waitAnswer, ZWaitParams } from "../../services/questions/wait-answer";
import { describeIssues, readJson } from "./body";
import { HTTP_STATUS, sendJson, toDomainError } from "./errors";
import { z as zod } from "zod";

const ZIdOnly = zod.strictObject({ id: zod.string().min(1).max(200) });
const ZEmpty = zod.strictObject({});

type TMethod = { schema: z.ZodType; run: (deps: TRunDeps, actor: TActor, params: never) => Promise<unknown> };

/** The Gateway question methods; the same services back the tRPC `question.*` procedures. */
export const GATEWAY_METHODS: Record<string, TMethod> = {
  "question.request": { schema: ZRequestParams, run: (deps, actor, p: z.infer<typeof ZRequestParams>) => requestQuestion(deps, actor, p, "http") },
  "question.waitAnswer": { schema: ZWaitParams, run: (deps, actor, p: z.infer<typeof ZWaitParams>) => waitAnswer(deps, actor, p) },
  "question.resolve": { schema: ZResolveParams, run: (deps, actor, p: z.infer<typeof ZResolveParams>) => resolveQuestion(deps, actor, { ...p, via: "http" }) },
  "question.get": { schema: ZIdOnly, run: async (deps, actor, p: { id: string }) => ({ question: await getQuestion(deps, actor, p.id) }) },
  "question.list": { schema: ZEmpty, run: async (deps, actor) => ({ questions: await listQuestions(deps, actor) }) },
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
