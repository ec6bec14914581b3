#!/usr/bin/env bash
# npm start: install, build, provision local stores when none are configured, migrate, run everything.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
source scripts/lib/stores.sh

ensure_built
provision_stores dev "${DEV_PG_PORT:-54320}" "${DEV_REDIS_PORT:-63790}" emapi
node dist/db/cli/migrate.js
# Local stores started here keep running after Ctrl-C (their data lives in .data/dev); stop them
# with `npm run stores:stop`.
exec node dist/scripts/supervisor.js
