import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite loads its .wasm/.data relative to its own file; keep the database drivers external.
  serverExternalPackages: ["@electric-sql/pglite", "postgres"],
  poweredByHeader: false,
  // Type-check only the console (and the server types it imports) during `next build`;
  // `npm run typecheck` covers the whole repository, tests included.
  typescript: { tsconfigPath: "tsconfig.next.json" },
};

export default nextConfig;
