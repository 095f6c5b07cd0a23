import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { type DbHandle, migrateDb, openDb } from "./client";

/**
 * The migrated, empty PGlite database as a tarball, made once per set of migrations and PGlite
 * version and kept in the temporary directory. Opening PGlite from it takes about a second;
 * creating the cluster (initdb) and migrating it takes about three, and the integration suite
 * opens a hundred databases. The image is made by the same `migrateDb` every database gets, so a
 * changed migration makes a new image. Written to a temporary name and renamed: files opening
 * databases at once never read half an image.
 */
let image: Promise<Blob> | null = null;
/** The image, read (or made) once per process: a file opening several databases reads it once. */
const migratedImage = (): Promise<Blob> => {
  image ??= readOrMakeImage().catch((error: unknown) => {
    image = null;
    throw error;
  });
  return image;
};

async function readOrMakeImage(): Promise<Blob> {
  const hash = createHash("sha256");
  const folder = fileURLToPath(new URL("./migrations", import.meta.url));
  for (const name of readdirSync(folder, { recursive: true, encoding: "utf8" }).sort()) {
    hash.update(name);
    try {
      hash.update(readFileSync(join(folder, name)));
    } catch {
      // a folder (meta/): its files are listed on their own
    }
  }
  hash.update(readFileSync(fileURLToPath(new URL("../node_modules/@electric-sql/pglite/package.json", import.meta.url))));
  const path = join(tmpdir(), `countersign-pglite-image-${hash.digest("hex").slice(0, 16)}.tar`);
  try {
    return new Blob([readFileSync(path)]);
  } catch {
    const handle = await openDb({});
    await migrateDb(handle);
    const made = await (handle.dump as () => Promise<Blob>)();
    await handle.close();
    const partial = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
    writeFileSync(partial, Buffer.from(await made.arrayBuffer()));
    renameSync(partial, path);
    return made;
  }
}

/**
 * A fresh migrated database for one test file: in-memory PGlite by default, or a new
 * throw-away database on the server named by TEST_DATABASE_URL when TEST_DB=postgres.
 */
export async function createTestDb(): Promise<DbHandle> {
  const adminUrl = process.env.TEST_DB === "postgres" ? process.env.TEST_DATABASE_URL : undefined;
  if (!adminUrl) return openDb({ image: await migratedImage() });
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
