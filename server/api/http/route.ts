import type { IncomingMessage, ServerResponse } from "node:http";
import type { z } from "zod";
import type { TCredential } from "../../auth/credential-status";
import type { TActor } from "../../core/actor";
import { DomainError } from "../../core/errors";
import type { TTransportDeps } from "../shared/deps";
import { identify } from "../shared/identify";
import { assertStorableText } from "../shared/request-body";
import { parseBody, readJson } from "./body";
import { sendError } from "./errors";
import type { TDocumentedRoute, TOperationDoc } from "./openapi";

/*
 * The `/v1` route kit: a route is a small definition (method, path template, authentication,
 * body schema, API docs, a named handler); authentication and body validation are middleware
 * composed in front of the handler; the route table (server/api/http/v1.ts) and the OpenAPI
 * document are built from the same definitions.
 */

/** What every step of a route is given: the dependencies, the request and its answer. */
export type TRequestCtx = { deps: TTransportDeps; req: IncomingMessage; res: ServerResponse; url: URL };

/** Who called an authenticated route, and the credential they came with (long-lived answers re-check it). */
export type TCaller = { actor: TActor; credential: TCredential };

/** The `{name}` segments of a path template, e.g. `"id" | "attachmentId"`. */
export type TParamNames<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | TParamNames<Rest> : never;

/** `true`: an API key or console session (401 without one); `false`: public; `"self"`: the handler checks a credential of its own (documented as authenticated). */
export type TAuthMode = boolean | "self";

/** A JSON body read and validated before the handler runs; `required: false`: an absent body is `{}`. */
export type TBodySpec<S extends z.ZodType = z.ZodType> = { schema: S; required: boolean; read: (ctx: TRequestCtx) => Promise<unknown> };

/** The handler's context of a public route (or one that checks its own credential). */
export type TPublicCtx<Params extends string = never> = TRequestCtx & { params: Record<Params, string> };

/** The handler's context of an authenticated route: its path's `{Params}`, the caller, the body `Body` validated. */
export type TAuthedCtx<Params extends string = never, Body extends z.ZodType | undefined = undefined> = TPublicCtx<Params> & TCaller & (Body extends z.ZodType ? { body: z.output<Body> } : unknown);

type TSchemaOf<B> = B extends TBodySpec<infer S> ? S : undefined;

/** The context a definition's handler gets, from its path, authentication and body. */
export type TRouteCtx<P extends string, A extends TAuthMode, B extends TBodySpec | undefined> = A extends true
  ? TAuthedCtx<TParamNames<P>, TSchemaOf<B>>
  : TPublicCtx<TParamNames<P>> & (B extends TBodySpec<infer S> ? { body: z.output<S> } : unknown);

/** What the steps see while the context is being built. */
type TStepCtx = TRequestCtx & { params: Record<string, string>; actor?: TActor; credential?: TCredential; body?: unknown };

/** One step in front of a handler: it may refuse (throw), add to the context, then goes on with `next`. */
export type TMiddleware = (ctx: TStepCtx, next: () => Promise<void>) => Promise<void>;

/** The operation's docs next to its route; `path` is the route's, `body` (with its `bodyRequired`) the route's body schema when it has one. */
export type TRouteDoc = Omit<TOperationDoc, "path">;

/** One route as the table holds it. */
export type TRoute = TDocumentedRoute & {
  /** The path template, e.g. `/v1/approvals/{id}`. */
  readonly path: string;
  /** The template compiled: `{name}` is one non-empty path segment. */
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
  /** Runs the middleware, then the handler (params already decoded). */
  readonly run: (ctx: TRequestCtx & { params: Record<string, string> }) => Promise<void>;
};

/** `/v1/responses/{id}` → `^\/v1\/responses\/([^/]+)$` and its parameter names. */
export function compilePath(path: string): { pattern: RegExp; paramNames: string[] } {
  const paramNames: string[] = [];
  const source = path
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const name = part.match(/^\{([^}]+)\}$/)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
      paramNames.push(name);
      return "([^/]+)";
    })
    .join("");
  return { pattern: new RegExp(`^${source}$`), paramNames };
}

/** Authentication: 401 unless the request carries a working API key (header or `access_token`) or console session; the caller is on the context from here on. */
export const authenticate: TMiddleware = async (ctx, next) => {
  const identity = await identify(ctx.deps, ctx.deps.auth, ctx.req, ctx.url);
  if (!identity) throw new DomainError("unauthenticated", "Authentication required");
  ctx.actor = identity.actor;
  ctx.credential = identity.credential;
  await next();
};

/** Body validation: reads the body as the spec says (415, 413, 400 for what is not JSON) and parses it with its schema (400 naming what is wrong). */
export const validateBody =
  (spec: TBodySpec): TMiddleware =>
  async (ctx, next) => {
    ctx.body = parseBody(spec.schema, await spec.read(ctx));
    await next();
  };

