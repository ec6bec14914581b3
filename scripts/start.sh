#!/usr/bin/env bash
# npm start: install, build, provision local stores when none are configured, migrate, run everything.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
source scripts/lib/stores.sh

ensure_built
provision_stores dev "${DEV_PG_PORT:-54320}" "${DEV_REDIS_PORT:-63790}" emapi
node dist/db/cli/migrate.js
# A database without schemes gets the demo data set (SEED_DEMO=false skips it); it says what it did.
node dist/db/cli/seed-demo.js || echo "[start] the demo data set could not be loaded (see above); starting without it" >&2
# No auth settings: a local try-out with mock authentication (loopback only), said out loud.
if [ -z "${AUTH_MOCK:-}${AUTH_ISSUER_BASE_URL:-}${AUTH_ISSUER:-}${AUTH_JWKS_URI:-}${AUTH_SECRET:-}" ]; then
  export AUTH_MOCK=true
  echo "[start] no AUTH_* setting given: AUTH_MOCK=true (every caller is ${AUTH_MOCK_ROLE:-Admin}, API on 127.0.0.1 only)" >&2
fi
# Commands in the queue are signed; the key is generated once and kept beside the local stores.
if [ -z "${COMMAND_SIGNING_KEY:-}" ]; then
  key_file=.data/command-signing-key
  if [ ! -s "$key_file" ]; then
    mkdir -p .data && (umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$key_file")
    echo "[start] generated COMMAND_SIGNING_KEY into $key_file" >&2
  fi
  COMMAND_SIGNING_KEY=$(cat "$key_file")
  export COMMAND_SIGNING_KEY
fi
# Prometheus metrics of every process on the API's port (GET /metrics, DESIGN §15; the supervisor gives the
# workers loopback metrics ports and the API METRICS_PEERS); METRICS_ENABLED=false turns them off.
export METRICS_ENABLED="${METRICS_ENABLED:-true}"
# Local stores started here keep running after Ctrl-C (their data lives in .data/dev); stop them
# with `npm run stores:stop`.
exec node dist/scripts/supervisor.js
