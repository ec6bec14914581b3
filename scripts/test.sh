#!/usr/bin/env bash
# npm test: install, build, lint, then the whole ava suite against throwaway Postgres and Redis
# servers of its own (ports and data apart from npm start's), stopped again at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
source scripts/lib/stores.sh

ensure_built
echo "[test] lint, layer rules, dependency cycles, unused code…" >&2
npx eslint . --max-warnings=0 # includes the layer rules (eslint.config.mjs)
npx prettier --check . >/dev/null || { npx prettier --check . ; exit 1; }
npx madge --circular --extensions ts --ts-config tsconfig.json api workers domain db infra >/dev/null \
  || { npx madge --circular --extensions ts --ts-config tsconfig.json api workers domain db infra; exit 1; }
npx madge --json --extensions ts --ts-config tsconfig.json api workers domain db infra 2>/dev/null \
  | node dist/scripts/check-folder-cycles.js
npx knip # unused files, exports and dependencies (knip.json)

# Tests never use DATABASE_URL / REDIS_URL (npm start's stores); TEST_DATABASE_URL / TEST_REDIS_URL
# point them at servers of your own, otherwise throwaway ones are started and removed.
unset DATABASE_URL REDIS_URL
[ -n "${TEST_DATABASE_URL:-}" ] && export DATABASE_URL="$TEST_DATABASE_URL"
[ -n "${TEST_REDIS_URL:-}" ] && export REDIS_URL="$TEST_REDIS_URL"
reset_stores test "${TEST_PG_PORT:-54330}" "${TEST_REDIS_PORT:-63800}"
trap stop_stores EXIT
ensure_chromium
PG_FSYNC=off provision_stores test "${TEST_PG_PORT:-54330}" "${TEST_REDIS_PORT:-63800}" emapi_template
export NODE_ENV=test
# One signing key for the whole run: in-process stacks and the processes tests spawn share it.
export COMMAND_SIGNING_KEY="${COMMAND_SIGNING_KEY:-test-signing-key-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
DATABASE_URL="$DATABASE_URL" node dist/db/cli/migrate.js
# Each test file clones the migrated template database and uses its own queue prefix (test/support).
export TEST_TEMPLATE_DATABASE_URL="$DATABASE_URL"
# The replica tests make a streaming replica of this server with the same PostgreSQL binaries.
# (pg_ctl may be a symlink on PATH: its real directory also holds pg_basebackup and psql.)
if PG_BIN=${PG_BIN:-$(find_pg_bin)}; then TEST_PG_BIN=$(dirname "$(readlink -f "$PG_BIN/pg_ctl")"); export TEST_PG_BIN; fi
npx ava "$@"
# The whole suite (no arguments) then runs the write, event, /Jobs and webhook delivery (and fairness) suites again with every stack
# on a three-node Redis Cluster of its own (TEST_ON_REDIS_CLUSTER, test/support/stack.ts; DESIGN §14).
# writes-unavailable cuts one Redis's connection through a proxy: one server only.
if [ "$#" -eq 0 ]; then
  echo "[test] the write, event, /Jobs and webhook delivery suites on a Redis Cluster…" >&2
  mapfile -t on_cluster < <(ls dist/test/integration/{writes-*,events-e2e,jobs,webhooks-delivery,webhooks-fairness}.test.js | grep -v writes-unavailable)
  TEST_ON_REDIS_CLUSTER=1 npx ava "${on_cluster[@]}"
fi
