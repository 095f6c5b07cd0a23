import { afterAll } from "vitest";

/**
 * The integration files share one worker process (`isolate: false` in vitest.config.ts), so what a
 * file sets in `process.env` would reach the files after it. Each file gets the environment back as
 * it found it when it ends.
 */
const before = { ...process.env };

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in before)) delete process.env[name];
  for (const [name, value] of Object.entries(before)) if (process.env[name] !== value) process.env[name] = value;
});
