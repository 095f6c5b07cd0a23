import { execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";

/**
 * The clients as their users get them (issue 30 point 5): each package is built from a copy of its
 * source in a scratch directory (so concurrent test runs share nothing), packed (`npm pack`; a
 * wheel), installed offline into a scratch project or virtual environment, and its scenario
 * program runs there against a running server.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const BIN = join(ROOT, "node_modules", ".bin");
const run = promisify(execFile);

export type TScratch = { dir: string; remove: () => void };

export function scratch(prefix: string): TScratch {
  const dir = mkdtempSync(join(tmpdir(), `countersign-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

async function sh(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd: options.cwd, env: options.env ?? process.env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} ${args.join(" ")} failed in ${options.cwd}: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  }
}

const copy = (from: string, to: string, names: string[]) => {
  for (const name of names) cpSync(join(from, name), join(to, name), { recursive: true });
};

/**
 * `npm pack` of clients/ts (its `prepack` compiles dist/ with the repo's TypeScript), the tarball
 * installed offline into a scratch ESM project, and test/scenario.ts type-checked there against the
 * installed package's types (NodeNext resolution, Node's types only) and compiled. Answers the
 * tarball and the compiled scenario.
 */
export async function installTsClient(dir: string): Promise<{ tarball: string; scenario: string; project: string }> {
  const source = join(ROOT, "clients", "ts");
  const pkg = join(dir, "package");
  mkdirSync(pkg);
  copy(source, pkg, ["package.json", "tsconfig.json", "README.md", "src"]);
  const env = { ...process.env, PATH: `${BIN}:${process.env.PATH ?? ""}` };
  await sh("npm", ["pack", "--pack-destination", dir, "--loglevel=warn"], { cwd: pkg, env });
  const tarball = join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz")) ?? "no tarball");
  const project = join(dir, "project");
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "scratch", private: true, type: "module" }));
  await sh("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=warn", tarball], { cwd: project });
  copy(join(source, "test"), project, ["scenario.ts"]);
  const compilerOptions = { target: "ES2022", lib: ["ES2023"], module: "NodeNext", moduleResolution: "NodeNext", strict: true, types: ["node"], typeRoots: [join(ROOT, "node_modules", "@types")], outDir: "out", skipLibCheck: false };
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["scenario.ts"] }));
  await sh(join(BIN, "tsc"), ["-p", "tsconfig.json"], { cwd: project });
  return { tarball, scenario: join(project, "out", "scenario.js"), project };
}

/** The interpreter that builds the wheel: Debian's, whose setuptools and wheel (python3-setuptools, python3-wheel) build it offline. */
const SYSTEM_PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

/**
 * clients/python built into a wheel offline (`pip wheel --no-index --no-build-isolation`, in a
 * virtual environment that sees the system's setuptools and wheel) and the wheel installed into
 * that environment. Answers its interpreter, the wheel and tests/scenario.py copied beside it (run
 * from there, the source tree is not on the path: the installed package is what it imports).
 */
export async function installPythonClient(dir: string): Promise<{ python: string; wheel: string; scenario: string }> {
  const source = join(ROOT, "clients", "python");
  const src = join(dir, "src");
  mkdirSync(src);
  copy(source, src, ["pyproject.toml", "README.md", "countersign"]);
  rmSync(join(src, "countersign", "__pycache__"), { recursive: true, force: true });
  const venv = join(dir, "venv");
  await sh(SYSTEM_PYTHON, ["-m", "venv", "--system-site-packages", "--without-pip", venv], { cwd: dir });
  const python = join(venv, "bin", "python");
  const pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input", "-q"] as const;
  const wheels = join(dir, "dist");
  await sh(pip[0], [...pip.slice(1), "wheel", "--no-index", "--no-build-isolation", "--no-deps", "-w", wheels, src], { cwd: dir });
  const wheel = join(wheels, readdirSync(wheels).find((f) => f.endsWith(".whl")) ?? "no wheel");
  await sh(pip[0], [...pip.slice(1), "install", "--no-index", wheel], { cwd: dir });
  const scenario = join(dir, "scenario.py");
  cpSync(join(source, "tests", "scenario.py"), scenario);
  return { python, wheel, scenario };
}

export type TEvent = Record<string, unknown> & { event: string };

/**
 * Runs a scenario program and hands each JSON line it prints to `onEvent` (awaited before the next
 * line is read, so a decision lands before the program's next step can need it). Answers the
 * exit code, stderr and the events by name.
 */
export async function driveScenario(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }, onEvent: (event: TEvent) => Promise<void>): Promise<{ code: number | null; stderr: string; events: Record<string, TEvent> }> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const events: Record<string, TEvent> = {};
  try {
    for await (const line of createInterface({ input: child.stdout })) {
      const event = JSON.parse(line) as TEvent;
      events[event.event === "requested" ? `requested:${String(event.step)}` : event.event] = event;
      await onEvent(event);
    }
  } finally {
    if (child.exitCode === null) child.kill();
  }
  return { code: await exited, stderr, events };
}
