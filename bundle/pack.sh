#!/usr/bin/env bash
# `npm run bundle`: one tarball a bare Debian machine can install from, with
# no Node of its own and no network for npm: the tree bundle/stage.sh lays
# out, and beside it a sha256 checksum.
#   bundle/pack.sh [--tree DIR/mesh] [OUT_DIR]   (default dist-bundle/)
# --tree: a tree bundle/stage.sh already laid out (the one the Debian packages
# are made from too) instead of staging now.
# On the machine:
#   sha256sum -c mesh-VERSION-linux-ARCH.tar.gz.sha256
#   tar -C /opt -xzf mesh-VERSION-linux-ARCH.tar.gz
#   sudo bash /opt/mesh/bundle/install.sh --public HOST
set -euo pipefail
cd "$(dirname "$0")/.."
tree= out=
while [ $# -gt 0 ]; do
  case $1 in
    --tree) tree=$(realpath "${2:?--tree needs a folder}"); shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bundle/pack.sh: unknown option $1 (--tree, --help)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
out=$(realpath -m "${out:-dist-bundle}")
if [ -z "$tree" ]; then
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  bash bundle/stage.sh "$stage"
  tree=$stage/mesh
fi
# The tarball unpacks as mesh/ under /opt: the staged tree is DIR/mesh.
[ "$(basename "$tree")" = mesh ] && [ -f "$tree/BUNDLE" ] \
  || { echo "bundle/pack.sh: $tree is not a staged tree (bundle/stage.sh DIR makes DIR/mesh)" >&2; exit 1; }
name=$(cat "$tree/BUNDLE")

mkdir -p "$out"
tar -C "$(dirname "$tree")" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" mesh
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), checksum in $name.tar.gz.sha256"
