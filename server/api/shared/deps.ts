import type { TSignInConfig } from "../../auth/sso-config";
import type { ApiKeyCache } from "../../auth/api-key-cache";
import type { TAuth } from "../../auth/auth";
import type { TDeps } from "../../host/deps";
import type { ActivityTail } from "../../services/console/activity-feed";
import type { Host } from "../../host/host";
import type { TTrustedProxies } from "../../config";
import type { DrainGate } from "./drain-gate";
import type { TLoadedPlugin } from "../../plugins/loader";
import type { OpenConnections } from "./open-connections";

/** What the transports (`/v1`, `/v1/live`, AG-UI, export, control, tRPC) are given: the process-wide dependencies plus host, auth, connection caps, the API-key cache and the one reader of the console's activity. */
export type TTransportDeps = TDeps & {
  host: Host;
  auth: TAuth;
  connections: OpenConnections;
  keys: ApiKeyCache;
  activity: ActivityTail;
  /** Graceful shutdown's front door (server/api/shared/drain-gate.ts). */
  drain: DrainGate;
  /** The harness plugins loaded at boot (the Admin page lists them). */
  plugins: readonly TLoadedPlugin[];
  ops: TOpsConfig;
  /** Whose `X-Forwarded-For` is believed when the admin trail records a client address. */
  trustedProxies?: TTrustedProxies;
  /** COUNTERSIGN_PUBLIC_URL: behind a proxy, its origin is this server's for the same-origin rule (server/api/shared/same-origin.ts). */
  publicUrl?: string;
  /** How people sign in to the console: single sign-on (its button's name) and whether passwords are on (docs/sso.md). */
  signIn?: TSignInConfig;
};

/** Settings of the operations routes: the metrics bearer token (null: admins only) and the readiness timeout. */
export type TOpsConfig = { metricsToken: string | null; readyTimeoutMs: number };
