#!/usr/bin/env bash
# Stops the local PostgreSQL and Redis that npm start provisioned under .data/dev (data is kept).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/stores.sh
ensure_pg_binaries
PG_DATA_DIR=$(pg_data_dir dev)
REDIS_PID_FILE="$PWD/.data/dev/redis/redis.pid"
stop_stores
echo "local stores stopped (data kept in .data/dev)"
