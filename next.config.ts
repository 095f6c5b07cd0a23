import type { NextConfig } from "next";
import createNextIntlPlugin from "next-intl/plugin";

const nextConfig: NextConfig = {
  // PGlite loads its .wasm/.data relative to its own file; keep the database drivers external.
  serverExternalPackages: ["@electric-sql/pglite", "postgres"],
  poweredByHeader: false,
  // Type-check only the console (and the server types it imports) during `next build`;
  // `npm run typecheck` covers the whole repository, tests included.
  typescript: { tsconfigPath: "tsconfig.next.json" },
};

/** next-intl: the request configuration (locale and messages) lives in i18n/request.ts. */
const withNextIntl = createNextIntlPlugin("./i18n/request.ts");

export default withNextIntl(nextConfig);
