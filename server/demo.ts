import { existsSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../db/client";
import { countUsers } from "../db/repositories/users";
import type { TAuth } from "./auth/auth";
import { addUser } from "./auth/users";
import { newSecret } from "./core/ids";

/**
 * On first start (no users yet) creates the demo operator with a console login and an API
 * key, prints them once, and keeps a copy readable only by the owner in the data directory.
 */
export async function ensureDemoOperator(db: Db, auth: TAuth, dataDir: string, url: string): Promise<string | null> {
  if ((await countUsers(db)) > 0) return null;
  const password = newSecret(12);
  // Replicas starting together on an empty database race here; the loser simply skips.
  const created = await addUser(db, auth, { name: "Demo Operator", role: "admin", email: "operator@countersign.local", password }).catch(() => null);
  if (!created) return null;
  const text = [
    "Countersign demo operator (created on first start)",
    `  console:  ${url}/login`,
    `  email:    ${created.email}`,
    `  password: ${password}`,
    `  API key:  ${created.apiKey}`,
    "",
    "Try it:",
    `  curl -s ${url}/v1/responses -H 'authorization: Bearer ${created.apiKey}' -H 'content-type: application/json' \\`,
    `    -d '{"input":{"script":[{"text":"Listing files","toolCalls":[{"name":"exec","arguments":{"command":"ls -la"}}]},{"text":"Done."}]}}'`,
    "",
  ].join("\n");
  const file = join(dataDir, "demo-credentials.txt");
  // Written whole under a temporary name, then renamed: a reader never sees the file half written.
  if (!existsSync(file)) {
    writeFileSync(`${file}.tmp`, text, { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }
  return text;
}
