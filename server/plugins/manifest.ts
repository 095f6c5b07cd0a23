import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { z } from "zod";
import { invalidFieldReason } from "../core/error-reasons";

/** The manifest file a plugin folder (or package root) holds. */
export const MANIFEST_FILE = "countersign.plugin.json";

const CANONICAL = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

export const ZPluginManifest = z.strictObject({
  id: z.string().regex(CANONICAL, "must be 1–64 lowercase letters, digits, '.', '-' or '_', starting with a letter or digit"),
  version: z.string().refine((v) => semver.valid(v) !== null, "must be a semantic version such as 1.2.0"),
  /** The plugin API range the plugin needs, e.g. `^1.0.0`; a host outside it refuses the plugin before loading its code. */
  pluginApi: z.string().refine((v) => semver.validRange(v) !== null, "must be a semver range such as ^1.0.0"),
  /** The runtimes the plugin targets; this host is `countersign`. */
  runtimes: z.array(z.string().regex(CANONICAL, "must be a canonical runtime id")).min(1, "must name at least one runtime"),
  /** The module whose default export is the plugin (relative to the manifest). */
  main: z.string().min(1).refine((v) => !v.startsWith("/") && !v.split(/[\\/]/).includes(".."), "must be a path inside the plugin folder"),
  description: z.string().max(500).optional(),
  contracts: z
    .strictObject({
      /** Runtime ids the plugin may register tool-result middleware for. */
      agentToolResultMiddleware: z.array(z.string().regex(CANONICAL, "must be a canonical runtime id")).optional(),
    })
    .optional(),
});
export type TPluginManifest = z.infer<typeof ZPluginManifest>;

/** A refusal at boot: names the plugin (or its folder) and, for a bad manifest, the field. */
export class PluginLoadError extends Error {}

/** Reads and validates the manifest of the plugin in `dir`; throws a sentence naming the bad field. */
export function readManifest(dir: string): TPluginManifest {
  const file = join(dir, MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "it does not exist" : `it is not valid JSON (${(error as Error).message})`;
    throw new PluginLoadError(`Plugin at ${dir}: cannot read ${MANIFEST_FILE}: ${reason}.`);
  }
  const parsed = ZPluginManifest.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    // The field as every schema refusal names it (an unknown key by its own path, e.g. contracts.extra).
    const unknown = issue?.code === "unrecognized_keys";
    const field = unknown || issue?.path.length ? (invalidFieldReason(parsed.error.issues)?.params.field ?? "(the manifest)") : "(the manifest)";
    const what = unknown ? "is not a manifest field (unknown fields are refused)" : (issue?.message ?? "is invalid");
    throw new PluginLoadError(`Plugin at ${dir}: manifest field "${field}" ${what}.`);
  }
  return parsed.data;
}

/** Refuses a plugin whose `pluginApi` range does not include the host's plugin API version, naming both. */
export function assertApiCompatible(manifest: TPluginManifest, hostVersion: string): void {
  if (!semver.satisfies(hostVersion, manifest.pluginApi)) {
    throw new PluginLoadError(`Plugin ${manifest.id} ${manifest.version} needs plugin API ${manifest.pluginApi}; this host provides plugin API ${hostVersion}. It was not loaded.`);
  }
}
