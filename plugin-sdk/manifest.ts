/**
 * The manifest a plugin folder (or package root) holds, `countersign.plugin.json` (docs/plugins.md,
 * "The manifest"). The server validates it with its own schema (server/plugins/manifest.ts);
 * server/plugins/sdk-contract.test.ts fails the type check when the two drift apart.
 */
export type TPluginManifest = {
  /** Canonical id: 1–64 of `a-z 0-9 . - _`, starting with a letter or digit. */
  id: string;
  /** The plugin's semantic version. */
  version: string;
  /** The plugin API range the plugin needs, e.g. `^1.0.0`. */
  pluginApi: string;
  /** The runtimes the plugin targets; this host is `countersign`. */
  runtimes: string[];
  /** The module whose default export is the plugin (relative to the manifest). */
  main: string;
  description?: string;
  contracts?: {
    /** Runtime ids the plugin may register tool-result middleware for. */
    agentToolResultMiddleware?: string[];
  };
};
