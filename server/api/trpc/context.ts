import type { IncomingMessage } from "node:http";
import type { TActor } from "../../core/actor";
import { identify } from "../http/identify";
import type { TV1Deps } from "../http/v1";

export type TTrpcContext = { deps: TV1Deps; actor: TActor | null };

/** Builds the context of one tRPC call; tests pass an actor directly. */
export async function createContext(deps: TV1Deps, req: IncomingMessage): Promise<TTrpcContext> {
  const identity = await identify(deps.db, deps.auth, req, new URL(req.url ?? "/", "http://localhost"));
  return { deps, actor: identity?.actor ?? null };
}
