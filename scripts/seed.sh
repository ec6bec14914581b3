#!/usr/bin/env bash
# npm run seed -- --schemes N [--seed S] [--skip-search]: generated data in the database npm start
# uses. With DATABASE_URL set, that database; otherwise the local PostgreSQL npm start provisioned
# under .data/dev (started again if it was stopped, created if this is the first run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
source scripts/lib/stores.sh

# Incremental: after npm start this compiles nothing (or only what changed since).
ensure_built
# The seed needs the database only: Redis is left alone.
[ -n "${DATABASE_URL:-}" ] || start_postgres dev "${DEV_PG_PORT:-54320}" emapi
exec node dist/db/cli/seed.js "$@"
