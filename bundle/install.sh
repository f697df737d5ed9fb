#!/usr/bin/env bash
# The first node, on a bare Debian 12 machine, as root (or, with
# --broker-node, a broker node joining it: bundle/broker_node.ts): the packages it
# carries, then the installer (bundle/install.ts). Arguments pass through
# (install.sh --help). Safe to run again: a second run changes nothing.
#
# From an unpacked bundle (`npm run bundle`; a BUNDLE file at its top) it
# builds nothing and needs no npm: dist/ and node_modules are in it, and so
# is a Node runtime, used when this machine's node is missing or older than
# 20.19 (Debian 12 ships 18), after checking it against its checksum.
# From a checkout it builds first (bundle/prepare.sh) with this machine's node.
set -euo pipefail
cd "$(dirname "$0")/.."
good_node() { "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' 2>/dev/null; }

node_bin=
if command -v node >/dev/null 2>&1 && good_node node; then
  node_bin=$(command -v node)
elif [ -f BUNDLE ] && [ -x node/bin/node ]; then
  if ! (cd node && sha256sum --quiet -c SHA256SUMS >/dev/null 2>&1); then
    echo "the bundle's Node runtime (node/bin/node) does not match its checksum: unpack the tarball again, after sha256sum -c on it" >&2
    exit 1
  fi
  node_bin=$PWD/node/bin/node
else
  echo "mesh needs Node.js >= 20.19 (Debian 12's nodejs is 18): install from a bundle made by npm run bundle (it brings its own), or install Node from nodejs.org, then run this again" >&2
  exit 1
fi

# --broker-node: this enrolled machine becomes a broker node of the first
# node's cluster (bundle/broker_node.ts); otherwise the first node.
program=dist/bundle/install.js
role=first
for a in "$@"; do
  case $a in --broker-node) program=dist/bundle/broker_node.js; role=broker ;; esac
done
for a in "$@"; do
  case $a in -h|--help) exec "$node_bin" "$program" --help ;; esac
done
if [ "$(id -u)" -ne 0 ]; then
  echo "the first-node bundle runs as root: sudo bash bundle/install.sh" >&2
  exit 1
fi
if [ -f BUNDLE ]; then
  bash bundle/ensure-packages.sh "$role"
else
  bash bundle/prepare.sh "$role"
fi
exec "$node_bin" "$program" "$@"
