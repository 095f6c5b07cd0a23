import { dangerViews, peelWrappers, type TLooseCommand } from "./rule-commands";
import { credentialStore, outsideWorkspace, pathsIn, resolvePath, type TPathScope } from "./rule-paths";
import type { TDanger } from "./danger";
import { parseShell, SUBSTITUTION, type TRedirect } from "./shell-words";
import { servedDirectory, uploadedFiles, writeTargets, WRITERS } from "./rule-targets";

/**
 * The rules that need to know where the workspace is: deleting or changing anything outside it,
 * uploading a file from outside it, and reading credential stores (SSH and cloud keys, keychains,
 * the server's data directory). They read exact words (see `shell-words.ts`), follow `cd` through
 * the line, and see into `sh -c`, `eval` and substitutions.
 */

type TStep = { command: TLooseCommand; redirects: TRedirect[] };

const MAX_NESTING = 4;

/** The simple commands of a line in order, wrappers peeled; `sh -c`, `eval` and substitutions read as lines of their own. */
function stepsOf(line: string, depth = 0): TStep[] {
  if (depth > MAX_NESTING) return [];
  const { segments, substitutions } = parseShell(line);
  const steps: TStep[] = [];
  for (const { words, redirects } of segments) {
    const evalAt = words.indexOf("eval");
    if (evalAt >= 0) {
      steps.push(...stepsOf(words.slice(evalAt + 1).join(" "), depth + 1));
      continue;
    }
    const peeled = peelWrappers(words);
    steps.push(...peeled.wrappers.map((command) => ({ command, redirects: [] })));
    if (peeled.shellArgs?.[0]) steps.push(...stepsOf(peeled.shellArgs[0], depth + 1));
    steps.push({ command: peeled.command ?? { name: "", args: [], elevated: false }, redirects });
  }
  for (const inner of substitutions) steps.push(...stepsOf(inner, depth + 1));
  return steps;
}

/** Words that look like paths worth checking (not options, URLs, or plain names). */
const looksLikePath = (word: string): boolean => /^(?:[/~$]|\.\.)|\/\.\.(?:\/|$)/.test(word);

const IDENTITY_USERS = new Set(["ssh", "scp", "sftp", "rsync", "git"]);
/** An ssh identity file (`-i key`, `-o IdentityFile=key`) is used to sign in, not read out. */
function withoutIdentityFiles(c: TLooseCommand): string[] {
  if (!IDENTITY_USERS.has(c.name)) return c.args;
  return c.args.filter((a, i) => !(a === "-i" || /^-i./.test(a) || /^IdentityFile[= ]/i.test(a) || c.args[i - 1] === "-i" || (c.args[i - 1] === "-o" && /^IdentityFile/i.test(a))));
}

const CREDENTIAL_COMMANDS =
  /^(?:security (?:find-(?:generic|internet)-password|dump-keychain|export)|secret-tool (?:lookup|search)|kwallet-query|gh auth token|git credential(?:-\w+)? (?:fill|get)|gcloud auth (?:application-default )?print-(?:access|identity)-token|aws configure (?:get|export-credentials)|docker-credential-[\w-]+ get|az account get-access-token)\b/;

function credentialRead(c: TLooseCommand, redirects: TRedirect[], dir: string | null, scope: TPathScope): string | null {
  if (CREDENTIAL_COMMANDS.test([c.name, ...c.args].join(" "))) return `\`${c.name}\` prints stored credentials.`;
  for (const word of [...withoutIdentityFiles(c), ...redirects.map((r) => r.target)]) {
    for (const path of pathsIn(word)) {
      const store = credentialStore(path, dir, scope);
      if (store) return `\`${c.name || "a redirection"}\` reads \`${path}\` (${store}).`;
    }
  }
  return null;
}

/** Where `cd`/`pushd` leaves the line: null when it cannot be known (`cd`, `cd ~`, `cd -`, `cd $DIR`). */
function nextDir(c: TLooseCommand, dir: string | null): string | null {
  const target = c.args.find((a) => !a.startsWith("-") || a === "-");
  if (target === undefined || target === "-") return null;
  return resolvePath(target, dir);
}

