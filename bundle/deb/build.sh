#!/usr/bin/env bash
# `npm run deb`: the two Debian packages, made with dpkg-deb from the one tree
# bundle/stage.sh lays out (the tarball's), installed at /usr/lib/mesh:
#   mesh-host  the agent: the Node runtime, dist/, production node_modules,
#              the hardened mesh-host unit (enabled on install), the
#              mesh-host command, /var/lib/mesh-host (made by its postinst)
#   mesh       the control plane: the migrations, the console's files, the
#              first-node installer (bundle/install.sh) and the mesh command;
#              it depends on mesh-host of the same version (one tree)
#   bundle/deb/build.sh [--version V] [--tree DIR] [OUT_DIR]   (default dist-deb/)
# --version: the packages' version (default package.json's); --tree: an
# already staged tree (DIR holds node/, dist/, ...) instead of staging now.
# Each package is then checked by lintian when it is installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=$PWD/bundle/deb
version= tree= out=
while [ $# -gt 0 ]; do
  case $1 in
    --version) version=${2:?--version needs a version}; shift 2 ;;
    --tree) tree=$(realpath "${2:?--tree needs a folder}"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bundle/deb/build.sh: unknown option $1 (--version, --tree, --help)" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
version=${version:-$(node -p 'require("./package.json").version')}
# A native package's version: no revision (no dash), as dpkg compares them.
if ! [[ $version =~ ^[0-9][A-Za-z0-9.+~]*$ ]]; then
  echo "bundle/deb/build.sh: version '$version' is not a Debian native version (digits first, then letters, digits, . + ~)" >&2
  exit 2
fi
out=$(realpath -m "${out:-dist-deb}")
arch=$(dpkg --print-architecture)
lib=/usr/lib/mesh
maintainer='mesh maintainers <maintainers@mesh.example.org>'
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$tree" ]; then
  bash bundle/stage.sh "$work/stage"
  tree=$work/stage/mesh
fi
[ -x "$tree/node/bin/node" ] && [ -f "$tree/dist/bundle/deb/files.js" ] \
  || { echo "bundle/deb/build.sh: $tree is not a staged tree (bundle/stage.sh makes one)" >&2; exit 1; }
files() { "$tree/node/bin/node" "$tree/dist/bundle/deb/files.js" "$1" "$lib"; }
# The changelog's date: the commit's, so the same tree packs the same bytes.
when=$(git log -1 --format=%cD 2>/dev/null || date -R)

host=$work/mesh-host
control=$work/mesh
mkdir -p "$host$lib" "$control$lib/bundle" "$control$lib/dist"
cp -a "$tree/." "$host$lib/"
# What only the control plane runs moves to its package; the agent keeps the rest.
for p in sql src dist/bundle BUNDLE bundle/install.sh bundle/ensure-packages.sh bundle/prepare.sh \
         bundle/pack.sh bundle/stage.sh bundle/rabbitmq-start.sh; do
  [ -e "$host$lib/$p" ] || continue
  mkdir -p "$(dirname "$control$lib/$p")"
  mv "$host$lib/$p" "$control$lib/$p"
done
rm -f "$control$lib/bundle/pack.sh" "$control$lib/bundle/stage.sh" "$control$lib/bundle/prepare.sh"
# Everything under /usr/lib/mesh is run by the packaged node, never by its own #! line (that line
# is for a checkout): only the runtime and the installer's shell scripts are executable. npm's
# own files (its ignore lists, the bin links) have no use in an installed tree.
find "$host$lib" "$control$lib" -type f ! -path "*/node/bin/node" ! -name '*.sh' ! -path '*/bundle/hooks/*' \
  -exec chmod a-x {} +
find "$host$lib" -name .npmignore -type f -delete
rm -rf "$host$lib/node_modules/.bin"
# The runtime without its symbols, as dh_strip leaves Debian's own binaries; its checksum
# (install.sh checks it before running anything with it) follows.
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$host$lib/node/bin/node"
(cd "$host$lib/node" && sha256sum bin/node > SHA256SUMS)

install -D -m 0755 <(files mesh-host) "$host/usr/bin/mesh-host"
install -D -m 0644 <(files unit) "$host/lib/systemd/system/mesh-host.service"
install -D -m 0755 <(files mesh) "$control/usr/bin/mesh"

# The Node runtime's shared libraries, as dpkg-shlibdeps says (it reads debian/control).
mkdir -p "$work/shlibs/debian"
printf 'Source: mesh\n\nPackage: mesh-host\nArchitecture: any\n' > "$work/shlibs/debian/control"
shlibs=$(cd "$work/shlibs" && dpkg-shlibdeps -O "$host$lib/node/bin/node" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "bundle/deb/build.sh: dpkg-shlibdeps found no libraries for the runtime" >&2; exit 1; }

package() { # NAME ROOT ARCH DEPENDS RECOMMENDS SUMMARY DESCRIPTION
  local name=$1 root=$2 a=$3 depends=$4 recommends=$5 summary=$6 description=$7
  local doc=$root/usr/share/doc/$name
  mkdir -p "$doc" "$root/usr/share/man/man1" "$root/usr/share/lintian/overrides" "$root/DEBIAN"
  { echo "Copyright $(date -d "$when" +%Y) the mesh authors."; echo; cat "$here/copyright"; } > "$doc/copyright"
  printf '%s (%s) unstable; urgency=medium\n\n  * Built from the mesh tree; what changed is in its CHANGELOG.md.\n\n -- %s  %s\n' \
    "$name" "$version" "$maintainer" "$when" | gzip -9n > "$doc/changelog.gz"
  gzip -9n < "$here/$name.1" > "$root/usr/share/man/man1/$name.1.gz"
  install -m 0644 "$here/$name.lintian-overrides" "$root/usr/share/lintian/overrides/$name"
  for s in postinst prerm postrm; do
    [ -f "$here/$name.$s" ] && install -m 0755 "$here/$name.$s" "$root/DEBIAN/$s"
  done
  # Owned by root (dpkg-deb --root-owner-group), readable by all, written by none but root.
  chmod -R u+rwX,go+rX,go-w "$root"
  local size
  size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  {
    echo "Package: $name"
    echo "Version: $version"
    echo "Architecture: $a"
    echo "Maintainer: $maintainer"
    echo "Installed-Size: $size"
    echo "Depends: $depends"
    [ -z "$recommends" ] || echo "Recommends: $recommends"
    echo "Section: admin"
    echo "Priority: optional"
    echo "Homepage: https://mesh.example.org/"
    echo "Description: $summary"
    echo "$description" | sed 's/^$/./; s/^/ /'
  } > "$root/DEBIAN/control"
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) \
    > "$root/DEBIAN/md5sums"
  chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"
  mkdir -p "$out"
  dpkg-deb --root-owner-group -Zgzip --build "$root" "$out/${name}_${version}_${a}.deb" >/dev/null
  echo "$out/${name}_${version}_${a}.deb ($(du -h "$out/${name}_${version}_${a}.deb" | cut -f1))"
}

package mesh-host "$host" "$arch" \
  "$shlibs, init-system-helpers (>= 1.54~), iproute2, nftables, openssl, procps, wireguard-tools" \
  "iptables, podman, runc, wireguard-go" \
  'agent of a mesh node: applies signed declarations, reports' \
  "The agent of a mesh node. It enrols once with a one-time token, dials the
mesh's broker over TLS (it listens on nothing), verifies every signed
declaration, applies it (files, services, WireGuard overlay, nftables
firewall), keeps it applied and reports what the machine holds.

It carries its own Node.js runtime (the agent needs 20.19 or newer;
Debian 12's nodejs is 18). The mesh-host service is enabled on install and
waits for an identity: mesh-host enrol joins the machine."

package mesh "$control" all \
  "mesh-host (= $version), nftables, openssl, postgresql, procps, rabbitmq-server" \
  "" \
  'control plane that runs a fleet from one declared truth' \
  "The control plane of a mesh: PostgreSQL composes what each machine should
hold and signs it; mesh serve carries it over RabbitMQ to every node's
agent (mesh-host) and records what each reports.

This package holds the first-node installer (run as root:
bash /usr/lib/mesh/bundle/install.sh --public HOST), the store's
migrations, the web console's files and the mesh command."
