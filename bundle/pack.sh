#!/usr/bin/env bash
# `npm run bundle`: one tarball a bare Debian machine can install from, with
# no Node of its own and no network for npm: the tree bundle/stage.sh lays
# out, and beside it a sha256 checksum.
#   bundle/pack.sh [OUT_DIR]   (default dist-bundle/)
# On the machine:
#   sha256sum -c mesh-VERSION-linux-ARCH.tar.gz.sha256
#   tar -C /opt -xzf mesh-VERSION-linux-ARCH.tar.gz
#   sudo bash /opt/mesh/bundle/install.sh --public HOST
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-dist-bundle}")
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
bash bundle/stage.sh "$stage"
name=$(cat "$stage/mesh/BUNDLE")

mkdir -p "$out"
tar -C "$stage" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" mesh
(cd "$out" && sha256sum "$name.tar.gz" > "$name.tar.gz.sha256")
echo "$out/$name.tar.gz ($(du -h "$out/$name.tar.gz" | cut -f1)), checksum in $name.tar.gz.sha256"
