import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDbKind } from "../../db/testing";
import { BUILTIN_AGENTS } from "../../server/agents/catalog";
import type { TAgentConfig } from "../../server/agents/types";
import { signInConfigFrom } from "../../server/auth/sso-config";
import { parseNotifyConfig } from "../../server/notify/config";
import { freePort } from "../../server/testing/server-process";
import { startTestApp, type TTestApp } from "../../server/testing/test-app";
import { startOidcProvider, type TOidcProvider } from "../fixtures/oidc-provider";
import { rows, waitUntil } from "./helpers";
import { trpcGet, trpcPost } from "./security-helpers";
import { consoleDecide, startRun } from "./separation-helpers";
import { openCookieSocket, within } from "./stream-helpers";

/**
 * Issue 33, point 1: single sign-on through a real OpenID Connect provider (oidc-provider on
 * loopback), driven over HTTP the way a browser follows it: the start, the provider's login form,
 * the callback. Role mapping from groups, the role re-applied at every sign-in, tokens the client
 * must refuse, a replayed `state`, the provider unreachable, and password sign-in off.
 */

let app: TTestApp;
let idp: TOidcProvider;

/** Cookies as a browser keeps them, per origin (name → value). */
class CookieJar {
  private readonly jars = new Map<string, Map<string, string>>();
  header(url: string): string {
    return [...(this.jars.get(new URL(url).origin) ?? new Map<string, string>())].map(([k, v]) => `${k}=${v}`).join("; ");
  }
  take(url: string, res: Response): void {
    const jar = this.jars.get(new URL(url).origin) ?? new Map<string, string>();
    this.jars.set(new URL(url).origin, jar);
    for (const line of res.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === "") jar.delete(name);
      else jar.set(name, value);
    }
  }
}

