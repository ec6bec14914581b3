#!/usr/bin/env bash
# The issue-28 side by side, as run for bench/README.md since 2026-11-27 19:29 (the tenth run):
# SAP CAP and the hand-written floor of ../shared/peers on their own Postgres, then this service on a
# fresh 100k seed, then DESIGN §9's read floor on the same rows (bench/floor-server.ts's hand-written
# statements, the service's bytes; since 2026-11-28), then its design floor and complete design floor
# (bench/queue-floor-*.ts).
#
#   bench/peers/procedure/side-by-side.sh        (after npm run build; SC=e,f for writes only)
#
# PEERS: a working copy of ../shared/peers (made on first use; this adds the `design` target to its
# bench.config.json). Our Postgres and Redis: the dev stores npm start provisions (54320, 63790).
# The service's database is created again before each run from a template seeded once with
# `npm run seed -- --schemes 100000` in a database made as npm start makes it (collation C): runs
# before 2026-11-27 19:29 used one that earlier runs' POSTs had grown to 634k schemes, under C.UTF-8.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SC=${SC:-a,b,c,d,e,f}
PEERS=${PEERS:-$ROOT/.data/peers-run}
PG="psql -h 127.0.0.1 -p ${DEV_PG_PORT:-54320} -U postgres"
LOGS=${LOGS:-$ROOT/.data/side-by-side-logs}; mkdir -p "$LOGS"

if [ ! -d "$PEERS" ]; then cp -r "$ROOT/../shared/peers" "$PEERS"; fi
node -e '
  const fs = require("fs"), file = process.argv[1] + "/bench.config.json";
  const config = JSON.parse(fs.readFileSync(file, "utf8"));
  config.targets.design = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
  config.targets.hand = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
  fs.writeFileSync(file, JSON.stringify(config, null, 1) + "\n");
' "$PEERS" "$ROOT/bench/peers/procedure/design-target.json" "$ROOT/bench/peers/procedure/hand-target.json"

(cd "$PEERS" && SCHEMES=100000 TARGETS="floor cap" STOCK=0 ./run-all.sh --scenarios "$SC" > "$LOGS/capfloor.log" 2>&1)

cd "$ROOT"
export DATABASE_URL=postgres://postgres@127.0.0.1:${DEV_PG_PORT:-54320}/emapi_peers_100000 \
  REDIS_URL=redis://127.0.0.1:${DEV_REDIS_PORT:-63790} AUTH_MOCK=true \
  COMMAND_SIGNING_KEY=$(openssl rand -hex 32) LOG_LEVEL=warn QUEUE_PREFIX=peers NODE_ENV=development
redis-cli -p "${DEV_REDIS_PORT:-63790}" ping >/dev/null 2>&1 ||
  redis-server --port "${DEV_REDIS_PORT:-63790}" --save '' --appendonly no --daemonize yes >/dev/null
# Our Postgres with the peers' settings (their scripts/pg.sh), restarted so no checkpoint is under way.
DATA=$ROOT/.data/dev/pg
su postgres -c "pg_ctl -D $DATA -m fast -w stop" >/dev/null
su postgres -c "pg_ctl -D $DATA -o '-p ${DEV_PG_PORT:-54320} -c listen_addresses=127.0.0.1 -k $DATA -c max_connections=300 -c shared_buffers=1GB -c checkpoint_timeout=15min -c max_wal_size=8GB -c jit=off -c work_mem=16MB -c maintenance_work_mem=512MB -c effective_cache_size=4GB' -l $ROOT/.data/dev/pg.log -w start" >/dev/null
if [ -z "$($PG -Atc "select 1 from pg_database where datname = 'emapi_peers_template'")" ]; then
  $PG -qc "create database emapi_peers_template template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C.UTF-8'"
  DATABASE_URL=${DATABASE_URL%/*}/emapi_peers_template node dist/db/cli/seed.js --schemes 100000
fi
$PG -qc "drop database if exists emapi_peers_100000" -c "create database emapi_peers_100000 template emapi_peers_template"

started=()
start() { "$@" > "$LOGS/$(echo "${@: -1}" | tr / -).log" 2>&1 & started+=($!); }
stop_all() { kill "${started[@]}" 2>/dev/null || true; sleep 3; started=(); }

# The API as `npm run api` starts it (its V8 heap flags), so the run measures what users run.
read -r -a api_command <<< "$(node -p 'require("./package.json").scripts.api')"
PORT=3000 start "${api_command[@]}"
api=${started[0]}
start node dist/workers/commands/main.js
start node dist/workers/views/main.js
start node dist/workers/notifications/main.js
for _ in $(seq 1 60); do curl -sf http://127.0.0.1:3000/health/ready >/dev/null && break; sleep 1; done
(cd "$PEERS" && ./bench.sh project --base http://127.0.0.1:3000 --pid "$api" --scenarios "$SC" > "$LOGS/project.log" 2>&1)
stop_all

# DESIGN §9's read floor on the same rows: the hand-written statements returning the service's bytes.
reads=$(echo "$SC" | tr , '\n' | grep -E '^[abcd]$' | paste -sd, || true)
if [ -n "$reads" ]; then
  PORT=3902 start node dist/bench/floor-server.js
  for _ in $(seq 1 30); do curl -sf http://127.0.0.1:3902/hand/keyed/1 >/dev/null && break; sleep 1; done
  (cd "$PEERS" && ./bench.sh hand --base http://127.0.0.1:3902 --pid "${started[0]}" --scenarios "$reads" > "$LOGS/hand.log" 2>&1)
  stop_all
fi

if [[ ",$SC," == *",e,"* || ",$SC," == *",f,"* ]]; then
  PORT=3912 start node dist/bench/queue-floor-server.js
  start node dist/bench/queue-floor-worker.js
  sleep 3
  (cd "$PEERS" && ./bench.sh design --base http://127.0.0.1:3912 --pid "${started[0]}" --scenarios e,f > "$LOGS/design.log" 2>&1)
  stop_all
  # The complete design floor: admission, and each write's event delivered to the service's workers.
  start node dist/workers/views/main.js
  start node dist/workers/notifications/main.js
  DESIGN_FLOOR_FULL=1 DESIGN_FLOOR_QUEUE_PREFIX=peers PORT=3912 start node dist/bench/queue-floor-server.js
  DESIGN_FLOOR_FULL=1 DESIGN_FLOOR_QUEUE_PREFIX=peers start node dist/bench/queue-floor-worker.js
  sleep 4
  (cd "$PEERS" && ./bench.sh design --label design-full --base http://127.0.0.1:3912 --pid "${started[2]}" --scenarios e,f > "$LOGS/design-full.log" 2>&1)
  stop_all
fi

day=$(date -u +%F)
cd "$PEERS" && node scripts/report.js results/"$day"-{floor,cap,project,hand}.json $(ls results/"$day"-design*.json 2>/dev/null) | tee "$LOGS/table.md"
