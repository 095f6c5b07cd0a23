import { readFileSync } from "node:fs";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { rowsOf } from "../../db/client";
import { backfillNameKeys, nameHolder } from "../../db/repositories/display-names";
import { createTestDb, testDbKind } from "../../db/testing";
import { startControlServer } from "../../server/api/http/control";
import { displayNameKey } from "../../server/core/display-name";
import { startTestApp, type TTestApp, type TTestUser } from "../../server/testing/test-app";
import { cli, json, jsonError } from "./cli-helpers";
import { rows, waitUntil } from "./helpers";
import { signIn, trpcGet, trpcPost } from "./security-helpers";

/**
 * Point 6 of issue 30, the names part: a display name equal to another user's (ignoring case,
 * after NFKC, without invisible characters) is refused when a user is created (the CLI) or renamed
 * (admin.renameUser, settings.setName, the CLI's `user rename`) with a 409 and nothing written;
 * two writers racing for one name cannot both win (a unique index); every rename is one row of the
 * admin trail; better-auth's own update-user cannot change a name. Names shown beside emails:
 * console-names.test.ts.
 */

let app: TTestApp;
let admin: TTestUser;
let control: Awaited<ReturnType<typeof startControlServer>>;

beforeAll(async () => {
  app = await startTestApp();
  control = await startControlServer(app.deps, app.dataDir);
  admin = await app.user("admin", "Ada Admin");
}, 60_000);
afterAll(async () => {
  await control?.close();
  await app?.close();
});

type TTrailRow = { actorUserId: string | null; channel: string; action: string; targetId: string; detail: Record<string, unknown> };
const asAdmin = () => ({ key: admin.apiKey });
/** The CLI, through the running server's control socket (the same process and database). */
const run = (...args: string[]) => cli(app.dataDir, undefined, [...args, "--json"]);
const nameOf = async (userId: string) => (await rows<{ name: string }>(app, `select name from users where id = '${userId}'`))[0]?.name;
const userCount = async () => Number((await rows<{ n: string | number }>(app, "select count(*) as n from users"))[0]?.n);
const renames = async (userId: string) =>
  ((await trpcGet(app, asAdmin(), "admin.trail", { action: "user.renamed", limit: 200 })).body as { result: { data: { rows: TTrailRow[] } } }).result.data.rows.filter((r) => r.targetId === userId);
const message = (res: { body: Record<string, unknown> }) => (res.body as { error: { message: string } }).error.message;

