#!/usr/bin/env bash
# The one way a checkout gets ready to run: the Debian packages ROLE needs
# (ensure-packages.sh), npm packages when the lock file moved, the build.
#   prepare.sh test|lab|first|node
set -euo pipefail
cd "$(dirname "$0")/.."
bash bundle/ensure-packages.sh "${1:?prepare.sh needs a role: test, lab, first or node}"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx tsc -p .
