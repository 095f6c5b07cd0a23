import { initTRPC, TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/unstable-core-do-not-import";
import { DomainError, type TDomainErrorCode } from "../../core/errors";
import { QuestionError } from "../../core/questions/errors";
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
  timeout: "TIMEOUT",
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

const domainErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof DomainError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: TRPC_CODE[cause.code], message: cause.message, cause });
  }
  return result;
});

export const router = t.router;
export const publicProcedure = t.procedure.use(domainErrors);

/** Any signed-in console user (or API key holder). */
export const authenticatedProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.actor) throw new TRPCError({ code: "UNAUTHORIZED", message: "Authentication required" });
  return next({ ctx: { ...ctx, actor: ctx.actor } });
});
