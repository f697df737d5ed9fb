// Every MESH_* variable the programs read, with its default and meaning: the
// table docs/reference/settings.md is generated from. Kept by hand, because a
// meaning cannot be scanned; test/docs/settings.test.ts scans src/, host/,
// bundle/ and lab/ and fails when a variable read there is missing here, or
// one listed here is read nowhere.

export interface Setting {
  name: string;
  /** Who reads it. */
  program: string;
  /** What it is when unset. */
  default: string;
  meaning: string;
}

export const SETTINGS: readonly Setting[] = [
  {
    name: 'MESH_STORE_<CONTEXT>',
    program: 'mesh, mesh serve, the bundle',
    default: 'none: a command that needs it refuses with MSHE9',
    meaning:
      "Where one context's store is (MESH_STORE_INVENTORY, MESH_STORE_CATALOGUE, MESH_STORE_SECRET, MESH_STORE_PROVISION, MESH_STORE_OVERLAY, MESH_STORE_ASSIGNMENT, MESH_STORE_AUDIT): a postgres URL without a password, connecting as that context's role (for audit, mesh_audit_reader: the history's owner cannot log in), or the path of a 0600 file holding the URL. A context's code reads its own and no other.",
  },
  {
    name: 'MESH_STORE_AUDIT_OWNER',
    program: 'mesh migrate, mesh backup, mesh restore, the bundle',
    default: 'none: mesh migrate refuses with MSH78, mesh backup and mesh restore with MSHR4',
    meaning:
      "Where mesh migrate acts as mesh_audit, the audit history's owner, which no process logs in as: a postgres URL (or the path of a 0600 file holding it) of a role that may SET ROLE mesh_audit, the database superuser. mesh backup dumps the whole database and mesh restore makes every schema again in the same session. Read by these commands alone; never hand it to a daemon.",
  },
  {
    name: 'MESH_STORE_WAIT_SECONDS',
    program: 'mesh, mesh serve',
    default: '180',
    meaning: 'How long a command waits for a database that does not answer yet (a cold machine) before it gives up.',
  },
  {
    name: 'MESH_HOME',
    program: 'mesh, mesh serve, the bundle',
    default: '/etc/mesh',
    meaning:
      "The control plane's own files: the signing key, the broker's address, fingerprint and admin credential, each 0600.",
  },
  {
    name: 'MESH_SERVE_SWEEP_SECONDS',
    program: 'mesh serve',
    default: '5',
    meaning:
      'How often serve sweeps the outbox for rows no notification woke it for (a commit whose notice was missed).',
  },
  {
    name: 'MESH_SERVE_DRAIN_BATCH',
    program: 'mesh serve',
    default: '1000',
    meaning: 'How many outbox rows serve takes and publishes in one batch.',
  },
  {
    name: 'MESH_SERVE_METRICS',
    program: 'mesh serve',
    default: '127.0.0.1:9780',
    meaning:
      'ADDRESS:PORT where serve answers /metrics (Prometheus text format), /healthz and /readyz; --metrics says the same. Loopback unless the operator names another address.',
  },
  {
    name: 'MESH_LOG_FORMAT',
    program: 'mesh, mesh-host, mesh-builder',
    default: 'plain',
    meaning: 'json: one JSON object a line (level, time, node, serial, code, message); plain: lines for a person.',
  },
  {
    name: 'MESH_DEBUG',
    program: 'mesh, mesh-host, mesh-builder, the bundle',
    default: 'unset',
    meaning: 'Set to anything: a failed command prints the whole cause chain and stack after its one sentence.',
  },
  {
    name: 'MESH_HOST_DIR',
    program: 'mesh-host',
    default: '/var/lib/mesh-host',
    meaning: "The host's identity, keys, kept declaration, serial and applied state.",
  },
  {
    name: 'MESH_HOST_ROOTS',
    program: 'mesh-host',
    default: '/etc:/srv:/opt:/var/lib:/usr/local',
    meaning: 'The directories a declaration may write files under, colon-separated; a file outside them is refused.',
  },
  {
    name: 'MESH_HOST_ENROL_SECONDS',
    program: 'mesh-host enrol',
    default: '60',
    meaning: 'How long the whole enrolment may take, every broker tried and every request resent.',
  },
  {
    name: 'MESH_HOST_HEARD_SECONDS',
    program: 'mesh-host run',
    default: '60',
    meaning: 'How often the host says it is there (its name only), which moves its last_seen.',
  },
  {
    name: 'MESH_HOST_RECONCILE_SECONDS',
    program: 'mesh-host run',
    default: '300',
    meaning:
      'How often the host checks what it holds against the kept declaration and puts back what was changed by hand, connected or not.',
  },
  {
    name: 'MESH_HOST_BACKOFF_MIN_SECONDS',
    program: 'mesh-host run',
    default: '2',
    meaning: 'The first wait before dialling the broker again after a lost connection; it doubles each time.',
  },
  {
    name: 'MESH_HOST_BACKOFF_MAX_SECONDS',
    program: 'mesh-host run',
    default: '120',
    meaning: 'The longest wait between two attempts to reach the broker.',
  },
  {
    name: 'MESH_HOST_BACKOFF_JITTER',
    program: 'mesh-host run',
    default: 'decorrelated',
    meaning:
      'decorrelated: each wait drawn between the floor and three times the last, so a fleet that lost its broker returns spread out; none: plain doubling.',
  },
  {
    name: 'MESH_HOST_BACKOFF_RESET_SECONDS',
    program: 'mesh-host run',
    default: '30',
    meaning: 'How long a connection must hold before the wait goes back to its minimum.',
  },
  {
    name: 'MESH_HOST_FIREWALL',
    program: 'mesh-host run',
    default: 'unset (loaded)',
    meaning:
      "off: the host holds its declared firewall without loading it, and says so. For hosts that share a network namespace with things that must not be closed (the test suites'); every real host loads it.",
  },
  {
    name: 'MESH_HOST_PIDFILE',
    program: 'mesh-host run',
    default: 'MESH_HOST_DIR/mesh-host.pid',
    meaning:
      'Where the running host writes its process id, so the network dispatcher hook can rouse it (SIGUSR1) when a network comes up.',
  },
  {
    name: 'MESH_HOST_DPKG_ROOT',
    program: 'mesh-host run',
    default: '/',
    meaning:
      'The root of the dpkg database the host reports its installed packages from (ROOT/var/lib/dpkg/status) and installs declared packages into with apt. The lab points each node at its own, since its nodes share one machine.',
  },
  {
    name: 'MESH_WG_DIR',
    program: 'mesh-host',
    default: '/etc/wireguard',
    meaning:
      "Where wg-quick's configuration files are (the tunnel `mesh-host overlay take` adopts); the lab points each machine at its own.",
  },
  {
    name: 'MESH_BUILDER_DIR',
    program: 'mesh-builder',
    default: '/var/lib/mesh-builder',
    meaning: "The builder's broker credential (0600) and its work directories.",
  },
  {
    name: 'MESH_BUILDER_REGISTRY',
    program: 'mesh-builder run',
    default: '127.0.0.1:5000',
    meaning: 'HOST:PORT of the image registry builds are pushed to; plain HTTP only on loopback.',
  },
  {
    name: 'MESH_BUILDER_PULL',
    program: 'mesh-builder run',
    default: 'missing',
    meaning: 'When base images are pulled: missing, never, always or newer (podman --pull).',
  },
  {
    name: 'MESH_RABBITMQ_RENAME_FROM',
    program: "the bundle's broker start script",
    default: 'unset',
    meaning:
      'Set by the bundle on a broker that ran alone and now joins a cluster: the old node name whose data is renamed to the new one before the broker starts.',
  },
  {
    name: 'MESH_LAB_DIR',
    program: 'the lab',
    default: '/tmp/mesh-lab',
    meaning: "Where the lab keeps its machines' state, stores and logs.",
  },
  {
    name: 'MESH_LAB_ROOTFS_CACHE',
    program: 'the lab (booted machines)',
    default: '.lab/rootfs-cache in the checkout',
    meaning: 'Where the root file system a booted lab machine starts from is built once and kept.',
  },
];
