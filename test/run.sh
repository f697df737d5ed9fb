#!/usr/bin/env bash
# `npm test` (and `npm run bench`, `npm run faults`): installs what the run
# needs, builds, and hands over to test/run.ts, which starts its own
# throwaway PostgreSQL and RabbitMQ and stops them at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bundle/prepare.sh test
exec node dist/test/run.js "$@"
