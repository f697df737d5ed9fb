#!/usr/bin/env bash
# The first node, on a bare Debian 12 machine, as root: the packages it
# carries, the build, then the installer (bundle/install.ts). Arguments pass
# through (install.sh --help). Safe to run again: a second run changes nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "the first-node bundle runs as root: sudo bash bundle/install.sh" >&2
  exit 1
fi
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' 2>/dev/null; then
  echo "mesh needs Node.js >= 20.19 (Debian 12's nodejs is 18): install it from nodejs.org or NodeSource, then run this again" >&2
  exit 1
fi
bash bundle/prepare.sh first
exec node dist/bundle/install.js "$@"
