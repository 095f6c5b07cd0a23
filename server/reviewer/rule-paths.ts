import { realpathSync } from "node:fs";
import { posix } from "node:path";

/**
 * Where a reviewed command runs: its working directory, the session workspace it may change
 * (when the reviewer knows the workspaces root, `<root>/<session>`; otherwise the working
 * directory itself, which is stricter) and the server's data directory around the workspaces.
 */
export type TPathScope = { cwd: string | null; workspace: string | null; dataDir: string | null };

const inside = (root: string, path: string): boolean => path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);

/**
 * The scope of a request, given the host's workspaces root. The host names the session workspace
 * (and a working directory relative to it); without that name, an absolute working directory under
 * the root gives `<root>/<session>`, and one outside every session workspace leaves nothing writable.
 */
export function scopeOf(request: { cwd: string | null; workspace?: string }, workspaceRoot?: string): TPathScope {
  const root = workspaceRoot ? posix.resolve(workspaceRoot) : null;
  const dataDir = root ? posix.dirname(root) : null;
  const { cwd, workspace } = request;
  if (workspace) {
    const absolute = posix.resolve(workspace);
    const resolved = posix.resolve(absolute, cwd ?? ".");
    return { cwd: resolved, workspace: inside(absolute, resolved) ? absolute : null, dataDir };
  }
  // A relative working directory without its workspace: only `..`, `~` and absolute paths are known to leave.
  if (cwd !== null && !posix.isAbsolute(cwd)) return { cwd: null, workspace: null, dataDir };
  const resolvedCwd = cwd === null ? null : posix.resolve(cwd);
  if (!root) return { cwd: resolvedCwd, workspace: resolvedCwd, dataDir };
  if (resolvedCwd && inside(root, resolvedCwd) && resolvedCwd !== root) {
    const session = posix.relative(root, resolvedCwd).split("/")[0] as string;
    return { cwd: resolvedCwd, workspace: posix.join(root, session), dataDir };
  }
  return { cwd: resolvedCwd, workspace: null, dataDir };
}

/** Device files a command may write without changing anything. */
const HARMLESS_DEVICE = /^\/dev\/(?:null|zero|stdout|stderr|stdin|tty|fd\/\d+)$/;

