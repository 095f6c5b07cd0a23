import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/unstable-core-do-not-import";
import { DomainError, type TDomainErrorCode } from "../../core/errors";
import { QuestionError } from "../../core/questions/errors";
import { describeStorableProblem, storableJsonProblem } from "../http/body";
import { isDatabaseUnavailable, toDomainError } from "../http/errors";
import type { TTrpcContext } from "./context";

/** The one table mapping domain error codes to tRPC codes. */
const TRPC_CODE: Record<TDomainErrorCode, TRPC_ERROR_CODE_KEY> = {
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  method_not_allowed: "METHOD_NOT_SUPPORTED",
  invalid_request: "BAD_REQUEST",
  invalid_json: "PARSE_ERROR",
  payload_too_large: "PAYLOAD_TOO_LARGE",
  unsupported_media_type: "UNSUPPORTED_MEDIA_TYPE",
  validation_failed: "UNPROCESSABLE_CONTENT",
  already_decided: "CONFLICT",
  already_submitted: "CONFLICT",
  expired: "CONFLICT",
  binding_changed: "CONFLICT",
  conflict: "CONFLICT",
  capacity: "SERVICE_UNAVAILABLE",
  rate_limited: "TOO_MANY_REQUESTS",
  too_many_streams: "TOO_MANY_REQUESTS",
  timeout: "TIMEOUT",
  request_timeout: "TIMEOUT",
  internal: "INTERNAL_SERVER_ERROR",
};

const t = initTRPC.context<TTrpcContext>().create({
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    data: {
      ...shape.data,
      stack: undefined,
      domainCode: error.cause instanceof DomainError ? error.cause.code : null,
      reason: error.cause instanceof QuestionError ? error.cause.reason : null,
      details: error.cause instanceof QuestionError ? error.cause.details : null,
    },
  }),
});

/** A DomainError (or an unreachable database) as the TRPCError with the table's code. */
export function toTrpcError(cause: DomainError): TRPCError {
  return new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
}

/** Maps errors thrown while a subscription streams (e.g. a 404 found inside the generator) like the others, not as 500s. */
async function* mapStreamErrors(stream: AsyncIterable<unknown>): AsyncGenerator<unknown> {
  try {
    yield* stream;
  } catch (error) {
    if (error instanceof DomainError) throw toTrpcError(error);
    if (isDatabaseUnavailable(error)) throw toTrpcError(toDomainError(error));
    throw error;
  }
}

const isAsyncIterable = (value: unknown): value is AsyncIterable<unknown> => typeof value === "object" && value !== null && Symbol.asyncIterator in value;

const domainErrors = t.middleware(async ({ next, type, getRawInput }) => {
  // Inputs PostgreSQL cannot store (NUL characters) or too deep to handle are a 400, not a 500 later.
  const problem = storableJsonProblem(await getRawInput().catch(() => undefined));
  if (problem) throw new TRPCError({ code: "BAD_REQUEST", message: describeStorableProblem(problem, "The input") });
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) throw toTrpcError(result.error.cause);
  if (!result.ok && result.error.code === "INTERNAL_SERVER_ERROR" && isDatabaseUnavailable(result.error.cause)) throw toTrpcError(toDomainError(result.error.cause));
  if (result.ok && type === "subscription" && isAsyncIterable(result.data)) return { ...result, data: mapStreamErrors(result.data) };
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(domainErrors);

/** Any signed-in console user (or API key holder). */
export const authenticatedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Authentication required" });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});
