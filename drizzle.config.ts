import { defineConfig } from "drizzle-kit";

// Only `generate` is used: the server applies migrations itself at boot, on PGlite or PostgreSQL.
export default defineConfig({
  dialect: "postgresql",
  schema: "./db/schema/index.ts",
  out: "./db/migrations",
});