/** The path values inside a word: itself, after a leading `@`/`<`, and after `=` (`of=/x`, `--file=/x`, `x=@/y`). */
export function pathsIn(word: string): string[] {
  const found = new Set([word]);
  const value = /^[^=]*=([@<]?)(.+)$/.exec(word);
  if (value?.[2]) found.add(value[2]);
  for (const path of [...found]) if (/^[@<]./.test(path)) found.add(path.slice(1));
  return [...found].filter((p) => p.length > 0 && !/^[a-z][\w+.-]*:\/\//i.test(p));
}

/** One level of `{a,b}` expansion: `{/tmp,.}/x` is `/tmp/x` and `./x`. */
function braceAlternatives(path: string): string[] {
  const brace = /^(.*?)\{([^{}]*,[^{}]*)\}(.*)$/.exec(path);
  return brace ? (brace[2] ?? "").split(",").map((alt) => `${brace[1]}${alt}${brace[3]}`) : [path];
}

/** Whether an existing part of `path` (inside the workspace as written) is a link that leads out of it. */
function leavesThroughLink(path: string, workspace: string): boolean {
  let realWorkspace: string;
  try {
    realWorkspace = realpathSync(workspace);
  } catch {
    return false;
  }
  for (let probe = path; inside(workspace, probe); probe = posix.dirname(probe)) {
    try {
      return !inside(realWorkspace, realpathSync(probe));
    } catch {
      if (probe === workspace) return false;
    }
  }
  return false;
}

/** The absolute path a word names from `dir`, or null when it cannot be known (variables, `~`, unknown directory). */
export function resolvePath(path: string, dir: string | null): string | null {
  if (/^~|[$`]/.test(path)) return null;
  if (posix.isAbsolute(path)) return posix.normalize(path);
  return dir === null ? null : posix.resolve(dir, path);
}

/**
 * Why `path`, used from `dir`, may lie outside the session workspace, or null when it lies inside.
 * Home directories, variables and substitutions count as outside: the reviewer cannot see where
 * they point, and a deny is safer than a guess.
 */
export function outsideWorkspace(path: string, dir: string | null, scope: TPathScope): string | null {
  for (const alt of braceAlternatives(path)) {
    if (HARMLESS_DEVICE.test(alt)) continue;
    if (alt.startsWith("~")) return `\`${path}\` is in a home directory, outside the workspace`;
    if (/[$`]/.test(alt)) return `\`${path}\` depends on a variable or substitution, so it may point outside the workspace`;
    const absolute = resolvePath(alt, dir);
    if (scope.workspace === null) {
      // No workspace is known: only a plain relative path from an unknown directory may stay inside.
      if (absolute !== null || posix.normalize(alt).split("/")[0] === "..") return `\`${path}\` is outside the workspace`;
      continue;
    }
    if (absolute === null) return `\`${path}\` is relative to a directory the command changed to, which may be outside the workspace`;
    if (!inside(scope.workspace, absolute)) {
      return posix.isAbsolute(alt) ? `\`${path}\` is outside the workspace` : `\`${path}\` escapes the workspace`;
    }
    if (leavesThroughLink(absolute, scope.workspace)) return `\`${path}\` leads through a symbolic link out of the workspace`;
  }
  return null;
}

const CREDENTIAL_STORES: Array<[RegExp, string]> = [
  [/(?:^|\/)\.ssh(?:\/|$)|(?:^|\/)id_(?:rsa|dsa|ecdsa|ed25519)$/, "SSH keys"],
  [/(?:^|\/)\.aws(?:\/|$)/, "AWS credentials"],
  [/(?:^|\/)\.config\/gcloud(?:\/|$)/, "Google Cloud credentials"],
  [/(?:^|\/)\.azure(?:\/|$)/, "Azure credentials"],
  [/(?:^|\/)\.kube\/config$/, "Kubernetes credentials"],
  [/(?:^|\/)[._]netrc$/, "a .netrc file"],
  [/(?:^|\/)\.git-credentials$/, "stored Git credentials"],
  [/(?:^|\/)\.docker\/config\.json$/, "Docker registry credentials"],
  [/(?:^|\/)\.config\/gh\/hosts\.yml$/, "the GitHub CLI token"],
  [/(?:^|\/)\.(?:gnupg|password-store)(?:\/|$)/, "private keys"],
  [/(?:^|\/)\.pgpass$/, "database passwords"],
  [/^\/etc\/(?:g?shadow-?|master\.passwd|security\/opasswd)$/, "password hashes"],
  [/(?:^|\/)Library\/Keychains(?:\/|$)|\.keychain(?:-db)?$|(?:^|\/)\.local\/share\/keyrings(?:\/|$)|(?:^|\/)\.kde\d?\/share\/apps\/kwallet/, "a keychain"],
];
/** Secrets a project may legitimately keep in its own workspace, but not read from elsewhere. */
const OUTSIDE_SECRETS = /(?:^|\/)\.(?:env(?:\.[\w.-]+)?|npmrc|pypirc)$/;
/** The server's own files, recognisable by name when the data directory is not known. */
const SERVER_FILES = /(?:^|\/)(?:secret-key|auth-secret|server\.json|demo-credentials\.txt)$|(?:^|\/)pglite(?:\/|$)/;

/** What credential store `path` (used from `dir`) is, or null: SSH/cloud keys, keychains, the server's data directory. */
export function credentialStore(path: string, dir: string | null, scope: TPathScope): string | null {
  for (const [pattern, what] of CREDENTIAL_STORES) if (pattern.test(path)) return what;
  // A glob in a home directory's dot-folder (`~/.s*/id*`) could match any of them.
  if (/^(?:~|\$\{?HOME\}?)[^/]*\/\.[^/]*[*?[]/.test(path)) return "a hidden folder of the home directory";
  const outside = outsideWorkspace(path, dir, scope) !== null;
  if (outside && OUTSIDE_SECRETS.test(path)) return "a secrets file outside the workspace";
  const absolute = resolvePath(path, dir);
  if (scope.dataDir && absolute && inside(scope.dataDir, absolute) && !(scope.workspace && inside(scope.workspace, absolute))) return "the server's data directory";
  if (outside && SERVER_FILES.test(path)) return "the server's data directory";
  return null;
}
