#!/usr/bin/env bash
# The one layout of an installed mesh, made in DIR/mesh: the Node runtime this
# build ran with (>= 20.19; Debian 12 ships 18) and its checksum, dist/, the
# SQL migrations, the console's static files, the bundle's scripts and hooks,
# and production node_modules. The tarball (bundle/pack.sh) carries this tree
# as it is; the Debian packages (bundle/deb/build.sh) split it in two.
#   bundle/stage.sh DIR   (DIR/mesh must not exist yet)
set -euo pipefail
cd "$(dirname "$0")/.."
node=$(command -v node)
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' \
  || { echo "bundle/stage.sh: this machine's node is $(node -v); the bundle needs >= 20.19 to carry" >&2; exit 1; }
root="${1:?stage.sh needs a folder to lay the tree out in}/mesh"
[ ! -e "$root" ] || { echo "bundle/stage.sh: $root exists already" >&2; exit 1; }
version=$(node -p 'require("./package.json").version')
arch=$(node -p 'process.arch')

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
# The tests and the lab run from a checkout, never from an installed tree.
rm -rf "$root/dist/test" "$root/dist/lab"
cp bundle/*.sh "$root/bundle/"
cp -r bundle/hooks "$root/bundle/"
# Production dependencies only, from the lock file, without the network:
# a copy of node_modules pruned of what only building and testing need. Its contents, copied
# through the folder: where node_modules is a link (a mutant's copy of the tree) the prune must
# never reach the linked original.
cp -r node_modules/. "$root/node_modules"
(cd "$root" && npm prune --omit=dev --no-audit --no-fund --offline >/dev/null)
# Marks an unpacked bundle: install.sh uses what is here and builds nothing.
echo "mesh-${version}-linux-${arch}" > "$root/BUNDLE"
