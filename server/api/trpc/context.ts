import type { IncomingMessage } from "node:http";
import type { TCredential } from "../../auth/credential-status";
import type { TActor } from "../../core/actor";
import type { TAdminOrigin } from "../../core/admin-trail";
import { clientAddress, NO_TRUSTED_PROXIES } from "../shared/client-address";
import type { DomainError } from "../../core/errors";
import { answerLinkActor } from "../shared/answer-grant";
import { toDomainError } from "../shared/errors";
import { identify } from "../shared/identify";
import type { TTransportDeps } from "../shared/deps";
import { toTrpcError } from "./errors";

/**
 * `credential`: what the caller was admitted with, re-checked while a subscription streams.
 * `answerLink`: who the request's answer-link cookie for that one question stands for, if any
 * (server/api/shared/answer-grant.ts); only the procedures of that question ask.
 */
export type TTrpcContext = {
  deps: TTransportDeps;
  actor: TActor | null;
  credential: TCredential | null;
  answerLink?: (questionId: string) => Promise<TActor | null>;
  /** Where the call came from, for the admin trail (the console channel and the client address). */
  origin?: TAdminOrigin;
};

/**
 * Builds the context of one tRPC call; tests pass an actor directly. `refusedBody`: why the
 * request's body was refused while reading it (e.g. not UTF-8), answered as the call's error.
 */
export async function createContext(deps: TTransportDeps, req: IncomingMessage, refusedBody?: DomainError): Promise<TTrpcContext> {
  if (refusedBody) throw toTrpcError(refusedBody);
  try {
    const identity = await identify(deps, deps.auth, req, new URL(req.url ?? "/", "http://localhost"));
    const answerLink = (questionId: string) => answerLinkActor(deps, req, questionId);
    const origin: TAdminOrigin = { channel: "console", clientIp: clientAddress(req, deps.trustedProxies ?? NO_TRUSTED_PROXIES) };
    return { deps, actor: identity?.actor ?? null, credential: identity?.credential ?? null, answerLink, origin };
  } catch (error) {
    // A refused cross-site cookie mutation (403) or an unreachable database (503), not a 500.
    throw toTrpcError(toDomainError(error));
  }
}
