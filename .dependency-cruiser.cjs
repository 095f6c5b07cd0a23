/**
 * The folder layers of Countersign, checked by dependency-cruiser: `npm run lint:layers` (part of
 * `npm run lint` and of scripts/test-all.sh). docs/architecture.md ("Folder layers") explains them
 * and shows the folder graph this tool draws (`npm run architecture:draw`; a unit test fails when
 * the committed picture no longer matches the code).
 *
 * Each folder sits in a layer (LAYERS, bottom to top) and may import only its own folder and the
 * folders of lower layers; NARROWER takes some of those away again. Type-only imports count
 * (`tsPreCompilationDeps`). Tests (`*.test.ts`, server/testing/) consume everything and are left
 * out of the graph; scripts/, tests/, e2e/ and examples/ are outside it, and nothing in it may
 * import them.
 */

// dependency-cruiser 17.4.3 parses with swc without JSX (its `parseFileSync` options never set
// `tsx`), so the first .tsx file would abort the run; this turns JSX on for .tsx/.jsx only. Known
// upstream (sverweij/dependency-cruiser#1081, fixed by #1086 after 17.4.3, on a line that needs
// Node 22): drop these lines with an upgrade that has the fix.
const swc = require("@swc/core");
const parseFileSync = swc.parseFileSync;
swc.parseFileSync = (file, options) => parseFileSync(file, /\.[jt]sx$/.test(file) ? { ...options, tsx: true } : options);

/** The folders of the graph: name → the paths that belong to it. */
const FOLDERS = {
  "server/core": "^server/core/",
  "plugin-sdk": "^plugin-sdk/",
  db: "^db/",
  "server/ports": "^server/ports/",
  "server/observe": "^server/observe/",
  "server/reviewer": "^server/reviewer/",
  "server/auth": "^server/auth/",
  "server/tools": "^server/tools/",
  "server/devices": "^server/devices/",
  "server/mcp": "^server/mcp/",
  "server/notify": "^server/notify/",
  "server/agents": "^server/agents/",
  "server/host": "^server/host/",
  "server/harnesses": "^server/harnesses/",
  "server/plugins": "^server/plugins/",
  "server/services": "^server/services/",
  "server/config": "^server/config/",
  "server/agui": "^server/agui/",
  "server/api": "^server/api/",
  "server/cli": "^server/cli/",
  "server/device": "^server/device/",
  "server/demo.ts": "^server/demo\\.ts$",
  "server/app.ts": "^server/app\\.ts$",
  "server/main.ts": "^server/main\\.ts$",
  // The console and the clients.
  messages: "^messages/",
  i18n: "^i18n/",
  components: "^components/",
  app: "^app/",
  clients: "^clients/",
};

/** The layers, bottom to top: a folder may import its own folder and those of lower layers. */
const LAYERS = [
  ["server/core", "plugin-sdk"],
  ["db"],
  ["server/ports"],
  ["server/observe", "server/reviewer", "server/auth"],
  ["server/tools"],
  ["server/devices", "server/mcp", "server/notify"],
  ["server/agents"],
  ["server/host"],
  ["server/harnesses"],
  ["server/plugins"],
  ["server/services"],
  ["server/config"],
  ["server/agui"],
  ["server/api"],
  ["server/cli", "server/device", "server/demo.ts"],
  ["server/app.ts"],
  ["server/main.ts"],
];

/**
 * Folders that may import less than their layer allows: `only` these folders (besides their own),
 * or their layer's `except` these. Which of these imports must be `import type` (server/ports, the
 * console's import of the tRPC router) is checked by scripts/architecture/type-only.ts: the swc
 * parser does not tell dependency-cruiser which imports are type-only.
 */
const NARROWER = {
  // The domain and the plugin contract import nothing of this repository.
  "server/core": { only: [] },
  "plugin-sdk": { only: [] },
  db: { only: ["server/core"] },
  // Interfaces only: types from the domain and the database, nothing above them.
  "server/ports": { only: ["server/core", "db"] },
  // Transports never query the database: a named read in server/services/read or a service does.
  "server/agui": { except: ["db"] },
  "server/api": { except: ["db"] },
  // The console: the domain's vocabulary, the tRPC router's type, the translations.
  messages: { only: [] },
  i18n: { only: ["server/core", "messages"] },
  components: { only: ["server/core", "i18n", "messages", "server/api/trpc/root.ts"] },
  app: { only: ["server/core", "components", "i18n", "messages", "server/api/trpc/root.ts"] },
  // The clients are separate packages: nothing of the server.
  clients: { only: [] },
};

