import { configuredAgents, HOST_TOOL_CATALOG } from "./agents/catalog";
import { AgentRegistry } from "./agents/registry";
import { AgentsConfig } from "./agents/reload";
import { ApiKeyCache } from "./auth/api-key-cache";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import pino, { type Logger } from "pino";
import type { DbHandle } from "../db/client";
import { guardRequest, guardUpgrade, setSecurityHeaders } from "./api/http/guard";
import { RateLimiter } from "./api/http/rate-limit";
import { createLiveServer } from "./api/http/live";
import { createDeviceServer } from "./api/http/devices";
import { DeviceHub } from "./devices/hub";
import { ProcessCleanup } from "./tools/process-cleanup";
import { sendError } from "./api/http/errors";
import { isClientGone } from "./api/shared/errors";
import type { TTransportDeps } from "./api/shared/deps";
import { handleV1 } from "./api/http/v1";
import { createTrpcHandler } from "./api/trpc/handler";
import { handleExport } from "./api/http/export";
import { markConsoleLocale } from "./api/http/console-locale";
import { handleAnswerFile, isAnswerFilePath } from "./api/http/answer-files";
import { answerPathQuestionId, exchangeAnswerLink } from "./api/http/answer-link";
import { armBodyDeadline } from "./api/http/body-deadline";
import { createEmailSignIn } from "./api/http/sign-in";
import { createAuthRoute, createSsoStart } from "./api/http/sso";
import { OpenConnections } from "./api/shared/open-connections";
import { createAuth } from "./auth/auth";
import { DomainError } from "./core/errors";
import { newSecret } from "./core/ids";
import { createLocalBus } from "./host/bus";
import { Host } from "./host/host";
import { createConfiguredReviewer, type TExecReviewer } from "./reviewer";
import { createPgBus } from "./host/pg-bus";
import { ReceiptStore } from "./host/receipts";
import { createAuthorityServices } from "./services/authority-services";
import { loadSecretKey } from "./host/secret-store";
import { McpManager } from "./mcp/manager";
import { ActivityTail } from "./services/console/activity-feed";
import { lifecycleNotifier } from "./notify/lifecycle";
import { startNotifier } from "./notify/notifier";
import { detectExecSandbox, type TExecSandbox, type TSandboxChoice } from "./tools/exec-sandbox";
import { startSpawner } from "./tools/spawner";
import { recordConfigReloaded } from "./services/console/admin-trail";
import { HarnessRegistry } from "./harnesses/registry";
import { loadPlugins } from "./plugins/loader";
import { createToolResultMiddlewareRegistry } from "./core/runtime";
import { refuseUpgradeWhileDraining, refuseWhileDraining } from "./api/http/drain";
import { DrainGate } from "./api/shared/drain-gate";
import { secureDataDir } from "./host/workspace";
import { context as otelContext } from "@opentelemetry/api";
import { beginRequest, beginUpgrade } from "./api/http/access-log";
import { serveMetrics } from "./api/http/metrics";
import { createMetrics } from "./observe/metrics";
import type { TObserve } from "./observe/port";
import { createTracing } from "./observe/tracing";
import type { TServerConfig } from "./config";

export type TAppOptions = {
  db: DbHandle;
  /** What loadConfig() read from the environment (server/config/index.ts); tests build one with server/testing/test-app.ts. */
  config: TServerConfig;
  /** The server's clock for deadlines it checks itself (expiry of links, pairings, questions); tests move it forward. */
  now?: () => Date;
  /** The agents this server serves (default: the configuration's: its agents file, else the built-in ones of server/agents/catalog.ts). */
  agents?: AgentRegistry;
  /** Default: a pino logger at the configuration's LOG_LEVEL. */
  log?: Logger;
  /** The exec reviewer; default the configuration's (COUNTERSIGN_REVIEWER*, off when unset). */
  reviewer?: TExecReviewer | null;
  /** How often `WS /v1/live` pings an idle socket (default 25 s; tests shorten it). */
  livePingMs?: number;
  /** How often open connections re-check their credential without an announcement (default 30 s). */
  credentialRecheckMs?: number;
  /** Where approved commands run; default detected from the configuration's COUNTERSIGN_EXEC_SANDBOX / COUNTERSIGN_EXEC_USER (server/tools/exec-sandbox.ts). */
  sandbox?: TSandboxChoice;
  /** Next.js request handler for pages; omitted in API-only tests. */
  pages?: { handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>; upgrade?: (req: IncomingMessage, socket: import("node:stream").Duplex, head: Buffer) => Promise<void> };
};