/** One request as a browser sends it, without following redirects: status, Location and body. */
async function visit(jar: CookieJar, url: string, init: { method?: string; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { cookie: jar.header(url) };
  if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
  const res = await fetch(url, { method: init.method ?? "GET", headers, body: init.form ? new URLSearchParams(init.form).toString() : undefined, redirect: "manual" });
  jar.take(url, res);
  const location = res.headers.get("location");
  return { status: res.status, location: location ? new URL(location, url).toString() : null, text: await res.text() };
}

type TSignIn = { jar: CookieJar; landing: string; callback: string | null; cookie: string };

/** When the first sign-in of this file ended: the server had fetched the provider's key set by then. */
let firstSignInEnded: number | null = null;

/**
 * Signs `login` in from the console's start link: every redirect followed, the provider's form
 * submitted. Ends where the browser lands back on the console (the page, or `/login?error=…`);
 * with `beforeCallback`, just before the browser would follow the provider's redirect back
 * (`callback` is where it would go).
 */
async function signInAs(login: string, jar = new CookieJar(), options: { beforeCallback?: boolean } = {}): Promise<TSignIn> {
  let step = await visit(jar, `${app.url}/api/sso/start?next=/approvals`);
  let callback: string | null = null;
  for (let hops = 0; hops < 10 && step.location; hops++) {
    const target = step.location;
    if (target.startsWith(app.url) && !target.startsWith(`${app.url}/api/auth/callback/`)) break;
    if (target.startsWith(`${app.url}/api/auth/callback/`)) {
      callback = target;
      if (options.beforeCallback) break;
    }
    step = await visit(jar, target);
    if (step.status === 200 && /<form method="post"/.test(step.text)) step = await visit(jar, target, { method: "POST", form: { login } });
  }
  firstSignInEnded ??= Date.now();
  return { jar, landing: step.location ?? "", callback, cookie: jar.header(app.url) };
}

const userOf = async (cookie: string) => {
  const res = await fetch(`${app.url}/api/trpc/me`, { headers: { cookie } });
  return res.status === 200 ? ((await res.json()) as { result: { data: { userId: string; role: string; name: string; email: string } } }).result.data : null;
};

const errorOf = (landing: string) => new URL(landing).searchParams.get("error");

beforeAll(async () => {
  const port = await freePort();
  idp = await startOidcProvider({
    redirectUri: `http://127.0.0.1:${port}/api/auth/callback/oidc`,
    people: {
      ada: { email: "ada@acme.test", name: "Ada Admin", groups: ["cs-admins", "payments-oncall"] },
      otto: { email: "otto@acme.test", name: "Otto Operator", groups: ["cs-operators"] },
      nobody: { email: "nobody@acme.test", name: "No Body", groups: ["marketing"] },
    },
  });
  const signIn = signInConfigFrom(
    {
      COUNTERSIGN_OIDC_ISSUER: idp.issuer,
      COUNTERSIGN_OIDC_CLIENT_ID: idp.clientId,
      COUNTERSIGN_OIDC_CLIENT_SECRET: idp.clientSecret,
      COUNTERSIGN_OIDC_ROLE_MAP: JSON.stringify({ admin: ["cs-admins"], operator: ["cs-operators"], auditor: ["cs-auditors"] }),
      COUNTERSIGN_OIDC_DEFAULT_ROLE: "deny",
      COUNTERSIGN_OIDC_NAME: "Acme SSO",
      COUNTERSIGN_PASSWORD_LOGIN: "off",
    },
    undefined,
  );
  // An agent whose approvals only the payments on-call team decides.
  const payments: TAgentConfig = { ...(BUILTIN_AGENTS.find((a) => a.name === "scripted") as TAgentConfig), name: "payments", approvers: { groups: ["payments-oncall"] } };
  // Its approvals are mailed to the team (nothing listens on the SMTP port: the rows are what is checked).
  const notify = parseNotifyConfig(
    {
      smtp: { host: "127.0.0.1", port: await freePort(), from: "countersign@acme.test" },
      channels: { mail: { type: "email" } },
      rules: [{ agents: ["payments"], notify: ["team:payments-oncall"], channels: ["mail"] }],
      retry: { baseMs: 3_600_000, maxAttempts: 1, jitter: false },
    },
    {},
  );
  app = await startTestApp({ port, signIn, agents: [payments], notify });
});
afterAll(async () => {
  await app?.close();
  await idp?.close();
});

describe(`single sign-on through an OpenID Connect provider (${testDbKind()})`, () => {
  it("the login page's methods: the provider's button, no password form", async () => {
    const methods = await trpcGet(app, null, "signInMethods");
    expect(methods.body).toMatchObject({ result: { data: { sso: { name: "Acme SSO" }, password: false } } });
  });

  it("a first sign-in creates the user with the role of its groups (the highest), sends it where it was going, and is one admin-trail row", async () => {
    const ada = await signInAs("ada");
    expect(ada.landing).toBe(`${app.url}/approvals`);
    const me = await userOf(ada.cookie);
    expect(me).toMatchObject({ role: "admin", name: "Ada Admin", email: "ada@acme.test" });
    const otto = await signInAs("otto");
    expect(await userOf(otto.cookie)).toMatchObject({ role: "operator", name: "Otto Operator" });
    // The admin trail: each person added once, by single sign-on.
    const trail = await trpcGet(app, { cookie: ada.cookie }, "admin.trail", { actor: "sso", action: "user.created", limit: 100 });
    const rows = (trail.body as { result: { data: { rows: Array<{ targetId: string; channel: string; actorUserId: string | null; detail: Record<string, unknown> }> } } }).result.data.rows;
    const adaRows = rows.filter((r) => r.targetId === me?.userId);
    expect(adaRows).toHaveLength(1);
    expect(adaRows[0]).toMatchObject({ channel: "sso", actorUserId: null, detail: { role: "admin", groups: ["cs-admins", "payments-oncall"], signIn: false, apiKeyId: null } });
    // The second sign-in of the same person is the same user.
    expect((await userOf((await signInAs("ada")).cookie))?.userId).toBe(me?.userId);
  });

  it("two first sign-ins of the same person at once are one user, both signed in", async () => {
    idp.people.set("twin", { email: "twin@acme.test", name: "Tess Twin", groups: ["cs-operators"] });
    const [a, b] = await Promise.all([signInAs("twin"), signInAs("twin")]);
    expect([a.landing, b.landing]).toEqual([`${app.url}/approvals`, `${app.url}/approvals`]);
    const [userA, userB] = [await userOf(a.cookie), await userOf(b.cookie)];
    expect(userA).toMatchObject({ role: "operator", name: "Tess Twin" });
    expect(userB?.userId).toBe(userA?.userId);
  });

  it("the role follows the groups at the next sign-in: the earlier sessions' sockets close with 4403, and a person in no mapped group is refused", async () => {
    idp.people.set("rhea", { email: "rhea@acme.test", name: "Rhea Roles", groups: ["cs-admins"] });
    const first = await signInAs("rhea");
    expect(await userOf(first.cookie)).toMatchObject({ role: "admin" });
    const socket = await openCookieSocket(app, first.cookie);
    // Removed from the admin group at the provider, still an operator.
    idp.people.set("rhea", { email: "rhea@acme.test", name: "Rhea Roles", groups: ["cs-operators"] });
    const second = await signInAs("rhea");
    expect(await userOf(second.cookie)).toMatchObject({ role: "operator" });
    const closed = await within(socket.closed, 30_000, "the earlier session's socket closing");
    expect(closed.code).toBe(4403);
    // Out of every mapped group (defaultRole deny): refused with the reason, no session.
    idp.people.set("rhea", { email: "rhea@acme.test", name: "Rhea Roles", groups: ["marketing"] });
    const third = await signInAs("rhea");
    expect(errorOf(third.landing)).toBe("SSO_NO_ROLE");
    expect(await userOf(third.cookie)).toBeNull();
    // A person never mapped is not added either.
    const nobody = await signInAs("nobody");
    expect(errorOf(nobody.landing)).toBe("SSO_NO_ROLE");
    expect(await userOf(nobody.cookie)).toBeNull();
  });

  it("a user an admin added before (same email) becomes the provider's person only when the provider says the email is verified", async () => {
    const local = await app.user("member", "Vera Local");
    idp.people.set("vera", { email: local.email, name: "Vera Provider", groups: ["cs-operators"], emailVerified: false });
    const unverified = await signInAs("vera");
    expect(errorOf(unverified.landing)).toBe("account_not_linked");
    expect(await userOf(unverified.cookie)).toBeNull();
    idp.people.set("vera", { email: local.email, name: "Vera Provider", groups: ["cs-operators"], emailVerified: true });
    const verified = await signInAs("vera");
    // The same user, its history kept, now with the role of its groups.
    expect(await userOf(verified.cookie)).toMatchObject({ userId: local.userId, name: "Vera Local", role: "operator" });
  });

  it.each([
    ["an ID token for another audience", "audience"],
    ["an expired ID token", "expired"],
    ["an ID token signed by a key the provider never published", "foreign-key"],
  ] as const)("%s is refused: back on the login page with the reason, no session", async (_what, mode) => {
    idp.tamper(mode);
    try {
      const attempt = await signInAs("otto");
      expect(attempt.landing.startsWith(`${app.url}/login?`)).toBe(true);
      expect(errorOf(attempt.landing)).toBe("unable_to_get_user_info");
      expect(await userOf(attempt.cookie)).toBeNull();
    } finally {
      idp.tamper(null);
    }
  });

  it("a replayed callback (its state used once already) is refused, with no new session", async () => {
    const done = await signInAs("otto");
    expect(done.callback).not.toBeNull();
    const replay = await visit(new CookieJar(), done.callback as string);
    expect(replay.status).toBe(302);
    expect(replay.location?.startsWith(`${app.url}/login?error=`)).toBe(true);
    // With the browser's own cookies too: the state was consumed.
    const again = await visit(done.jar, done.callback as string);
    expect(again.location?.startsWith(`${app.url}/login?error=`)).toBe(true);
  });

  it("the provider unreachable: at the start and at the callback, the login page says so (no 500)", async () => {
    await idp.stop();
    try {
      const start = await visit(new CookieJar(), `${app.url}/api/sso/start`);
      expect(start.status).toBe(302);
      expect(start.location).toBe(`${app.url}/login?error=sso_unreachable`);
    } finally {
      await idp.start();
    }
    // Down between the provider's login and the callback: the code cannot be exchanged.
    const halfway = await signInAs("otto", new CookieJar(), { beforeCallback: true });
    expect(halfway.callback).not.toBeNull();
    await idp.stop();
    try {
      const callback = await visit(halfway.jar, halfway.callback as string);
      expect(callback.status).toBe(302);
      expect(errorOf(callback.location as string)).toBe("invalid_code");
    } finally {
      await idp.start();
    }
  });

  it("a key the provider rotated in is fetched again: the first sign-in signed with it works", async () => {
    // The server fetches the key set again for a key id it does not know, at most once in 30
    // seconds (jose's cooldown): past that since the first fetch (the first sign-in), it must.
    const due = (firstSignInEnded ?? Date.now()) + 30_500;
    if (Date.now() < due) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
    idp.tamper("rotated");
    try {
      const otto = await signInAs("otto");
      expect(otto.landing).toBe(`${app.url}/approvals`);
      expect(await userOf(otto.cookie)).toMatchObject({ role: "operator" });
    } finally {
      idp.tamper(null);
    }
  });

  it("password sign-in is off: refused for everyone but a break-glass user; better-auth's own social sign-in route is closed", async () => {
    const plain = await app.user("admin");
    const glass = await app.user("admin", undefined, { breakGlass: true });
    const signIn = (email: string, password: string) =>
      fetch(`${app.url}/api/auth/sign-in/email`, { method: "POST", headers: { "content-type": "application/json", origin: app.url }, body: JSON.stringify({ email, password }) });
    const refused = await signIn(plain.email, plain.password);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: "password_login_off" });
    expect((await signIn(glass.email, glass.password)).status).toBe(200);
    const social = await fetch(`${app.url}/api/auth/sign-in/social`, { method: "POST", headers: { "content-type": "application/json", origin: app.url }, body: JSON.stringify({ provider: "oidc", idToken: { token: "x" } }) });
    expect(social.status).toBe(404);
  });
});

