# Provisions throwaway local PostgreSQL and Redis servers under .data/<name>/ when DATABASE_URL /
# REDIS_URL are not given. Sourced by start.sh and test.sh; exports DATABASE_URL and REDIS_URL.
# Usage: provision_stores <name> <pg-port> <redis-port> <database>

say() { printf '[stores] %s\n' "$*" >&2; }
die() { printf '[stores] %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }

apt_install() {
  is_root || return 1
  command -v apt-get >/dev/null || return 1
  say "installing $* with apt-get (one time)…"
  if [ -z "${EMAPI_APT_UPDATED:-}" ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || return 1
    EMAPI_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1 || return 1
}

find_pg_bin() {
  local dir
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v pg_ctl)"; return 0
  fi
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -Vr); do
    [ -x "$dir/initdb" ] && { echo "$dir"; return 0; }
  done
  return 1
}

ensure_pg_binaries() {
  PG_BIN=$(find_pg_bin) || {
    apt_install postgresql postgresql-contrib || die "PostgreSQL server is not installed: install it (for example 'apt-get install postgresql') or set DATABASE_URL."
    PG_BIN=$(find_pg_bin) || die "PostgreSQL server binaries not found after install: set DATABASE_URL."
  }
  ensure_pg_extensions
}

# The extensions the migrations create (docs/configuration.md): pg_trgm, from PostgreSQL's contrib.
# Debian's server package ships contrib; a build without it gets the contrib package of its version.
ensure_pg_extensions() {
  local bin share version
  bin=$(dirname "$(readlink -f "$PG_BIN/postgres")") # /usr/local/bin may hold links to the real bin dir
  share=$("$bin/pg_config" --sharedir 2>/dev/null || echo "$bin/../share")
  [ -f "$share/extension/pg_trgm.control" ] && return 0
  version=$("$bin/postgres" --version | sed -E 's/[^0-9]*([0-9]+).*/\1/')
  apt_install "postgresql-contrib-$version" || apt_install postgresql-contrib \
    || die "the pg_trgm extension (PostgreSQL contrib) is missing: install your server's contrib package (for example 'apt-get install postgresql-contrib') or set DATABASE_URL."
  [ -f "$share/extension/pg_trgm.control" ] || die "pg_trgm is still missing after installing contrib: set DATABASE_URL to a server that has it."
}

ensure_redis_binary() {
  command -v redis-server >/dev/null && return 0
  apt_install redis-server || die "Redis is not installed: install it (for example 'apt-get install redis-server') or set REDIS_URL."
  command -v redis-server >/dev/null || die "redis-server not found after install: set REDIS_URL."
}

# The browser checks of the suite (docs page, Bull Board login) drive Debian's headless Chromium.
ensure_chromium() {
  [ -n "${CHROMIUM_PATH:-}" ] && return 0
  command -v chromium >/dev/null && return 0
  apt_install chromium fonts-liberation || die "Chromium is not installed: install it (for example 'apt-get install chromium') or set CHROMIUM_PATH."
  command -v chromium >/dev/null || die "chromium not found after install: set CHROMIUM_PATH."
}

