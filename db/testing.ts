import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { type DbHandle, migrateDb, openDb } from "./client";

/**
 * A fresh migrated database for one test file: in-memory PGlite by default, or a new
 * throw-away database on the server named by TEST_DATABASE_URL when TEST_DB=postgres.
 */
export async function createTestDb(): Promise<DbHandle> {
  const adminUrl = process.env.TEST_DB === "postgres" ? process.env.TEST_DATABASE_URL : undefined;
  if (!adminUrl) {
    const handle = await openDb({});
    await migrateDb(handle);
    return handle;
  }
  const name = `cs_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const handle = await openDb({ url: url.toString(), poolSize: 20 });
  await migrateDb(handle);
  return {
    ...handle,
    close: async () => {
      await handle.close();
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** The database kind the integration suite runs on, for test names. */
export const testDbKind = (): string => (process.env.TEST_DB === "postgres" ? "postgres" : "pglite");

/** For tests that start server processes: a fresh PostgreSQL database URL, or null on PGlite. */
export async function createTestDatabaseUrl(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const adminUrl = process.env.TEST_DB === "postgres" ? process.env.TEST_DATABASE_URL : undefined;
  if (!adminUrl) return null;
  const name = `cs_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}
