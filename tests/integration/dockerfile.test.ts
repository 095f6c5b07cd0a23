import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { expect, test } from "vitest";

const dockerfile = readFileSync("Dockerfile", "utf8");

test("the Dockerfile: node:20-slim, bubblewrap, npm ci, next build, a non-root user", () => {
  expect(dockerfile).toMatch(/^FROM node:20-slim$/m);
  expect(dockerfile).toMatch(/apt-get install[^\n]*bubblewrap/);
  expect(dockerfile).toMatch(/^RUN npm ci\b/m);
  expect(dockerfile).toMatch(/^RUN npx next build$/m);
  const user = dockerfile.match(/^USER (\S+)$/m)?.[1];
  expect(user).toBeDefined();
  expect(user).not.toMatch(/^(root|0)(:|$)/);
  // The last USER wins: nothing switches back to root after it.
  expect(dockerfile.slice(dockerfile.lastIndexOf("\nUSER "))).not.toMatch(/^USER (root|0)/m);
});

test("the Dockerfile: tini is PID 1 and starts node itself (no shell, no npm: docker stop's SIGTERM reaches the server, orphans are reaped)", () => {
  expect(dockerfile).toMatch(/apt-get install[^\n]*\btini\b/);
  expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
  expect(dockerfile).toMatch(/^CMD \["node", "--import", "tsx", "server\/main\.ts"\]$/m);
});

/** A container engine that answers (a CLI on PATH whose daemon is down cannot build). */
function engine(): { cmd: string | null; reason: string } {
  for (const cmd of ["docker", "podman"]) {
    const found = spawnSync("sh", ["-c", `command -v ${cmd}`], { encoding: "utf8" });
    if (found.status !== 0) continue;
    const info = spawnSync(cmd, ["info"], { encoding: "utf8", timeout: 20_000 });
    if (info.status === 0) return { cmd, reason: "" };
    return { cmd: null, reason: `${cmd} is on PATH but does not answer (${(info.stderr || info.stdout).trim().split("\n").pop()})` };
  }
  return { cmd: null, reason: "neither docker nor podman is on PATH" };
}

const found = engine();
if (!found.cmd) console.warn(`skipping the image build: ${found.reason}`);

test.skipIf(!found.cmd)(`the image builds and runs as a non-root user (skipped when no container engine answers: ${found.reason || "found"})`, () => {
  const tag = `countersign-test:${process.pid}`;
  const build = spawnSync(found.cmd as string, ["build", "-t", tag, "."], { encoding: "utf8", timeout: 1_500_000 });
  expect(build.status, build.stderr).toBe(0);
  try {
    const id = spawnSync(found.cmd as string, ["run", "--rm", "--entrypoint", "id", tag, "-u"], { encoding: "utf8", timeout: 60_000 });
    expect(id.status, id.stderr).toBe(0);
    expect(id.stdout.trim()).not.toBe("0");
    const bwrap = spawnSync(found.cmd as string, ["run", "--rm", "--entrypoint", "sh", tag, "-c", "command -v bwrap"], { encoding: "utf8", timeout: 60_000 });
    expect(bwrap.stdout.trim()).toMatch(/bwrap$/);
    const tini = spawnSync(found.cmd as string, ["run", "--rm", "--entrypoint", "/usr/bin/tini", tag, "--version"], { encoding: "utf8", timeout: 60_000 });
    expect(tini.status, tini.stderr).toBe(0);
  } finally {
    spawnSync(found.cmd as string, ["rmi", "-f", tag], { timeout: 60_000 });
  }
}, 1_800_000);
