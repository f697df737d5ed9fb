#!/usr/bin/env bash
# Take the lab down completely: every process in its namespaces, the
# namespaces (and with them every veth, bridge and WireGuard interface), its folder.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/lab/lab.js ] || npx tsc -p .
exec node dist/lab/lab.js down