/** Who consumes the graph without being part of it (left out of it): tests and the test app. */
const CONSUMERS = "\\.test\\.tsx?$|^server/testing/";
const OUTSIDE = "^(tests|scripts|e2e|examples)/";
const TRPC_ROOT = "^server/api/trpc/root\\.ts$";
const pathOf = (name) => (name === "server/api/trpc/root.ts" ? TRPC_ROOT : FOLDERS[name]);
const npm = (...names) => `(^|/)node_modules/(${names.join("|")})/`;

function allowedFor(name) {
  const narrower = NARROWER[name] ?? {};
  if (narrower.only) return narrower.only;
  const layer = LAYERS.findIndex((folders) => folders.includes(name));
  if (layer < 0) throw new Error(`.dependency-cruiser.cjs: ${name} is in no layer`);
  return LAYERS.slice(0, layer)
    .flat()
    .filter((other) => !(narrower.except ?? []).includes(other));
}

const layerRules = Object.keys(FOLDERS).map((name) => {
  const allowed = allowedFor(name);
  return {
    name: `layer-${name.replace(/[^a-z0-9]+/gi, "-")}`,
    comment: `${name} may import only ${allowed.length ? allowed.join(", ") : "nothing of this repository"} (docs/architecture.md, "Folder layers").`,
    severity: "error",
    from: { path: FOLDERS[name] },
    to: { path: [...Object.values(FOLDERS), OUTSIDE], pathNot: [FOLDERS[name], ...allowed.map(pathOf)] },
  };
});

module.exports = {
  forbidden: [
    {
      name: "no-folder-cycles",
      comment: "Folders import each other in one direction only (type imports included): break the cycle with a port (server/ports) or by moving the code to the folder that owns it.",
      scope: "folder",
      severity: "error",
      from: { path: "^(server|db|plugin-sdk|components|app|i18n|clients)(/|$)" },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "layer-unplaced",
      comment: "Every folder of server/ sits in a layer: add the new folder to FOLDERS and LAYERS in .dependency-cruiser.cjs.",
      severity: "error",
      from: { path: "^server/", pathNot: Object.values(FOLDERS) },
      to: { path: [...Object.values(FOLDERS), OUTSIDE] },
    },
    {
      name: "core-imports-no-framework",
      comment: "server/core is the innermost layer: no framework, database driver or transport.",
      severity: "error",
      from: { path: FOLDERS["server/core"] },
      to: { path: [npm("next", "react", "react-dom", "drizzle-orm", "@trpc/[^/]+", "ws"), "^(node:)?(http|https|http2)$"] },
    },
    {
      name: "services-import-no-transport",
      comment: "Services never import a transport (tRPC, HTTP, WebSocket): transports call services.",
      severity: "error",
      from: { path: FOLDERS["server/services"] },
      to: { path: [npm("@trpc/[^/]+", "ws"), "^(node:)?(http|https|http2)$"] },
    },
    {
      name: "host-imports-no-transport",
      comment: "The host never imports a transport: services settle pending actions and start runs through its port (TRunStarter, server/ports/run-starter.ts).",
      severity: "error",
      from: { path: FOLDERS["server/host"] },
      to: { path: npm("@trpc/[^/]+") },
    },
    {
      name: "trpc-imports-no-http",
      comment: "tRPC never imports the HTTP transport: request identity, error mapping, body reading and connection caps live in server/api/shared.",
      severity: "error",
      from: { path: "^server/api/trpc/" },
      to: { path: "^server/api/http/" },
    },
    {
      name: "shared-imports-no-transport",
      comment: "server/api/shared is what both transports import: it imports neither of them.",
      severity: "error",
      from: { path: "^server/api/shared/" },
      to: { path: "^server/api/(http|trpc)/" },
    },
    {
      name: "only-db-imports-drizzle",
      comment: "SQL lives in repositories: only db/ imports Drizzle. Services, the host and every other module call named functions of db/repositories (and may import their row types); transports call services.",
      severity: "error",
      from: { path: "^(server|plugin-sdk|components|app|i18n|messages|clients)/" },
      to: { path: npm("drizzle-orm") },
    },
  ],
  options: {
    exclude: { path: CONSUMERS },
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    parser: "swc",
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".mts", ".mjs", ".js", ".json"],
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
    tsConfig: { fileName: "tsconfig.json" },
  },
};
