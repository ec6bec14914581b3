#!/usr/bin/env bash
# npm run bench [-- --schemes N]: provisions the local stores like npm start (a database of its own
# per size, emapi_bench_<N>, so each data set is seeded once and kept between runs: the scale run of
# bench/scale-reads.ts compares them), seeds it to N schemes when it has fewer, then runs bench/run.ts.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
source scripts/lib/stores.sh

schemes=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --schemes) schemes=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

ensure_built
provision_stores dev "${DEV_PG_PORT:-54320}" "${DEV_REDIS_PORT:-63790}" "emapi_bench_$schemes"
node dist/db/cli/migrate.js
have=$(node -e "const pg=require('pg');const c=new pg.Client(process.env.DATABASE_URL);c.connect().then(()=>c.query('select count(*)::int n from schemes')).then(r=>{console.log(r.rows[0].n);return c.end()})")
if [ "$have" -lt "$schemes" ]; then
  node dist/db/cli/seed.js --schemes $((schemes - have))
fi
node dist/bench/run.js
# The command worker's CPU per PATCH without the queue, in one process (bench/command-cpu.ts).
if [ -z "${BENCH_ONLY:-}" ] || [[ ",$BENCH_ONLY," == *",command-cpu,"* ]]; then
  node dist/bench/command-cpu.js
fi
