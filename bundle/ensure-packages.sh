#!/usr/bin/env bash
# Installs the Debian packages a role needs, when missing. As root it
# installs; otherwise it names the command to run and stops.
#   ensure-packages.sh test   what `npm test` needs
#   ensure-packages.sh node   what a mesh node needs (mesh-host)
#   ensure-packages.sh first  what the first node carries (store, broker, ...)
#   ensure-packages.sh broker what a broker node adds to a node (install.sh --broker-node)
#   ensure-packages.sh peers  what the peers bench compares mesh with (Puppet, Ansible, sshd)
set -euo pipefail
role=${1:-test}
base=(openssl iproute2 procps)
case "$role" in
  # mmdebstrap, systemd-container, nmap: the booted lab machine (test/machine) and its port scan.
  # chromium: the console's browser tests (test/console), driven by playwright-core.
  # dpkg-dev, lintian: the Debian packages (test/deb): dpkg-shlibdeps for the runtime's libraries, lintian's check.
  # prometheus: scrapes a real mesh serve and checks the alert rules (test/serve/metrics), with promtool.
  test)  want=("${base[@]}" postgresql rabbitmq-server wireguard-go wireguard-tools nftables iptables iputils-ping podman runc busybox-static docker-registry git mmdebstrap systemd-container nmap chromium prometheus dpkg-dev lintian) ;;
  node)  want=("${base[@]}" wireguard-go wireguard-tools nftables iptables podman runc) ;;
  broker) want=("${base[@]}" rabbitmq-server wireguard-go wireguard-tools nftables iptables) ;;
  first) want=("${base[@]}" postgresql rabbitmq-server wireguard-go wireguard-tools nftables iptables podman runc) ;;
  # The tools an operator would install instead (test/bench/8-peers), all from Debian 12 main;
  # dbconfig-no-thanks: puppetdb's postinst then leaves the machine's PostgreSQL alone.
  peers) want=(puppet-agent puppetserver puppetdb dbconfig-no-thanks ansible ansible-core openssh-server openssh-client time iproute2) ;;
  lab)   want=("${base[@]}" postgresql rabbitmq-server wireguard-go wireguard-tools nftables iptables iputils-ping mmdebstrap systemd-container nmap) ;;
  *) echo "ensure-packages.sh: unknown role '$role' (test, node, broker, first, lab, peers)" >&2; exit 2 ;;
esac
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${missing[*]}" >&2
  echo "run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# --no-install-recommends: wireguard-tools otherwise pulls a kernel image.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
