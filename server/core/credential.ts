import type { TRole } from "./vocabulary";

/**
 * What a connection (or a run) was admitted with: the API key (by id, never the secret) or the
 * console login session (by id), plus the user and role it had then. Long-lived connections keep
 * it to re-check; a run keeps the credential that started it as its source (`responses.source_credential`).
 */
export type TCredential = { via: "api_key"; keyId: string; userId: string; role: TRole } | { via: "cookie"; sessionId: string; userId: string; role: TRole };
