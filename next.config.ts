import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // PGlite loads its .wasm/.data relative to its own file; keep the database drivers external.
  serverExternalPackages: ["@electric-sql/pglite", "postgres"],
  poweredByHeader: false,
};

export default nextConfig;