describe(`teams from the provider's groups as approvers (${testDbKind()})`, () => {
  it("a payments-oncall approval is decided by a member of the team and refused, naming the team, to an operator outside it", async () => {
    const requester = await app.user("member");
    const { approval } = await startRun(app, requester, "echo refund", "payments");
    const otto = await signInAs("otto");
    const refused = await consoleDecide(app, { cookie: otto.cookie, headers: { origin: app.url } }, approval.id, "approve");
    expect(refused.status).toBe(403);
    expect(refused.message).toBe('This approval is for the team payments-oncall: the agent "payments" accepts decisions only from its approvers, and you are not in that team.');
    expect(refused.serverText).toEqual({ code: "notInTeam", params: { agent: "payments", teams: "payments-oncall" } });
    const ada = await signInAs("ada");
    const decided = await consoleDecide(app, { cookie: ada.cookie, headers: { origin: app.url } }, approval.id, "approve");
    expect(decided.status).toBe(200);
  });

  it("an admin sets the teams of a person who signs in with a password (tRPC, one trail row): that person then decides the team's approvals", async () => {
    const requester = await app.user("member");
    const { approval } = await startRun(app, requester, "echo by a password user", "payments");
    const pat = await app.user("operator", "Pat Password");
    expect((await consoleDecide(app, { key: pat.apiKey }, approval.id, "approve")).status).toBe(403);
    const admin = await app.user("admin", undefined, { breakGlass: true });
    const set = await trpcPost(app, { key: admin.apiKey }, "admin.setUserTeams", { userId: pat.userId, teams: [" payments-oncall ", "payments-oncall", "sre"] });
    expect(set.body).toMatchObject({ result: { data: { userId: pat.userId, teams: ["payments-oncall", "sre"], previous: [], changed: true } } });
    // The same list again changes nothing and writes no row.
    expect((await trpcPost(app, { key: admin.apiKey }, "admin.setUserTeams", { userId: pat.userId, teams: ["payments-oncall", "sre"] })).body).toMatchObject({ result: { data: { changed: false } } });
    const trail = await trpcGet(app, { key: admin.apiKey }, "admin.trail", { action: "user.teams_changed", limit: 50 });
    const rowsFor = (trail.body as { result: { data: { rows: Array<{ targetId: string; detail: Record<string, unknown> }> } } }).result.data.rows.filter((r) => r.targetId === pat.userId);
    expect(rowsFor).toEqual([expect.objectContaining({ detail: { name: "Pat Password", from: [], to: ["payments-oncall", "sre"] } })]);
    expect((await consoleDecide(app, { key: pat.apiKey }, approval.id, "approve")).status).toBe(200);
  });

  it("the inbox's 'my teams' filter lists the approvals the caller's teams decide, and nothing for a person in none of them", async () => {
    const requester = await app.user("member");
    const { approval: forTeam } = await startRun(app, requester, "echo for the team", "payments");
    const { approval: forAnyone } = await startRun(app, requester, "echo for anyone");
    const pendingOf = async (cookie: string, myTeams: boolean) => {
      const res = await trpcGet(app, { cookie }, "inbox.list", { status: "pending", ...(myTeams ? { myTeams } : {}) });
      return (res.body as { result: { data: { rows: Array<{ id: string }> } } }).result.data.rows.map((r) => r.id);
    };
    const ada = await signInAs("ada");
    expect(await pendingOf(ada.cookie, true)).toContain(forTeam.id);
    expect(await pendingOf(ada.cookie, true)).not.toContain(forAnyone.id);
    expect(await pendingOf(ada.cookie, false)).toEqual(expect.arrayContaining([forTeam.id, forAnyone.id]));
    const otto = await signInAs("otto");
    expect(await pendingOf(otto.cookie, true)).toEqual([]);
  });

  it("a notification rule naming the team mails its members as they are now, and nobody else", async () => {
    // Signed in (so known here, with their groups): Ada is in payments-oncall, Otto is not.
    await signInAs("ada");
    await signInAs("otto");
    const requester = await app.user("member");
    const { approval } = await startRun(app, requester, "echo refund two", "payments");
    const sent = await waitUntil(async () => {
      const found = await rows<{ recipient: string }>(app, `select recipient from notifications where subject_id = '${approval.id}' and event = 'requested'`);
      return found.length > 0 ? found : null;
    }, 30_000, "the approval's notification rows");
    // Every member of the team (the person an admin put in it above too), nobody outside it.
    const recipients = sent.map((r) => r.recipient);
    expect(recipients).toContain("ada@acme.test");
    expect(recipients).not.toContain("otto@acme.test");
    const members = await rows<{ email: string }>(app, "select email from users where 'payments-oncall' = any(groups) order by email");
    expect([...recipients].sort()).toEqual(members.map((m) => m.email));
  });
});

