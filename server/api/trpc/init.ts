import { initTRPC, TRPCError } from "@trpc/server";
import { invalidFieldReason } from "../../core/error-reasons";
import { DomainError } from "../../core/errors";
import type { TAdminWho } from "../../core/admin-trail";
import { readScope } from "../../core/read-scope";
import { QuestionError } from "../../core/questions/errors";
import { describeStorableProblem, storableJsonProblem } from "../shared/request-body";
import { isDatabaseUnavailable, toDomainError } from "../shared/errors";
import type { TTrpcContext } from "./context";
import { toTrpcError } from "./errors";

/** The reason code of a schema failure of a procedure's input (tRPC's cause is the schema's error). */
function inputIssueReason(cause: unknown) {
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  return Array.isArray(issues) ? invalidFieldReason(issues) : null;
}

const t = initTRPC.context<TTrpcContext>().create({
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    data: {
      ...shape.data,
      stack: undefined,
      domainCode: error.cause instanceof DomainError ? error.cause.code : null,
      // Why, as a code the console words in the viewer's language (`detail`/message stays English).
      // An input that failed its schema is named by its field (zod's own words stay in `message`).
      serverText: error.cause instanceof DomainError ? error.cause.serverText : error.code === "BAD_REQUEST" ? inputIssueReason(error.cause) : null,
      reason: error.cause instanceof QuestionError ? error.cause.reason : null,
      details: error.cause instanceof QuestionError ? error.cause.details : null,
    },
  }),
});

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
  // What this actor may read, decided once: every read procedure takes it, never the actor's role.
  // Who acts and from where, for the admin trail of any administrative procedure.
  const who: TAdminWho = { actor: ctx.actor, origin: ctx.origin ?? { channel: "console", clientIp: null } };
  return next({ ctx: { ...ctx, actor: ctx.actor, scope: readScope(ctx.actor), who } });
});
