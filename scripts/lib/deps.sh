# Installs dependencies when missing or stale, then builds. Sourced by start.sh, test.sh, bench.sh.
ensure_built() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "[setup] installing dependencies (npm ci)…" >&2
    # The lock file is complete (msgpackr-extract is pinned to a release published for every
    # platform), so a fresh clone installs exactly what was tested; a failure is loud, never patched
    # over by a looser npm install.
    npm ci --no-audit --no-fund --loglevel=error >&2 || { echo "[setup] npm ci failed: the lock file and package.json disagree, or the registry is unreachable" >&2; exit 1; }
  fi
  echo "[setup] building…" >&2
  # Incremental: only what changed is compiled (dist/.tsbuildinfo). Output whose source is gone
  # (a deleted or moved file) is removed first, so no stale test or module is ever run.
  if [ -d dist ]; then
    find dist -name '*.js' -type f | while read -r out; do
      src=${out#dist/}; src=${src%.js}.ts
      [ -f "$src" ] || rm -f "$out" "$out.map"
    done
  fi
  npx tsc -p tsconfig.json || { echo "[setup] TypeScript build failed" >&2; exit 1; }
}
