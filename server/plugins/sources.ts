import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { z } from "zod";
import { PluginLoadError } from "./manifest";

/*
 * Which plugins this installation has, read from its configuration: what server/config needs, kept
 * apart from the loader (which imports the harness loops) so reading the configuration stays light.
 */

/** Where a plugin lives: a local folder, or a package resolved from the server's node_modules. */
export type TPluginSource = { path: string; enabled: boolean } | { package: string; enabled: boolean };

/** `COUNTERSIGN_PLUGINS_FILE`: which plugins exist and which are enabled. Only enabled ones load. */
export const ZPluginsFile = z.strictObject({
  plugins: z.array(
    z.union([
      z.strictObject({ path: z.string().min(1), enabled: z.boolean() }),
      z.strictObject({ package: z.string().min(1), enabled: z.boolean() }),
    ]),
  ),
});

/**
 * The plugin sources of this installation: `COUNTERSIGN_PLUGINS_FILE` (a JSON file; relative
 * paths are relative to it) and `COUNTERSIGN_PLUGINS` (comma-separated folders, each enabled).
 * A bad file stops the boot naming the field.
 */
export function pluginSourcesFromEnv(env: Readonly<Record<string, string | undefined>>): TPluginSource[] {
  const sources: TPluginSource[] = [];
  const file = env.COUNTERSIGN_PLUGINS_FILE?.trim();
  if (file) {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new PluginLoadError(`COUNTERSIGN_PLUGINS_FILE: cannot read ${file}: ${(error as Error).message}`);
    }
    const parsed = ZPluginsFile.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new PluginLoadError(`COUNTERSIGN_PLUGINS_FILE (${file}): field "${issue?.path.join(".") || "(root)"}" ${issue?.message ?? "is invalid"}.`);
    }
    for (const entry of parsed.data.plugins) sources.push("path" in entry ? { path: isAbsolute(entry.path) ? entry.path : resolve(dirname(file), entry.path), enabled: entry.enabled } : entry);
  }
  for (const path of (env.COUNTERSIGN_PLUGINS ?? "").split(",").map((p) => p.trim()).filter(Boolean)) sources.push({ path: resolve(path), enabled: true });
  return sources;
}

