#!/usr/bin/env bash
# `npm run lab [-- COMMAND]`: packages, build, then the lab (lab/lab.ts).
# With no command it brings the lab up; `down`, `show`, `scenario NAME|all`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "the lab makes network namespaces and loads nftables: run it as root (sudo npm run lab)" >&2
  exit 1
fi
bash bundle/ensure-packages.sh lab
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx tsc -p .
exec node dist/lab/lab.js "$@"