describe(`display names cannot impersonate (${testDbKind()})`, () => {
  test("a name another user has, in any case, width or composition, is refused on create and on every rename: 409, nothing written", async () => {
    const alice = await app.user("member", "Alice");
    const renee = await app.user("member", "Renée");
    const other = await app.user("operator");
    const otherName = await nameOf(other.userId);
    const users = await userCount();
    const variants = ["ALICE", "Ａｌｉｃｅ", "alice", " A\u200Blice ", "RENE\u0301E", "rene\u0301e"];

    const created = await Promise.all(variants.map((name) => run("user", "add", name)));
    created.forEach((r, i) => {
      const error = jsonError(r);
      expect(error.status, variants[i]).toBe(1);
      expect(error.code).toBe("conflict");
      expect(error.message).toContain(`Another user already has the display name ${(variants[i] as string).trim()}`);
    });
    for (const name of variants) {
      const res = await trpcPost(app, asAdmin(), "admin.renameUser", { userId: other.userId, name });
      expect(res.status, name).toBe(409);
      expect(message(res)).toMatch(/^Another user already has the display name .+ \(names are compared ignoring case, letter width and invisible characters\); choose another name\.$/);
      expect((await trpcPost(app, { key: other.apiKey }, "settings.setName", { name })).status, name).toBe(409);
    }
    expect(jsonError(await run("user", "rename", other.userId, "Ａｌｉｃｅ")).code).toBe("conflict");
    expect(await userCount()).toBe(users);
    expect(await nameOf(other.userId)).toBe(otherName);
    expect(await renames(other.userId)).toEqual([]);

    // Distinct letters stay distinct names: the Turkish dotless ı, an accent.
    for (const name of ["Alıce", "Alicé"]) expect((await trpcPost(app, asAdmin(), "admin.renameUser", { userId: other.userId, name })).status, name).toBe(200);
    // One's own name in another case is a rename, not a clash with oneself.
    expect((await trpcPost(app, { key: alice.apiKey }, "settings.setName", { name: "ALICE" })).status).toBe(200);
    expect(await nameOf(alice.userId)).toBe("ALICE");
    // Bad names are 400s that say why, and change nothing.
    for (const [name, why] of [
      ["", "cannot be empty"],
      ["\u200B", "at least one visible character"],
      ["Eve\nAdmin", "control characters"],
      ["x".repeat(101), "at most 100 characters"],
    ] as const) {
      const res = await trpcPost(app, asAdmin(), "admin.renameUser", { userId: renee.userId, name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(message(res)).toContain(why);
    }
    expect(jsonError(await run("user", "add", " ")).message).toContain("cannot be empty");
    expect(await nameOf(renee.userId)).toBe("Renée");
    // A deleted user's name is free again (its history keeps it), and its own name no longer changes.
    await trpcPost(app, asAdmin(), "admin.deleteUser", { userId: renee.userId });
    expect(json(await run("user", "add", "RENÉE"))).toMatchObject({ userId: expect.any(String) });
    const late = await trpcPost(app, asAdmin(), "admin.renameUser", { userId: renee.userId, name: "Renée Gone" });
    expect(late.status).toBe(409);
    expect(message(late)).toBe("Renée was deleted; its name no longer changes.");
  }, 120_000);

  test("each rename path writes one trail row (from, to, who, via); better-auth's update-user changes no name", async () => {
    const bob = await app.user("member", "Bob");
    const member = await app.user("member");

    const byAdmin = await trpcPost(app, asAdmin(), "admin.renameUser", { userId: bob.userId, name: "Bob Builder" });
    expect(byAdmin.status).toBe(200);
    expect((byAdmin.body as { result: { data: unknown } }).result.data).toEqual({ userId: bob.userId, name: "Bob Builder", email: bob.email, previousName: "Bob", renamed: true });
    const cookie = await signIn(app, bob);
    expect((await trpcPost(app, { cookie, headers: { origin: app.url } }, "settings.setName", { name: "Robert" })).status).toBe(200);
    expect(json(await run("user", "rename", bob.email, "Bobby"))).toMatchObject({ userId: bob.userId, name: "Bobby", previousName: "Robert", renamed: true });
    // The same name again is no change and no row.
    expect(json(await run("user", "rename", "bobby", "Bobby"))).toMatchObject({ renamed: false });

    const trail = await renames(bob.userId);
    expect(trail.map((r) => [r.detail.from, r.detail.to, r.actorUserId, r.channel])).toEqual([
      ["Robert", "Bobby", null, "cli"],
      ["Bob Builder", "Robert", bob.userId, "console"],
      ["Bob", "Bob Builder", admin.userId, "console"],
    ]);
    expect(trail.every((r) => r.detail.email === bob.email)).toBe(true);

    // Only an admin renames someone else.
    const refused = await trpcPost(app, { key: member.apiKey }, "admin.renameUser", { userId: bob.userId, name: "Mallory" });
    expect(refused.status).toBe(403);
    expect((await trpcPost(app, { key: member.apiKey }, "settings.setName", { name: "Mallory", userId: bob.userId })).status).toBe(400);

    // better-auth's own endpoint would skip the check and the trail: it refuses names.
    const direct = await fetch(`${app.url}/api/auth/update-user`, { method: "POST", headers: { "content-type": "application/json", origin: app.url, cookie }, body: JSON.stringify({ name: "Ada Admin" }) });
    expect(direct.status).toBe(403);
    expect(await direct.text()).toContain("Display names change only through Countersign");
    expect(await nameOf(bob.userId)).toBe("Bobby");
    expect(await renames(bob.userId)).toHaveLength(3);
  }, 120_000);

  test("renames and creations racing for one name: exactly one wins, the others are 409s", async () => {
    // Eight users, each renamed once (half by the admin, half by themselves), and two new users, all at once.
    const racers = await Promise.all(Array.from({ length: 8 }, () => app.user("member")));
    const [results, cliResults] = await Promise.all([
      Promise.all(
        racers.map((u, i) =>
          i < 4 ? trpcPost(app, asAdmin(), "admin.renameUser", { userId: u.userId, name: "Zed" }) : trpcPost(app, { key: u.apiKey }, "settings.setName", { name: i % 2 === 0 ? "ZED" : "Ｚｅｄ" }),
        ),
      ),
      Promise.all([run("user", "add", "zed"), run("user", "add", "Ｚed")]),
    ]);
    const wins = results.filter((r) => r.status === 200).length + cliResults.filter((r) => r.status === 0).length;
    expect(wins).toBe(1);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 409)).toBe(true);
    expect(cliResults.filter((r) => r.status !== 0).every((r) => jsonError(r).code === "conflict")).toBe(true);
    const holders = await rows<{ id: string; name: string }>(app, `select id, name from users where name_key = '${displayNameKey("Zed")}' and deleted_at is null`);
    expect(holders).toHaveLength(1);
    // One row of the trail for the winner when it was a rename, none for the losers.
    const trailRows = ((await trpcGet(app, asAdmin(), "admin.trail", { action: "user.renamed", limit: 200 })).body as { result: { data: { rows: TTrailRow[] } } }).result.data.rows;
    const racerIds = new Set(racers.map((u) => u.userId));
    expect(trailRows.filter((r) => racerIds.has(r.targetId))).toHaveLength(results.some((r) => r.status === 200) ? 1 : 0);
  }, 120_000);

  test("the database holds the rule itself: a second row with a taken key is refused", async () => {
    const held = await app.user("member", "Quinn");
    const [row] = await rows<{ name_key: string }>(app, `select name_key from users where id = '${held.userId}'`);
    expect(row?.name_key).toBe("quinn");
    const insert = app.deps.db.execute(sql`insert into users (id, name, name_key, email) values ('user_forged', 'QUINN', 'quinn', 'forged@example.com')`);
    await expect(insert).rejects.toThrow();
    expect(await rows(app, "select id from users where id = 'user_forged'")).toEqual([]);
  });

  test.skipIf(testDbKind() !== "postgres")("a rename that meets another's uncommitted claim on the name waits at the unique index and is refused when it commits", async () => {
    const [first, second] = [await app.user("member"), await app.user("member")];
    const client = app.dbHandle.sql;
    if (!client) throw new Error("no PostgreSQL client");
    const held = await client.reserve();
    try {
      await held.unsafe("begin");
      await held.unsafe("update users set name = 'Yara', name_key = 'yara' where id = $1", [first.userId]);
      // The second rename's own check cannot see the uncommitted claim: only the index stops it.
      const racing = trpcPost(app, asAdmin(), "admin.renameUser", { userId: second.userId, name: "YARA" });
      await waitUntil(async () => {
        const waiting = await rows<{ n: string | number }>(app, "select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query ilike 'update \"users\"%'");
        return Number(waiting[0]?.n) > 0 ? true : null;
      }, 20_000, "the racing rename to wait at the unique index");
      await held.unsafe("commit");
      const res = await racing;
      expect(res.status).toBe(409);
      expect(message(res)).toContain("Another user already has the display name YARA");
    } finally {
      held.release();
    }
    expect(await nameOf(second.userId)).not.toBe("YARA");
    expect(await renames(second.userId)).toEqual([]);
  }, 60_000);
});

