import { describe, expect, it } from "vitest";
import { groupsOfClaim, roleForGroups, signInConfigFrom } from "./sso-config";

const ENV = { COUNTERSIGN_OIDC_ISSUER: "https://id.example.com/realms/acme/", COUNTERSIGN_OIDC_CLIENT_ID: "countersign" };

describe("single sign-on settings", () => {
  it("none: passwords only; the defaults when an issuer and a client are set", () => {
    expect(signInConfigFrom({}, undefined)).toEqual({ sso: null, passwordLogin: true });
    expect(signInConfigFrom(ENV, undefined)).toEqual({
      sso: {
        issuer: "https://id.example.com/realms/acme",
        discoveryUrl: "https://id.example.com/realms/acme/.well-known/openid-configuration",
        clientId: "countersign",
        clientSecret: undefined,
        scopes: ["openid", "email", "profile", "groups"],
        groupsClaim: "groups",
        roleMap: { admin: [], operator: [], auditor: [], member: [] },
        defaultRole: "member",
        name: "SSO",
      },
      passwordLogin: true,
    });
  });

  it("the agents file's sso keys, each overridden by its variable", () => {
    const file = { issuer: "https://file.example.com", clientId: "from-file", name: "File SSO", roleMap: { admin: ["file-admins"] }, passwordLogin: "off" as const };
    const fromFile = signInConfigFrom({}, file);
    expect(fromFile.sso).toMatchObject({ issuer: "https://file.example.com", clientId: "from-file", name: "File SSO", roleMap: { admin: ["file-admins"] } });
    expect(fromFile.passwordLogin).toBe(false);
    const both = signInConfigFrom({ ...ENV, COUNTERSIGN_OIDC_ROLE_MAP: '{"operator":["ops"]}', COUNTERSIGN_OIDC_SCOPES: "openid,email groups", COUNTERSIGN_PASSWORD_LOGIN: "on" }, file);
    expect(both.sso).toMatchObject({ issuer: "https://id.example.com/realms/acme", clientId: "countersign", name: "File SSO", scopes: ["openid", "email", "groups"], roleMap: { admin: [], operator: ["ops"] } });
    expect(both.passwordLogin).toBe(true);
  });

  it.each([
    [{ ...ENV, COUNTERSIGN_OIDC_ROLE_MAP: "{admin:" }, /COUNTERSIGN_OIDC_ROLE_MAP is not JSON/],
    [{ ...ENV, COUNTERSIGN_OIDC_ROLE_MAP: '{"owner":["x"]}' }, /COUNTERSIGN_OIDC_ROLE_MAP \(sso\.roleMap in the agents file\)/],
    [{ ...ENV, COUNTERSIGN_OIDC_ISSUER: "not a url" }, /COUNTERSIGN_OIDC_ISSUER/],
    [{ COUNTERSIGN_OIDC_CLIENT_ID: "countersign" }, /COUNTERSIGN_OIDC_ISSUER/],
    [{ ...ENV, COUNTERSIGN_OIDC_DEFAULT_ROLE: "admin" }, /COUNTERSIGN_OIDC_DEFAULT_ROLE/],
    [{ COUNTERSIGN_PASSWORD_LOGIN: "off" }, /COUNTERSIGN_PASSWORD_LOGIN=off needs single sign-on/],
  ])("a bad setting stops the boot with a sentence naming it (%#)", (env, message) => {
    expect(() => signInConfigFrom(env, undefined)).toThrow(message);
  });

  it("the highest mapped role wins; no mapped group is the default role, or a refusal", () => {
    const sso = signInConfigFrom({ ...ENV, COUNTERSIGN_OIDC_ROLE_MAP: '{"admin":["a"],"operator":["o"],"auditor":["u"]}' }, undefined).sso;
    if (!sso) throw new Error("configured above");
    expect(roleForGroups(sso, ["u", "o"])).toBe("operator");
    expect(roleForGroups(sso, ["o", "a"])).toBe("admin");
    expect(roleForGroups(sso, ["marketing"])).toBe("member");
    expect(roleForGroups({ ...sso, defaultRole: "deny" }, [])).toBeNull();
    expect(groupsOfClaim(["a", " a ", "", 3, "b"])).toEqual(["a", "b"]);
    expect(groupsOfClaim("solo")).toEqual(["solo"]);
    expect(groupsOfClaim({ a: 1 })).toEqual([]);
  });
});