export type TApp = {
  server: Server;
  deps: TTransportDeps;
  url: string;
  /**
   * Graceful shutdown, first half: refuses new runs and decisions (503 + Retry-After), lets the
   * attempts running here finish within `windowMs`, interrupts (and marks) what outlives it. Call
   * `close` after it.
   */
  drain: (windowMs: number) => Promise<{ finished: number; interrupted: string[] }>;
  close: () => Promise<void>;
  metricsUrl: string | null;
};

/** The auth secret: the configured one (BETTER_AUTH_SECRET), else generated once and kept in the data directory. */
function authSecret(configured: string | undefined, dataDir: string): string {
  if (configured) return configured;
  const file = join(dataDir, "auth-secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = newSecret(32);
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** The URL of a request target, or null when it does not parse. */
function parseRequestUrl(target: string | undefined): URL | null {
  try {
    return new URL(target ?? "/", "http://localhost");
  } catch {
    return null;
  }
}

/**
 * Builds the whole process from its configuration (server/config/index.ts: it reads the environment,
 * nothing here does): host, services, and one http.Server routing `/v1` (+ `WS /v1/live`),
 * `/api/trpc`, `/api/auth` and, when given, Next.js pages. Tests use it with port 0.
 */
export async function createApp(options: TAppOptions): Promise<TApp> {
  const { config } = options;
  const log = options.log ?? pino({ level: config.logLevel, redact: ["req.headers.authorization", "req.headers.cookie", "*.apiKey", "*.password"] });
  // An impossible sandbox setting, or a plugin or agent that cannot be served, stops the boot before anything listens.
  const agentsFile = options.agents ? null : config.agentsFile;
  if (agentsFile?.notify && config.notify) {
    throw new Error(`Both COUNTERSIGN_NOTIFY_CONFIG and the notify section of COUNTERSIGN_AGENTS_FILE (${agentsFile.path}) configure notifications; keep one.`);
  }
  const notifyConfig = agentsFile?.notify ?? config.notify;
  const { trustedProxies, bodyTimeoutMs, readyTimeoutMs, metricsPort, metricsToken } = config;
  const choice = options.sandbox ?? detectExecSandbox(config.execSandbox, config.execUser, undefined, config.execSandboxReuse);
  secureDataDir(config.dataDir);
  (choice.mode === "bwrap" ? log.info : log.warn).call(log, { sandbox: choice.mode }, `approved commands run in sandbox mode "${choice.mode}": ${choice.reason}`);
  // Enabled plugins register their harnesses, agents and middleware before anything starts; a refused plugin stops the boot.
  const agents = options.agents ?? (agentsFile ? new AgentRegistry(agentsFile.agents, agentsFile.defaultAgent) : new AgentRegistry(configuredAgents(config.environment)));
  const harnesses = new HarnessRegistry();
  const middleware = createToolResultMiddlewareRegistry();
  const plugins = await loadPlugins(config.plugins, { harnesses, agents, middleware, tools: HOST_TOOL_CATALOG, log });
  // An agent of the agents file may name a plugin's harness: it must be loaded now (and native when it has native tools).
  for (const agent of agents.list()) {
    const harness = harnesses.find(agent.harness);
    if (!harness) throw new Error(`The agent ${agent.name} runs on harness ${agent.harness}, which no enabled plugin registered (is its plugin in COUNTERSIGN_PLUGINS_FILE and enabled?).`);
    if ((agent.nativeTools?.length ?? 0) > 0 && !harness.native) throw new Error(`The agent ${agent.name} has nativeTools, but its harness ${agent.harness} is not a native loop.`);
  }
  // Commands are forked by a small process of their own, not by this large one; no spawner, no boot.
  const sandbox: TExecSandbox = { ...choice, spawner: await startSpawner({ log }) };
  const server = createServer();
  // Between listen() and the routes below (auth, bus, host), answer 503 instead of leaving requests unanswered.
  const starting = (_req: IncomingMessage, res: ServerResponse) => {
    setSecurityHeaders(res, "api", config.development);
    sendError(res, new DomainError("capacity", "The server is starting; try again in a moment."));
  };
  server.on("request", starting);
  // Longer than common proxies' and clients' idle timeouts, so a reused keep-alive socket is not closed under a request.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));
  const port = (server.address() as AddressInfo).port;
  const url = config.publicUrl ?? `http://127.0.0.1:${port}`;
  // Replicas share one PostgreSQL: notifications reach the others. PGlite is one process.
  const bus = options.db.kind === "postgres" && options.db.sql ? await createPgBus(options.db.sql, log) : createLocalBus();
  // A sign-out (or any ended login session) ends the connections it opened, on every replica.
  const auth = createAuth({ db: options.db.db, secret: authSecret(config.authSecret, config.dataDir), baseURL: url, sso: config.signIn.sso, onCredentialsChanged: (userId) => bus.publishCredentials({ userId }) });
  // The process-wide dependencies, assembled here once (no module-level singletons).
  const processes = new ProcessCleanup();
  const metrics = createMetrics({ db: options.db.db, dbKind: options.db.kind, poolSize: options.db.sql?.options.max ?? 1 });
  const tracing = createTracing(config.environment);
  if (tracing.enabled) log.info("tracing: spans are exported over OTLP/HTTP");
  const observe: TObserve = { metrics: metrics.port, tracer: tracing.tracer, tracing: tracing.enabled, scrape: metrics.render };
  const base = {
    observe,
    db: options.db.db,
    dbKind: options.db.kind,
    bus,
    log,
    now: options.now ?? (() => new Date()),
    secretKey: loadSecretKey(config.dataDir, config.secretKey),
    receipts: new ReceiptStore(),
    sandbox,
    processes,
    devices: new DeviceHub({ bus, log }, processes),
    mcp: new McpManager(),
    notify: notifyConfig ? { config: notifyConfig, publicUrl: notifyConfig.publicUrl ?? url } : null,
    lifecycle: notifyConfig ? lifecycleNotifier(notifyConfig, notifyConfig.publicUrl ?? url) : null,
    agents,
    reviewer: options.reviewer === undefined ? createConfiguredReviewer({ ...config.reviewer, workspaceRoot: join(config.dataDir, "workspaces") }) : options.reviewer,
    config: {
      dataDir: config.dataDir,
      leaseMs: config.leaseMs,
      boundaryTimeoutMs: config.boundaryTimeoutMs,
      expirySweepMs: config.expirySweepMs,
      suggestMinRequests: config.suggestMinRequests,
      media: config.media,
      environment: config.environment,
    },
  };
  // Receipts published by any replica are remembered here for waiters of this process.
  bus.subscribeQuestion((change) => {
    if (change.resolutionId) base.receipts.record(change.questionId, change.resolutionId);
  });
  // Reloaded on SIGHUP (server/main.ts) and by admins (tRPC admin.reloadAgents); runs keep the policy they started with.
  const agentsConfig = new AgentsConfig(base.agents, log, agentsFile, config.environment);
  // Each successful reload is a row of the admin trail (who: the admin over tRPC, or the system for SIGHUP).
  agentsConfig.onReloaded = (event) => recordConfigReloaded(base, event.who, { source: event.path, changed: event.agents });
  const host = new Host(base, { harnesses, middleware });
  const connections = new OpenConnections(base, { maxPerUser: config.maxStreamsPerUser, recheckMs: options.credentialRecheckMs });
  const keys = new ApiKeyCache(base.db, bus);
  const deps: TTransportDeps = { ...base, agentsConfig, host, auth, connections, keys, activity: new ActivityTail(base), drain: new DrainGate(), plugins, ops: { metricsToken, readyTimeoutMs }, trustedProxies, publicUrl: config.publicUrl, signIn: config.signIn };
  // The authority capabilities (child runs, answers with receipts) act through the ordinary services.
  host.authorityServices = createAuthorityServices(deps);
  const limiter = config.rateLimit ? new RateLimiter(config.rateLimit, trustedProxies, (bucket) => metrics.port.rateLimited(bucket)) : null;
  const guard = { development: config.development, publicUrl: config.publicUrl };
  const live = createLiveServer(deps, { frames: limiter ? (req, url) => limiter.frames(req, url) : undefined, pingMs: options.livePingMs });
  const devices = createDeviceServer(deps, base.devices);
  const authRoute = createAuthRoute(auth, trustedProxies);
  const ssoStart = createSsoStart(auth, config.signIn, url);
  const emailSignIn = createEmailSignIn(deps, trustedProxies, config.signIn.passwordLogin);
  const trpc = createTrpcHandler(deps);

  server.off("request", starting);
  // Served over TLS (by a reverse proxy, docs/deployment.md): browsers are told to keep to https for a year.
  const hsts = url.startsWith("https://");
  const route = (req: IncomingMessage, res: ServerResponse) => {
    if (hsts) res.setHeader("strict-transport-security", "max-age=31536000; includeSubDomains");
    const reqUrl = parseRequestUrl(req.url);
    // A request target no URL parser accepts (e.g. `GET http://[bad/`) is a 400, never a crash.
    if (!reqUrl) {
      setSecurityHeaders(res, "api", config.development);
      return sendError(res, new DomainError("invalid_request", "The request target is not a valid URL."));
    }
    // One access log line per request (and its server span); the handler runs in the span's context.
    const requestContext = beginRequest(deps, req, res, reqUrl);
    otelContext.with(requestContext, () => handle(req, res, reqUrl));
  };
  const handle = (req: IncomingMessage, res: ServerResponse, reqUrl: URL) => {
    const path = reqUrl.pathname;
    const isApi = path === "/v1" || path.startsWith("/v1/") || path.startsWith("/api/") || path === "/metrics";
    // Security headers on every response, then the per-credential rate limit (429 + Retry-After).
    if (guardRequest(limiter, req, res, reqUrl, isApi || !options.pages ? "api" : "page", guard)) return;
    if (deps.drain.refuses(req.method, path)) return refuseWhileDraining(res, deps.drain);
    armBodyDeadline(req, res, bodyTimeoutMs);
    const done = (p: Promise<void>) =>
      p.catch((error: unknown) => {
        // A client that went away mid-request is routine, not a server failure.
        if (isClientGone(error, req)) log.debug({ path }, "the client went away before the response");
        else log.error({ err: error, path }, "request failed");
        sendError(res, error);
      });
    if (path === "/v1" || path.startsWith("/v1/") || path === "/metrics") return done(handleV1(deps, req, res, reqUrl));
    if (path.startsWith("/api/trpc")) return done(trpc(req, res, reqUrl));
    if (path.startsWith("/api/export/")) return done(handleExport(deps, req, res, reqUrl));
    if (isAnswerFilePath(path)) return done(handleAnswerFile(deps, req, res, reqUrl));
    if (path === "/api/auth/sign-in/email" && req.method === "POST") return done(emailSignIn(req, res));
    if (path === "/api/sso/start" && req.method === "GET") return done(ssoStart(req, res, reqUrl));
    if (path.startsWith("/api/auth")) return done(authRoute(req, res, path));
    // An API key in an answer link is exchanged for a question-bound cookie before any page sees it.
    if (req.method === "GET" && reqUrl.searchParams.has("access_token") && answerPathQuestionId(path) !== null) {
      return done(exchangeAnswerLink(deps, res, reqUrl, url.startsWith("https:")));
    }
    if (options.pages) {
      const pages = options.pages;
      return done(markConsoleLocale(deps, auth, req, path).then(() => pages.handle(req, res)));
    }
    sendError(res, new DomainError("not_found", `There is no page ${path}.`));
  };
  server.on("request", route);
  server.on("upgrade", (req, socket, head) => {
    const reqUrl = parseRequestUrl(req.url);
    if (!reqUrl) return void socket.destroy();
    // One access log line per upgrade too, when its socket closes (status 101 or the refusal's).
    if (reqUrl.pathname === "/v1/live" || reqUrl.pathname === "/v1/devices/connect") beginUpgrade(deps, req, socket, reqUrl);
    if (reqUrl.pathname === "/v1/live") {
      if (deps.drain.draining) return refuseUpgradeWhileDraining(socket, deps.drain);
      if (guardUpgrade(limiter, req, socket, reqUrl)) return;
      return void live.handleUpgrade(req, socket, head, reqUrl).catch(() => socket.destroy());
    }
    if (reqUrl.pathname === "/v1/devices/connect") return void devices.handleUpgrade(req, socket, head);
    if (options.pages?.upgrade) return void options.pages.upgrade(req, socket, head);
    socket.destroy();
  });

  // The metrics alone on a port of their own (e.g. reachable only from the monitoring network), same auth.
  const metricsServer = metricsPort === null ? null : createServer();
  if (metricsServer) {
    metricsServer.on("request", (req, res) => {
      const reqUrl = parseRequestUrl(req.url);
      setSecurityHeaders(res, "api", config.development);
      if (reqUrl?.pathname !== "/metrics") return sendError(res, new DomainError("not_found", "This port serves only GET /metrics."));
      if (req.method !== "GET") return sendError(res, new DomainError("method_not_allowed", `${req.method} is not allowed on /metrics.`));
      const requestContext = beginRequest(deps, req, res, reqUrl);
      otelContext.with(requestContext, () =>
        serveMetrics(deps, req, res, reqUrl, metricsToken).catch((error: unknown) => {
          if (!(error instanceof DomainError)) log.error({ err: error }, "metrics request failed");
          sendError(res, error);
        }),
      );
    });
    await new Promise<void>((resolve) => metricsServer.listen(metricsPort ?? 0, config.host, resolve));
  }
  const metricsUrl = metricsServer ? `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics` : null;

  await host.start();
  const notifier = notifyConfig ? startNotifier(deps, notifyConfig, { publicUrl: notifyConfig.publicUrl ?? url }) : null;
  return {
    server,
    deps,
    url,
    drain: async (windowMs) => {
      deps.drain.begin();
      const outcome = await host.drain(windowMs);
      if (outcome.interrupted.length > 0) log.warn({ interrupted: outcome.interrupted, windowMs }, "runs outlived the drain window; they are marked interrupted and another replica adopts them");
      return outcome;
    },
    metricsUrl,
    close: async () => {
      await notifier?.stop();
      await host.stop();
      await sandbox.spawner.stop();
      live.close();
      connections.close();
      keys.close();
      deps.activity.close();
      devices.close();
      await base.mcp.close();
      if ("close" in bus) await (bus as { close: () => Promise<void> }).close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (metricsServer) {
        metricsServer.closeAllConnections();
        await new Promise<void>((resolve) => metricsServer.close(() => resolve()));
      }
      // Flushes the spans still batched.
      await tracing.shutdown().catch((error: unknown) => log.warn({ err: error }, "could not flush the last spans"));
    },
  };
}