# As root, PostgreSQL must run as an unprivileged user on a directory that user owns and can reach.
pg_run() {
  # From / so the postgres user is not refused the caller's working directory.
  if is_root; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

pg_data_dir() {
  local name=$1
  local dir="$PWD/.data/$name/pg"
  if is_root && ! runuser -u postgres -- test -x "$PWD/.data" 2>/dev/null; then
    # The checkout lies where the postgres user cannot reach (e.g. a private temp dir).
    dir="/var/tmp/emapi-$(printf '%s' "$PWD" | sha1sum | cut -c1-12)/$name/pg"
  fi
  echo "$dir"
}

start_postgres() {
  local name=$1 port=$2 database=$3 dir
  ensure_pg_binaries
  mkdir -p "$PWD/.data/$name"
  chmod 755 "$PWD/.data" "$PWD/.data/$name" 2>/dev/null || true
  dir=$(pg_data_dir "$name")
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    is_root && chown -R postgres: "$(dirname "$dir")"
    pg_run "$PG_BIN/initdb" -D "$dir" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null \
      || pg_run "$PG_BIN/initdb" -D "$dir" -U postgres --auth=trust --encoding=UTF8 --no-locale >/dev/null \
      || die "initdb failed for $dir"
  fi
  if ! pg_run "$PG_BIN/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      die "port $port is taken by another server (another checkout's local PostgreSQL? stop it with 'npm run stores:stop' there), or choose other ports with DEV_PG_PORT / TEST_PG_PORT."
    fi
    pg_run "$PG_BIN/pg_ctl" -D "$dir" -w -t 60 -l "$dir/../postgres.log" \
      -o "-p $port -c listen_addresses=127.0.0.1 -k $dir -c max_connections=300 -c shared_buffers=256MB -c fsync=${PG_FSYNC:-on}" \
      start >/dev/null || { tail -20 "$dir/../postgres.log" >&2; die "PostgreSQL failed to start on port $port"; }
  fi
  PG_DATA_DIR=$dir
  local psql="$PG_BIN/psql"; [ -x "$psql" ] || psql=psql
  if ! "$psql" -h 127.0.0.1 -p "$port" -U postgres -Atqc "select 1 from pg_database where datname='$database'" postgres | grep -q 1; then
    # C collation: text sorts by code point and LIKE 'prefix%' is served by ordinary btree indexes.
    "$psql" -h 127.0.0.1 -p "$port" -U postgres -qc "create database \"$database\" template template0 encoding 'UTF8' lc_collate 'C' lc_ctype 'C.UTF-8'" postgres >/dev/null \
      || die "could not create database $database"
  fi
  export DATABASE_URL="postgres://postgres@127.0.0.1:$port/$database"
  say "PostgreSQL ready at $DATABASE_URL (data in $dir)"
}

stop_postgres() {
  [ -n "${PG_DATA_DIR:-}" ] && pg_run "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" -m fast -w stop >/dev/null 2>&1 || true
}

start_redis() {
  local name=$1 port=$2
  local dir="$PWD/.data/$name/redis"
  ensure_redis_binary
  mkdir -p "$dir"
  if ! redis-cli -p "$port" ping >/dev/null 2>&1; then
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
      --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --save '' --appendonly no \
      --maxmemory-policy noeviction >/dev/null || die "Redis failed to start on port $port"
    for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  fi
  REDIS_PID_FILE="$dir/redis.pid"
  export REDIS_URL="redis://127.0.0.1:$port"
  say "Redis ready at $REDIS_URL"
}

stop_redis() {
  [ -n "${REDIS_PID_FILE:-}" ] && [ -f "$REDIS_PID_FILE" ] && kill "$(cat "$REDIS_PID_FILE")" 2>/dev/null || true
}

provision_stores() {
  local name=$1 pg_port=$2 redis_port=$3 database=$4
  if [ -z "${DATABASE_URL:-}" ]; then start_postgres "$name" "$pg_port" "$database"; fi
  if [ -z "${REDIS_URL:-}" ]; then start_redis "$name" "$redis_port"; fi
}

stop_stores() { stop_redis; stop_postgres; }

# Stops servers a previous run left on these ports (even if their data directory is gone) and
# removes their data, so the next start is fresh.
reset_stores() {
  local name=$1 pg_port=$2 redis_port=$3 dir pid
  ensure_pg_binaries
  dir=$(pg_data_dir "$name")
  if [ -f "$dir/postmaster.pid" ]; then pg_run "$PG_BIN/pg_ctl" -D "$dir" -m immediate -w stop >/dev/null 2>&1 || true; fi
  pid=$(pgrep -f -- "postgres -D .*-p $pg_port( |\$)" | head -1 || true)
  [ -z "$pid" ] && pid=$(pgrep -f -- "postgres .*-p $pg_port( |\$)" | head -1 || true)
  if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done; fi
  command -v redis-cli >/dev/null && redis-cli -p "$redis_port" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$PWD/.data/$name" "$(dirname "$dir")"
}