/** Only an API key (`Authorization: Bearer`) admits the caller; a console cookie is refused with 401. Goes after `authenticate`. */
export const requireApiKey =
  (route: string): TMiddleware =>
  async (ctx, next) => {
    if (ctx.credential?.via !== "api_key") throw new DomainError("unauthenticated", `${route} takes an API key (Authorization: Bearer).`);
    await next();
  };

const hasBody = (req: IncomingMessage): boolean => Number(req.headers["content-length"] ?? 0) > 0 || Boolean(req.headers["transfer-encoding"]);

/**
 * A JSON body validated with `schema`: read with `readJson` (1 MiB) unless `read` says otherwise;
 * `optional`: a request without a body (no length, no chunks) is validated as `{}`.
 */
export function jsonBody<S extends z.ZodType>(schema: S, options: { optional?: boolean; read?: (ctx: TRequestCtx) => Promise<unknown> } = {}): TBodySpec<S> {
  const read = options.read ?? ((ctx: TRequestCtx) => readJson(ctx.req));
  return { schema, required: !options.optional, read: options.optional ? (ctx) => (hasBody(ctx.req) ? read(ctx) : Promise.resolve({})) : read };
}

/**
 * One route: authentication (`auth: true`) and body validation (`body`) run as middleware before
 * `use` and the handler, which gets typed `params`, caller and `body`. A single `docs` entry is
 * completed with the route's path and body schema; several (one route serving several documented
 * operations) name their own.
 */
export function defineRoute<const P extends string, const A extends TAuthMode, B extends TBodySpec | undefined = undefined>(def: {
  method: "GET" | "POST" | "DELETE";
  path: P;
  auth: A;
  body?: B;
  use?: readonly TMiddleware[];
  docs: TRouteDoc | readonly TOperationDoc[];
  handle: (ctx: TRouteCtx<P, A, B>) => Promise<void>;
}): TRoute {
  const { pattern, paramNames } = compilePath(def.path);
  const spec = def.body as TBodySpec | undefined;
  const steps: TMiddleware[] = [...(def.auth === true ? [authenticate] : []), ...(spec ? [validateBody(spec)] : []), ...(def.use ?? [])];
  const docs: readonly TOperationDoc[] = isDocList(def.docs) ? def.docs : [{ ...def.docs, path: def.path, ...(spec ? { body: spec.schema, ...(spec.required ? {} : { bodyRequired: false }) } : {}) }];
  const handle = def.handle as (ctx: TStepCtx) => Promise<void>;
  const run = (ctx: TStepCtx): Promise<void> => {
    const at = (i: number): Promise<void> => (i === steps.length ? handle(ctx) : (steps[i] as TMiddleware)(ctx, () => at(i + 1)));
    return at(0);
  };
  return { method: def.method, auth: def.auth, docs, path: def.path, pattern, paramNames, run };
}

const isDocList = (docs: TRouteDoc | readonly TOperationDoc[]): docs is readonly TOperationDoc[] => Array.isArray(docs);

/** A path segment as the client meant it; a broken percent-escape is a bad request, not a 500. */
function decodePathParam(segment: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    throw new DomainError("invalid_request", "The URL path is not validly percent-encoded.");
  }
  assertStorableText(decoded, "The URL path");
  return decoded;
}

/**
 * Serves a route table: 404 for a path no route has, 405 for a method the path's routes lack,
 * 400 for a path or query a database could not store; errors become `{"detail","code"}` with the
 * contract's status (after the answer started: the response ends).
 */
export function serveRoutes(routes: readonly TRoute[]): (deps: TTransportDeps, req: IncomingMessage, res: ServerResponse, url: URL) => Promise<void> {
  return async (deps, req, res, url) => {
    try {
      const candidates = routes.filter((r) => r.pattern.test(url.pathname));
      if (candidates.length === 0) throw new DomainError("not_found", `There is no route ${url.pathname}.`);
      const route = candidates.find((r) => r.method === req.method);
      if (!route) throw new DomainError("method_not_allowed", `${req.method} is not allowed on ${url.pathname}.`);
      const values = (route.pattern.exec(url.pathname) ?? []).slice(1).map(decodePathParam);
      const params = Object.fromEntries(route.paramNames.map((name, i) => [name, values[i] as string]));
      for (const value of url.searchParams.values()) assertStorableText(value, "The query string");
      await route.run({ deps, req, res, url, params });
    } catch (error) {
      if (!(error instanceof DomainError)) deps.log.error({ err: error, path: url.pathname }, "unhandled /v1 error");
      if (!res.headersSent) sendError(res, error);
      else res.end();
    }
  };
}
