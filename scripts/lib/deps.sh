# Installs dependencies when missing or stale, then builds. Sourced by start.sh, test.sh, bench.sh.
ensure_built() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "[setup] installing dependencies…" >&2
    # npm ci when the lock file is complete for this registry; some registries omit other platforms'
    # optional packages from it, which npm ci refuses, so fall back to npm install (same versions).
    npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1 \
      || npm install --no-audit --no-fund --loglevel=error >&2 \
      || { echo "[setup] installing dependencies failed" >&2; exit 1; }
  fi
  echo "[setup] building…" >&2
  rm -rf dist
  npx tsc -p tsconfig.json || { echo "[setup] TypeScript build failed" >&2; exit 1; }
}