const DECODERS = /\bbase64\s+(?:-d|--decode|-D)\b|\bxxd\s+-r\b|\bopenssl\s+(?:enc|base64)\b[^|;&]*\s-d\b|\bprintf\s+['"]?[^'"|]*\\(?:x[0-9a-f]{2}|[0-7]{3})/i;

/** Finds a scope danger in `command` run from the scope's working directory, or null. */
export function findScopeDanger(command: string, scope: TPathScope): TDanger | null {
  const line = dangerViews(command)[0] ?? command;
  const steps = stepsOf(line);
  let dir = scope.cwd;
  const outsideLinks: string[] = [];
  const outsideMentioned = steps.some(({ command: c }) => c.args.some((a) => pathsIn(a).some((p) => looksLikePath(p) && outsideWorkspace(p, dir, scope))));
  const throughLink = (target: string, from: string | null): string | null => {
    const absolute = resolvePath(target, from);
    const link = absolute && outsideLinks.find((l) => absolute === l || absolute.startsWith(`${l}/`));
    return link ? `\`${target}\` leads through a symbolic link created by this command to outside the workspace` : null;
  };

  for (const { command: c, redirects } of steps) {
    if (c.name === "cd" || c.name === "pushd") {
      dir = nextDir(c, dir);
      continue;
    }
    const written: Array<[string, string]> = [
      ...writeTargets(c).map((t): [string, string] => [`\`${c.name}\` deletes or changes`, t]),
      ...redirects.filter((r) => r.op === ">").map((r): [string, string] => ["A redirection writes", r.target]),
    ];
    for (const [verb, target] of written) {
      const why = outsideWorkspace(target, dir, scope) ?? throughLink(target, dir);
      if (why) return { category: "destructive", rationale: `${verb} files outside the workspace: ${why}.` };
    }
    if (c.name === "ln") {
      const operands = c.args.filter((a) => !a.startsWith("-"));
      const [source, name] = operands;
      const symbolic = c.args.some((a) => /^-[a-zA-Z]*s|^--symbolic/.test(a));
      if (source && outsideWorkspace(source, dir, scope)) {
        // A hard link shares the outside file's data; a symbolic one only matters if the line writes through it.
        if (!symbolic) return { category: "destructive", rationale: `\`ln\` hard-links \`${source}\` from outside the workspace, so writing the link changes it.` };
        const linkPath = resolvePath(name ?? source.split("/").filter(Boolean).pop() ?? source, dir);
        if (linkPath) outsideLinks.push(linkPath);
      }
    }
    if (c.name === "find") {
      const firstTest = c.args.findIndex((a) => /^[-(!]/.test(a));
      const starts = firstTest < 0 ? c.args : c.args.slice(0, firstTest);
      const deletes = c.args.includes("-delete") || c.args.some((a, i) => /^-(?:exec|execdir|ok|okdir)$/.test(a) && WRITERS.has((c.args[i + 1] ?? "").split("/").pop() ?? ""));
      const outside = deletes ? starts.map((s) => outsideWorkspace(s, dir, scope)).find(Boolean) : null;
      if (outside) return { category: "destructive", rationale: `\`find\` deletes or changes files outside the workspace: ${outside}.` };
    }
    if (c.fromStdin && WRITERS.has(c.name) && (outsideMentioned || DECODERS.test(line))) {
      return { category: "destructive", rationale: `\`xargs ${c.name}\` takes its targets from input that names paths outside the workspace or is decoded at run time.` };
    }
    if ((c.name.startsWith("$") || c.name.includes(SUBSTITUTION)) && outsideMentioned) {
      return { category: "obfuscated", rationale: `The command's name is computed at run time (\`${c.name}\`) and it names paths outside the workspace.` };
    }
    for (const file of uploadedFiles(c, redirects)) {
      const why = file === "-" ? (outsideMentioned ? "its input comes from outside the workspace" : null) : (credentialStore(file, dir, scope) ?? outsideWorkspace(file, dir, scope));
      if (why) return { category: "exfiltration", rationale: `\`${c.name}\` uploads a local file to another host: ${why}.` };
    }
    const served = servedDirectory(c);
    const servedOutside = served === null ? null : outsideWorkspace(served, dir, scope);
    if (servedOutside) return { category: "exfiltration", rationale: `\`${c.name} -m http.server\` serves files outside the workspace to the network: ${servedOutside}.` };
    // Last, so a deletion or an upload of a credential file is named as what it does.
    const credential = credentialRead(c, redirects, dir, scope);
    if (credential) return { category: "credential access", rationale: credential };
  }
  return null;
}
