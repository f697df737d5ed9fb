#!/bin/sh
# How a broker node of a cluster starts (bundle/rabbitmq.ts brokerSpec): its
# environment (paths, ports, node name; never a secret) comes from the unit
# or the supervised service. A broker that ran alone kept its data under
# mesh@localhost (MESH_RABBITMQ_RENAME_FROM); RabbitMQ finds a node's data by
# its name, so that data is renamed to this node's name first, with the node
# stopped (it is: this runs before it starts). Accounts, permissions, queues
# and their messages are kept, so no node of the mesh enrols again. Once
# renamed, or on a node that joined a cluster, this only starts the broker.
# exec: the broker is this process, so a signal to it (SIGKILL too) is the broker's.
set -eu
base=$RABBITMQ_MNESIA_BASE
old=${MESH_RABBITMQ_RENAME_FROM:-}
new=$RABBITMQ_NODENAME
if [ -n "$old" ] && [ "$old" != "$new" ] && [ -d "$base/$old" ] && [ ! -e "$base/$new" ]; then
  echo "renaming the broker's data from $old to $new" >&2
  # As the old node (short names, as it ran), the one way the CLI reads its data.
  RABBITMQ_NODENAME=$old RABBITMQ_USE_LONGNAME=false /usr/lib/rabbitmq/bin/rabbitmqctl rename_cluster_node "$old" "$new"
  for f in "$base/$old" "$base/$old"-*; do
    [ -e "$f" ] || continue
    mv "$f" "$base/$new${f#"$base/$old"}"
  done
fi
# epmd outlives its broker: one started while the broker ran alone listens on
# loopback only, and this node would find no epmd on its overlay address
# (epmd_error). Such an epmd is ended (it refuses while a node lives) and the
# node starts its own on every address of ERL_EPMD_ADDRESS.
for a in $(echo "${ERL_EPMD_ADDRESS:-}" | tr ',' ' '); do
  if ! ss -Hltn "( sport = :${ERL_EPMD_PORT} )" | grep -qF "$a:${ERL_EPMD_PORT}"; then
    epmd -kill >/dev/null 2>&1 || true
    break
  fi
done
exec /usr/lib/rabbitmq/bin/rabbitmq-server