describe(`databases from before the rule (${testDbKind()})`, () => {
  test("the migration succeeds over users who share names: the oldest keeps the name's key, the others keep their names and still hold them against newcomers", async () => {
    const handle = await createTestDb();
    try {
      const db = handle.db;
      // The users table as it was before migration 0019, holding names that now count as one.
      await db.execute(sql`drop index users_name_key_idx`);
      await db.execute(sql`alter table users drop column name_key`);
      const legacy = [
        ["user_l1", "Sam", "2024-01-01T00:00:00Z"],
        ["user_l2", "SAM", "2024-01-02T00:00:00Z"],
        ["user_l3", "Ｓａｍ", "2024-01-03T00:00:00Z"],
        ["user_l4", "Kim", "2024-01-04T00:00:00Z"],
      ];
      for (const [id, name, at] of legacy) await db.execute(sql`insert into users (id, name, email, created_at) values (${id}, ${name}, ${`${id}@example.com`}, ${at})`);
      const migration = readFileSync(new URL("../../db/migrations/0019_user-name-key.sql", import.meta.url), "utf8");
      for (const statement of migration.split("--> statement-breakpoint")) await db.execute(sql.raw(statement));

      expect(await backfillNameKeys(db)).toEqual([
        { id: "user_l2", name: "SAM" },
        { id: "user_l3", name: "Ｓａｍ" },
      ]);
      // Idempotent: a second boot finds the same.
      expect((await backfillNameKeys(db)).map((u) => u.id)).toEqual(["user_l2", "user_l3"]);
      // A legacy user without a key still holds its name against newcomers.
      expect(await nameHolder(db, "sam", "user_l1")).toEqual({ id: "user_l2", name: "SAM" });
      const keys = rowsOf<{ id: string; name_key: string | null }>(await db.execute(sql`select id, name_key from users order by id`));
      expect(keys).toEqual([
        { id: "user_l1", name_key: "sam" },
        { id: "user_l2", name_key: null },
        { id: "user_l3", name_key: null },
        { id: "user_l4", name_key: "kim" },
      ]);
    } finally {
      await handle.close();
    }
  }, 60_000);
});
