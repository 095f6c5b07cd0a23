/**
 * Where to go after signing in. `next` is resolved the way the browser would resolve it against
 * the console's own origin (`new URL(next, origin)`), so backslashes, tabs, `//host`, `https:host`,
 * `javascript:` and their encoded forms are judged exactly as the browser would follow them;
 * anything that does not land on this origin goes to `/`.
 */
export function safeNextPath(next: string | null | undefined, origin: string): string {
  if (!next) return "/";
  let target: URL;
  let home: URL;
  try {
    home = new URL(origin);
    target = new URL(next, home);
  } catch {
    return "/";
  }
  if (target.origin !== home.origin || (target.protocol !== "http:" && target.protocol !== "https:")) return "/";
  // Never back to the login page itself (it would bounce here again).
  if (target.pathname === "/login") return "/";
  // A path like `/.//evil` resolves to the pathname `//evil`, which would itself leave the origin.
  const path = `${target.pathname.replace(/^\/+/, "/")}${target.search}${target.hash}`;
  return new URL(path, home).origin === home.origin ? path : "/";
}
