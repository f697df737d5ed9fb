#!/usr/bin/env bash
# `npm run bundle`: one tarball a bare Debian machine can install from, with
# no Node of its own and no network for npm: the Node runtime this build ran
# with (>= 20.19; Debian 12 ships 18), dist/, the SQL migrations, the bundle's
# scripts and production node_modules, and beside it a sha256 checksum.
#   bundle/pack.sh [OUT_DIR]   (default dist-bundle/)
# On the machine:
#   sha256sum -c mesh-VERSION-linux-ARCH.tar.gz.sha256
#   tar -C /opt -xzf mesh-VERSION-linux-ARCH.tar.gz
#   sudo bash /opt/mesh/bundle/install.sh --public HOST
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist-bundle}")
node=$(command -v node)
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || { echo "bundle/pack.sh: this machine's node is $(node -v); the bundle needs >= 20.19 to carry" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
arch=$(node -p 'process.arch')
name="mesh-${version}-linux-${arch}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/mesh"
mkdir -p "$root/node/bin" "$root/bundle"
# Built into the stage, never over ./dist: a run already going from ./dist
# (the test suites beside the one that packs) would load half-written files.
npx tsc -p . --outDir "$root/dist"
cp "$(realpath "$node")" "$root/node/bin/node"
# The runtime's own checksum, checked by install.sh before it runs anything with it.
(cd "$root/node" && sha256sum bin/node > SHA256SUMS)
node -p 'process.version' > "$root/node/VERSION"
cp -r sql package.json package-lock.json "$root/"
# The console's pages and scripts are served as they are, from beside the compiled code.
mkdir -p "$root/src/console"
cp -r src/console/static "$root/src/console/"
# dist/lab stays: the booted-machine suite probes ports with the lab's probe, run from the installed bundle.
rm -rf "$root/dist/test"
cp bundle/*.sh "$root/bundle/"
cp -r bundle/hooks "$root/bundle/"
# Production dependencies only, from the lock file, without the network:
# a copy of node_modules pruned of what only building and testing need.
cp -r node_modules "$root/"
(cd "$root" && npm prune --omit=dev --no-audit --no-fund --offline >/dev/null)
# Marks an unpacked bundle: install.sh uses what is here and builds nothing.
echo "$name" > "$root/BUNDLE"

mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" mesh
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), checksum in $name.tar.gz.sha256"
