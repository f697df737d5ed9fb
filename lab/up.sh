#!/usr/bin/env bash
# `npm run lab [-- COMMAND]`: packages, build, then the lab (lab/lab.ts).
# With no command it brings the lab up; `down`, `show`, `scenario NAME|all`.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "the lab makes network namespaces and loads nftables: run it as root (sudo npm run lab)" >&2
  exit 1
fi
bash bundle/prepare.sh lab
exec node dist/lab/lab.js "$@"
