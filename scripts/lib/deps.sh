# Installs dependencies when missing or stale, then builds. Sourced by start.sh and test.sh.
ensure_built() {
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "[setup] installing dependencies (npm ci)…" >&2
    npm ci --no-audit --no-fund --loglevel=error >&2 || { echo "[setup] npm ci failed" >&2; exit 1; }
  fi
  echo "[setup] building…" >&2
  rm -rf dist
  npx tsc -p tsconfig.json || { echo "[setup] TypeScript build failed" >&2; exit 1; }
}
