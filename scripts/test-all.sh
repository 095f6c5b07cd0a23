#!/usr/bin/env bash
# Installs what the tests need and runs every test: static checks, unit and integration tests
# on PGlite, the integration suite again on PostgreSQL when TEST_DATABASE_URL is set, the
# benchmarks at --quick sizes (they must run, not be fast), then the Playwright end-to-end tests
# in the system Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export NEXT_TELEMETRY_DISABLED=1

# Chromium for the end-to-end tests (and a Chinese font for its screenshots); bubblewrap, the sandbox approved commands run in (the tests
# prove confinement in it; without it the server falls back to a weaker mode and says so).
MISSING=""
command -v chromium >/dev/null 2>&1 || MISSING="$MISSING chromium"
command -v bwrap >/dev/null 2>&1 || MISSING="$MISSING bubblewrap"
# A CJK font, so the Chinese pages' screenshots show characters rather than empty boxes.
[ -e /usr/share/fonts/truetype/wqy/wqy-microhei.ttc ] || MISSING="$MISSING fonts-wqy-microhei"
# The Python client is built and installed offline from its wheel (tests/integration/clients.test.ts):
# Debian's interpreter, its pip, setuptools and wheel build and install it without reaching PyPI
# (into a scratch venv made with --system-site-packages --without-pip).
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import venv, pip' >/dev/null 2>&1 || MISSING="$MISSING python3 python3-venv python3-pip"
/usr/bin/python3 -c 'import setuptools' >/dev/null 2>&1 || MISSING="$MISSING python3-setuptools"
/usr/bin/python3 -c 'import wheel' >/dev/null 2>&1 || MISSING="$MISSING python3-wheel"
if [ -n "$MISSING" ]; then
  echo "== installing Debian packages:$MISSING"
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq && $SUDO apt-get install -y -qq $MISSING >/dev/null
fi

echo "== npm ci"
npm ci --loglevel=warn --no-audit --no-fund

echo "== type check and lint"
npx tsc --noEmit
npx biome lint .
# Folder layers: no import against the graph of .dependency-cruiser.cjs, no cycle between folders (docs/architecture.md).
npm run lint:layers

mkdir -p test-results
# Two lanes run side by side: every test file opens its own database (an in-memory PGlite, or a
# throw-away database on the PostgreSQL server), so the PGlite pass and the PostgreSQL passes share
# no state. Each lane's lines carry its name; the script fails if either lane fails, after both end.
lane_pglite() {
  echo "== unit + integration tests on PGlite"
  TEST_DB=pglite npx vitest run --project unit --project integration --reporter=default --reporter=json --outputFile.json=test-results/vitest-pglite.json
}
lane_postgres() {
  if [ -n "${TEST_DATABASE_URL:-}" ]; then
    echo "== integration tests on PostgreSQL ($TEST_DATABASE_URL)"
    TEST_DB=postgres npx vitest run --project integration --reporter=default --reporter=json --outputFile.json=test-results/vitest-postgres.json
    echo "== replicas: 3 server processes on one PostgreSQL"
    TEST_DB=postgres npx vitest run --project replicas --reporter=default --reporter=json --outputFile.json=test-results/vitest-replicas.json
    echo "== faults: replica kill mid-decision, PostgreSQL restart (own throwaway cluster), WebSocket drops, pool exhaustion"
    TEST_DB=postgres npx vitest run --project faults --reporter=default --reporter=json --outputFile.json=test-results/vitest-faults.json
  else
    echo "== TEST_DATABASE_URL is not set: skipping the PostgreSQL pass"
  fi
  echo "== benchmarks, --quick (small sizes: proves every benchmark still runs; speed is judged by npm run bench, not here)"
  npm run bench -- --quick
  echo "== production build for the end-to-end tests"
  npx next build
}
STARTED=$SECONDS
( lane_pglite 2>&1 | sed -u 's/^/[pglite] /' ) &
PGLITE_PID=$!
( lane_postgres 2>&1 | sed -u 's/^/[postgres] /' ) &
POSTGRES_PID=$!
FAILED=""
wait "$PGLITE_PID" || FAILED="$FAILED pglite"
echo "== lane pglite ended after $((SECONDS - STARTED)) s"
wait "$POSTGRES_PID" || FAILED="$FAILED postgres"
echo "== lane postgres ended after $((SECONDS - STARTED)) s"
if [ -n "$FAILED" ]; then
  echo "== failed lanes:$FAILED"
  node scripts/test-summary.mjs test-results/vitest-pglite.json test-results/vitest-postgres.json test-results/vitest-replicas.json test-results/vitest-faults.json || true
  exit 1
fi

echo "== end-to-end tests (Playwright, system Chromium)"
PLAYWRIGHT_JSON_OUTPUT_NAME=test-results/playwright.json npx playwright test --reporter=list,json

node scripts/test-summary.mjs test-results/vitest-pglite.json test-results/vitest-postgres.json test-results/vitest-replicas.json test-results/vitest-faults.json test-results/playwright.json
