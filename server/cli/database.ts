import { resolve } from "node:path";

/**
 * Which database a command used, as the CLI prints it: the PGlite data directory, or the
 * PostgreSQL URL with its password replaced by `***` (a URL that does not parse is not printed).
 */
export function describeDatabase(options: { url?: string; pgliteDir: string }): string {
  if (!options.url) return `PGlite ${resolve(options.pgliteDir)}`;
  try {
    const url = new URL(options.url);
    if (url.password) url.password = "***";
    return `PostgreSQL ${url.toString()}`;
  } catch {
    return "PostgreSQL (DATABASE_URL does not parse as a URL)";
  }
}
