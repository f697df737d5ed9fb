#!/usr/bin/env bash
# `npm test` (and `npm run bench`, `npm run faults`): installs what the run
# needs, builds, and hands over to test/run.ts, which starts its own
# throwaway PostgreSQL and RabbitMQ and stops them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bundle/ensure-packages.sh test
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx tsc -p .
exec node dist/test/run.js "$@"
