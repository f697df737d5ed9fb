// The one register of the codes mesh refuses with: those our SQL raises
// (`raise exception ... using errcode = 'MSHnn'`) and those TypeScript raises
// with refuse() below (an argument, a module file, a declaration mesh-host
// will not apply, an install option) or as a WireError (src/wire/envelope.ts).
// A code means one thing, in one context, everywhere; test/sys/errors.test.ts
// scans sql/, src/, host/ and bundle/ and holds them and this table to each
// other: every code raised is here once, every entry is raised where it says,
// and some test asserts it.
// Ranges by context, two characters after MSH as SQLSTATE allows (0-9, A-Z),
// one context a line:
//   inventory   0x, 1x (its brokers), then Fx (names, tokens, the console)
//   assignment  2x then Ax
//   catalogue   3x, Mx (a module file's resources, the builder's settings), then Px (the builder's enrolment and credential, a source's ref)
//   secret      4x then MSHQ0
//   provision   5x then MSHB0 to MSHB2
//   overlay     6x
//   audit       7x then Wx
//   mesh-host   8x, Cx, Gx, then Ix and Kx (a declaration it will not apply, its settings, its own files, its enrolment)
//   bundle      9x, Dx, then Lx (the installers)
//               and Tx (the users the first node's daemons run as; MSHT1 overlay, MSHT2 to MSHT5 inventory: a fleet page's filter)
//   store       Ex, Hx, then Jx (the store's tools and settings, the control plane's home, the program shell)
//   wire        Nx: a message refused by whoever reads it, mesh-host or mesh serve alike, so
//               neither's range; a WireError carries its fault kind (D1) and one of these.
//   versions    Vx: agent versions and the skew rule (MSHV0 to MSHV2, inventory) and the kinds an agent
//               applies (MSHV3 and MSHV4, assignment), one subject across the two contexts that keep it.
//               Zx: agent upgrades: packages (catalogue), targets (assignment), the host's install
//               and roll-back (mesh-host), the ask for a package's chunks (wire), and how often a
//               node is handed them (inventory, MSHZ9).
//   Ux          enrolment, tokens and builds: MSHU0 to MSHU4 mesh-host (the token's pin, the token on stdin),
//               MSHU5 to MSHU9 catalogue (the builder's line on stdin, pinned builds).
//   bounds      Sx: what one node may make mesh serve hold, answer or keep (P2): wire for what is
//               refused unread or unstored, inventory for what SQL answers once per interval.
//   Yx          questions about paths (what-if, why): MSHY0, MSHY1 and MSHY4 overlay, MSHY2 and MSHY3
//               assignment, whose answers read the firewall and the declarations beside the graph.
//   Ox          packages and advisories: inventory (the versions a node reports, the advisories loaded),
//               assignment (the package a rollout declares) and mesh-host (applying it)
//   Qx          MSHQ0 secret (above); MSHQ1 to MSHQ9 assignment: promises, change-freeze windows and what
//               a node was declared at a time, the questions asked across the contexts assignment composes;
//               they go on in MSHB3 to MSHB9 (MSHB0 to MSHB2 are provision's).
//   Xx          one block for the trust boundaries of the first node and the hub: mesh-host (its own
//               files among the writable roots) and inventory (the console's sign-in)
//   Rx          backup and restore: MSHR0 assignment (the serial a node says it applied), MSHR1 to
//               MSHR5 store (the backup file, the store it is restored onto).
// A context whose range is full takes the next free letter after R (O is
// passed over: it reads as 0). A code may be raised both in SQL and, earlier, in TypeScript when it
// means the same (MSH25, MSH31, MSH65). A new refusal takes a new code; an
// old code is never reused for another meaning.
/** A context of the store: the kernel names them here, and src/store/contexts.ts lists them in migration order against this. */
export type ContextName = 'inventory' | 'catalogue' | 'secret' | 'provision' | 'overlay' | 'assignment' | 'audit';

/** Who refuses: a store context, or a part with no schema of its own. */
export type Refuser = ContextName | 'host' | 'bundle' | 'store' | 'wire';

export interface Code {
  code: string;
  context: Refuser;
  /** What was refused, in a few words. */
  meaning: string;
  /** What a person does about it, when the raise carries no hint of its own. */
  remedy: string;
  /** The TypeScript files that raise it with refuse(); none for a code only sql/<context> raises. */
  raisedIn?: readonly string[];
}

export const REGISTER: readonly Code[] = [
  {
    code: 'MSH02',
    context: 'inventory',
    meaning: 'a token was asked for a node that is already enrolled',
    remedy: 'retire it first (mesh node retire NAME) if the machine is being rebuilt',
  },
  {
    code: 'MSH03',
    context: 'inventory',
    meaning: 'a token lifetime of zero or less',
    remedy: 'give the token a lifetime: mesh token issue NAME --ttl 1h',
  },
  {
    code: 'MSH04',
    context: 'inventory',
    meaning: 'a report or rekey names a node that is not enrolled',
    remedy: 'enrol the node (mesh token issue NAME, then echo TOKEN | mesh-host enrol on it); see mesh node list',
  },
  {
    code: 'MSH05',
    context: 'inventory',
    meaning: 'a rekey carries an overlay key that is not 32 bytes',
    remedy: 'send the raw 32-byte X25519 public key',
  },
  {
    code: 'MSH06',
    context: 'inventory',
    meaning: 'a rekey takes an overlay key another node holds',
    remedy: 'give the tunnel its own key: two nodes with one key fight over every peer entry',
  },
  {
    code: 'MSH07',
    context: 'inventory',
    meaning: 'a rekey leaves a key the mesh does not hold for the node (stale or hand-edited)',
    remedy: 'run mesh-host overlay take again',
  },
  {
    code: 'MSH08',
    context: 'inventory',
    meaning: 'a console sign-in link with a lifetime of zero or less',
    remedy: 'give the link a lifetime: mesh console token --ttl 10m',
  },
  {
    code: 'MSH09',
    context: 'inventory',
    meaning: 'a console sign-in link that is unknown, spent or expired',
    remedy: 'a link signs in once: run mesh console token for a new one',
  },

  {
    code: 'MSH10',
    context: 'inventory',
    meaning: 'a broker address that is not HOST:PORT',
    remedy: 'give the address nodes dial over TLS as HOST:PORT, e.g. mq2.example.net:5671',
  },
  {
    code: 'MSH11',
    context: 'inventory',
    meaning: 'a broker fingerprint that is not a SHA-256 fingerprint (32 upper-case hex pairs joined by colons)',
    remedy: 'openssl x509 -noout -fingerprint -sha256 -in CERT prints it',
  },
  {
    code: 'MSH12',
    context: 'inventory',
    meaning: 'the last broker of the mesh was to be removed',
    remedy: 'add the broker that replaces it first (mesh broker add HOST:PORT --fingerprint FP), then remove this one',
  },
  {
    code: 'MSH13',
    context: 'inventory',
    meaning: 'a broker names a node that is not enrolled as the one running it',
    remedy: 'enrol it first, or leave out --node; see mesh node list',
  },
  {
    code: 'MSH14',
    context: 'inventory',
    meaning: 'a broker the mesh does not know was to be removed',
    remedy: 'see mesh broker list for the addresses it knows',
  },

  {
    code: 'MSH20',
    context: 'assignment',
    meaning: 'an assignment names a module the catalogue does not have',
    remedy: 'add it first: mesh module add FILE',
  },
  {
    code: 'MSH21',
    context: 'assignment',
    meaning: 'an assignment names a node that is not enrolled',
    remedy: 'see mesh node list',
  },
  {
    code: 'MSH22',
    context: 'assignment',
    meaning: 'a declaration lifetime outside 10 seconds to 1 year',
    remedy: 'give a lifetime such as 7d, 12h or 30m: mesh freshness --lifetime 7d',
  },
  {
    code: 'MSH23',
    context: 'assignment',
    meaning: 'a hold asked for while a rollout is already open',
    remedy: 'one rollout at a time: see mesh rollout status; end it with mesh rollout release or abort',
  },
  {
    code: 'MSH24',
    context: 'assignment',
    meaning: 'a rollout command with no rollout open: no change is held',
    remedy: 'run mesh rollout hold before making the changes, then mesh rollout start',
  },
  {
    code: 'MSH25',
    context: 'assignment',
    meaning: 'rollout waves, wait or failure limit that cannot be used',
    remedy:
      'give waves as counts or shares ending at 100% (--waves 1,10%,50%,100%), a positive --wait-healthy and --max-failing of 0 or more',
    raisedIn: ['src/assignment/rollout.ts'],
  },
  {
    code: 'MSH26',
    context: 'assignment',
    meaning: 'a pinned canary (--first) the rollout does not change',
    remedy: 'pin only nodes with a held change: see mesh plan --all',
  },
  {
    code: 'MSH27',
    context: 'assignment',
    meaning: 'a rollout started with no held change differing from what the nodes hold',
    remedy: 'make the changes first (mesh plan --all shows what is pending), then mesh rollout start',
  },
  {
    code: 'MSH28',
    context: 'assignment',
    meaning: 'an explicit declare of a node whose change a rollout holds',
    remedy: 'release it with mesh rollout start (in waves) or mesh rollout release (at once)',
  },
  {
    code: 'MSH29',
    context: 'assignment',
    meaning: 'a rollout started, paused, resumed or aborted from a state that does not allow it',
    remedy:
      'see mesh rollout status: a holding rollout starts, a rolling one pauses, a paused or halted one resumes, a started one aborts',
  },

  {
    code: 'MSH30',
    context: 'catalogue',
    meaning: 'a build was asked for a module with no source',
    remedy: 'say where it is first: mesh module source MODULE --git URL',
  },
  {
    code: 'MSH31',
    context: 'catalogue',
    meaning: 'a module carries a resource the mesh composes itself (wireguard, firewall, secret, brokers)',
    remedy:
      'take it out of the module: declare an opening (firewall), a secret (mesh secret), overlay settings (mesh overlay) or a broker (mesh broker add) instead',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },

  {
    code: 'MSH40',
    context: 'secret',
    meaning: 'an accepted secret was to be made again: some other system was told it, so the mesh never makes it anew',
    remedy: 'issue it again: mesh secret accept NAME --from FILE (the value the other system knows)',
  },
  {
    code: 'MSH41',
    context: 'secret',
    meaning: 'a holder of a secret is not enrolled, so it has no sealing key',
    remedy: 'nothing was changed; enrol the node again, or unassign it (see mesh node list)',
  },
  {
    code: 'MSH42',
    context: 'secret',
    meaning: 'a made secret was to be replaced by an accepted value',
    remedy: 'choose another name, or rotate it (mesh secret rotate)',
  },
  {
    code: 'MSH43',
    context: 'secret',
    meaning: "a holder's sealing key changed while the secret was being sealed",
    remedy: 'nothing was changed; run the command again',
  },
  {
    code: 'MSH44',
    context: 'secret',
    meaning: 'a secret with no holder',
    remedy: 'assign the modules that use it to a node first (mesh assign MODULE NODE)',
  },
  {
    code: 'MSH45',
    context: 'secret',
    meaning: "a secret's holders and sealing keys differ in number",
    remedy: "seal the value once per holder, to that holder's key",
  },

  {
    code: 'MSH50',
    context: 'provision',
    meaning: 'a rotation names a pair that was never granted',
    remedy: 'see mesh provision list',
  },
  {
    code: 'MSH51',
    context: 'provision',
    meaning: "a holder of a pair's credential is not enrolled: a rotation sends to every holder or to none",
    remedy:
      'nothing was sent and the old credential keeps working; enrol it again or unassign its module (mesh unassign MODULE NODE)',
  },
  {
    code: 'MSH52',
    context: 'provision',
    meaning: 'no node runs either end of a pair',
    remedy: 'assign the provider and the consumer modules to nodes first (mesh assign MODULE NODE)',
  },
  {
    code: 'MSH53',
    context: 'provision',
    meaning: 'a route was to be rotated: routes carry no credential',
    remedy: 'nothing to rotate: routes carry names, not secrets',
  },
  {
    code: 'MSH54',
    context: 'provision',
    meaning: 'a provision was offered again with another kind or provider',
    remedy: 'withdraw it first (mesh provision withdraw NAME), or choose another name',
  },
  {
    code: 'MSH55',
    context: 'provision',
    meaning: 'a postgres grant without a valid database and user name',
    remedy: 'give --database NAME --user NAME (lower-case letters, digits, underscores)',
  },
  {
    code: 'MSH56',
    context: 'provision',
    meaning: 'a grant names a provision that was never offered',
    remedy: 'offer it first: mesh provision offer',
  },
  {
    code: 'MSH57',
    context: 'provision',
    meaning: 'a postgres grant takes a role another consumer holds',
    remedy: 'each pair has its own role: choose another --user',
  },
  {
    code: 'MSH58',
    context: 'provision',
    meaning: 'a route grant without a valid host name and port',
    remedy: 'give --name HOST --port PORT',
  },
  {
    code: 'MSH59',
    context: 'provision',
    meaning: 'a route grant takes a name routed to another consumer',
    remedy: 'choose another --name',
  },

  {
    code: 'MSHT1',
    context: 'overlay',
    meaning:
      'a declare where the spokes need more hubs than the overlay has (each hub holds at most overlay.settings.hub_spokes)',
    remedy: 'name more dialable nodes hubs (mesh overlay hub NODE), then declare again',
  },
  {
    code: 'MSHT2',
    context: 'inventory',
    meaning:
      'a fleet page (console or mesh node list) narrowed to a state that is not one of here, wedged, away, never or stale',
    remedy: 'pick one of here, wedged, away (out of touch), never (never spoken) or stale',
  },
  {
    code: 'MSHT3',
    context: 'inventory',
    meaning: 'a fleet page of fewer than 1 or more than 1000 rows',
    remedy: 'give a page size from 1 to 1000; the whole fleet is mesh node list without --limit',
  },
  {
    code: 'MSHT4',
    context: 'inventory',
    meaning: 'a fleet page narrowed by an empty name prefix or site',
    remedy: 'leave the filter out, or give at least one character',
  },
  {
    code: 'MSHT5',
    context: 'inventory',
    meaning: "a fleet page size (mesh node list --limit, the console's ?limit=) that is not a whole number",
    remedy: 'give a page size from 1 to 1000',
    raisedIn: ['src/inventory/node.ts'],
  },
  {
    code: 'MSH60',
    context: 'overlay',
    meaning: 'the overlay range has no free address left',
    remedy: 'retire nodes that are gone (mesh node retire NAME), or widen overlay.settings.network',
  },
  {
    code: 'MSH61',
    context: 'overlay',
    meaning: 'an overlay setting names a node that is not enrolled',
    remedy: 'see mesh node list',
  },
  {
    code: 'MSH62',
    context: 'overlay',
    meaning: 'a hub that nothing can dial',
    remedy: 'retire it and issue its token again with --dialable HOST:PORT',
  },
  {
    code: 'MSH63',
    context: 'overlay',
    meaning: 'a pinned address outside the overlay range, or its network or broadcast address',
    remedy: 'choose an address inside the range, neither its first nor its last',
  },
  {
    code: 'MSH64',
    context: 'overlay',
    meaning: 'a pinned address another node holds',
    remedy: 'an address is never shared: choose another, or retire the node that holds it',
  },
  {
    code: 'MSH65',
    context: 'overlay',
    meaning: 'an ssh port outside 1-65535 (mesh firewall ssh-port)',
    remedy: 'give a port from 1 to 65535',
    raisedIn: ['src/cli/firewall.ts'],
  },
  {
    code: 'MSH66',
    context: 'overlay',
    meaning: 'broker cluster ports (epmd, Erlang distribution) that are not two different ports from 1-65535',
    remedy: 'give two different ports from 1 to 65535 (install.sh --epmd-port, --dist-port)',
  },

  {
    code: 'MSH70',
    context: 'audit',
    meaning: 'a row of the audit history was to be changed or removed: it is append-only',
    remedy: 'nothing was changed; history is never edited: a correction is a new row',
  },
  {
    code: 'MSH71',
    context: 'audit',
    meaning: 'the audit history does not match its hash chain: a row was changed or removed outside the mesh',
    remedy:
      'treat the database as tampered with: compare with a backup from before that row, and find who had superuser rights',
  },
  {
    code: 'MSH74',
    context: 'audit',
    meaning: 'a statement would drop, disable or rename away an audit trigger on a table the history records',
    remedy:
      'nothing was changed; the audit triggers belong to the audit context: a migration of that context changes them (audit.watched lists them)',
  },
  {
    code: 'MSH75',
    context: 'audit',
    meaning: 'an audit trigger is missing or disabled: changes to its table may be missing from the history',
    remedy:
      'treat the database as tampered with (only a superuser can do this): put the trigger back from sql/audit, and find who had superuser rights',
  },
  {
    code: 'MSH79',
    context: 'audit',
    meaning:
      'a TRUNCATE of a table whose row removals the history records (inventory.node, inventory.broker, assignment.freeze)',
    remedy: 'nothing was removed; delete the rows instead, each recorded (mesh node retire removes a node)',
  },
  {
    code: 'MSH76',
    context: 'audit',
    meaning:
      'the audit history no longer reaches the head kept outside the store: rows were cut from its end or it was rewritten',
    remedy:
      'treat the database as tampered with: compare with a backup from the time of the kept head, and find who had superuser rights',
  },

  // Refused in TypeScript, by refuse(): raisedIn names the files (the test holds it to the tree).
  {
    code: 'MSH15',
    context: 'inventory',
    meaning: 'a lifetime or age (--ttl, --since) that is not a duration',
    remedy: 'use a number and s, m, h or d (e.g. 30m, 24h)',
    raisedIn: ['src/inventory/token.ts'],
  },
  {
    code: 'MSH16',
    context: 'inventory',
    meaning: "a token's --dialable that is not HOST:PORT",
    remedy: 'give the address other nodes dial, e.g. --dialable hub1.example.net:51820',
    raisedIn: ['src/inventory/token.ts'],
  },
  {
    code: 'MSH17',
    context: 'inventory',
    meaning: 'a drift threshold (--times) that is not a whole number above 0',
    remedy: 'give a whole number above 0',
    raisedIn: ['src/inventory/drift.ts'],
  },
  {
    code: 'MSH18',
    context: 'inventory',
    meaning: 'a command names a node that is not enrolled',
    remedy: 'see mesh node list',
    raisedIn: [
      'src/assignment/declare.ts',
      'src/assignment/firewall.ts',
      'src/inventory/node.ts',
      'src/secret/accept.ts',
    ],
  },
  {
    code: 'MSH19',
    context: 'inventory',
    meaning: 'a broker added without its certificate fingerprint',
    remedy: 'give --fingerprint FP (openssl x509 -noout -fingerprint -sha256 -in CERT prints it)',
    raisedIn: ['src/cli/broker.ts'],
  },
  {
    code: 'MSHF0',
    context: 'inventory',
    meaning: 'the console given one of --tls-cert and --tls-key without the other',
    remedy: 'give both --tls-cert and --tls-key, or neither',
    raisedIn: ['src/cli/console.ts'],
  },
  {
    code: 'MSHF1',
    context: 'inventory',
    meaning: 'a console --listen that is not ADDRESS:PORT',
    remedy: 'give an IP address and a port, e.g. 127.0.0.1:7780 or [::1]:7780',
    raisedIn: ['src/console/listen.ts'],
  },

  {
    code: 'MSHF2',
    context: 'inventory',
    meaning:
      'a node, site or module name outside [a-z][a-z0-9-]{0,62} (names become broker accounts and queue patterns)',
    remedy: 'use a lower-case letter, then up to 62 lower-case letters, digits or dashes',
    raisedIn: ['src/wire/names.ts'],
  },
  {
    code: 'MSHF3',
    context: 'inventory',
    meaning: 'a token that is not a mesh token (mesh-host enrol)',
    remedy: 'give the whole token mesh token issue NAME printed, on standard input',
    raisedIn: ['src/wire/token.ts'],
  },
  {
    code: 'MSHF4',
    context: 'host',
    meaning:
      'an applied.json whose mark (the highest serial taken) is damaged: read as 0 it would let an old declaration be applied again',
    remedy:
      'restore it from a backup, or move it away and let the host take its floor from the mesh (mesh-host asks for it when the kept declaration is gone)',
    raisedIn: ['host/apply/state.ts'],
  },

  {
    code: 'MSHA0',
    context: 'assignment',
    meaning: 'a declare or redeclare given both a node and --all, or neither',
    remedy: 'name a node, or give --all for every enrolled node',
    raisedIn: ['src/cli/declaration.ts'],
  },
  {
    code: 'MSHA1',
    context: 'assignment',
    meaning: 'a declaration over the size limit',
    remedy: 'move large content out of modules (an image, or a file the node fetches)',
    raisedIn: ['src/assignment/declare.ts'],
  },

  {
    code: 'MSH32',
    context: 'catalogue',
    meaning: 'a source whose --git names no repository',
    remedy: 'give a URL git can clone, or a path on the build machine (not starting with "-")',
    raisedIn: ['src/catalogue/source.ts'],
  },
  {
    code: 'MSH33',
    context: 'catalogue',
    meaning: 'a source --path that is not a relative folder inside the repository',
    remedy: 'use letters, digits, . _ / -; no ".."',
    raisedIn: ['src/catalogue/source.ts'],
  },
  {
    code: 'MSH34',
    context: 'catalogue',
    meaning: 'a --ref that is not a branch, tag or commit name',
    remedy: 'use letters, digits, . _ / -, not starting with "-"',
    raisedIn: ['src/catalogue/build.ts', 'src/catalogue/source.ts'],
  },
  {
    code: 'MSH35',
    context: 'catalogue',
    meaning: 'a build --timeout that is not a duration above 0',
    remedy: 'use a number and s, m or h (e.g. 90s, 30m)',
    raisedIn: ['src/catalogue/build.ts'],
  },
  {
    code: 'MSH36',
    context: 'catalogue',
    meaning: 'a module file that is not JSON',
    remedy: 'write {"name": "...", "resources": [...]}',
    raisedIn: ['src/catalogue/module_add.ts'],
  },
  {
    code: 'MSH37',
    context: 'catalogue',
    meaning: 'a module file that is not {name, resources}',
    remedy: 'write {"name": "...", "resources": [...]}',
    raisedIn: ['src/catalogue/module_add.ts'],
  },
  // A module file's resources, refused by the host's own parser (src/wire/parse_resources.ts), each rule its code (src/catalogue/module_refusal.ts).
  {
    code: 'MSHM0',
    context: 'catalogue',
    meaning: "a module file's resource of a kind no module carries",
    remedy:
      'use one of the kinds the message lists (a module puts files, directories, services, containers and openings)',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM1',
    context: 'catalogue',
    meaning: "a module file's resource with a field its kind does not have",
    remedy:
      'remove the field or mend its spelling: a field one end drops is how two ends come to disagree, so none is ignored',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM2',
    context: 'catalogue',
    meaning: "a module file's resource without a field its kind needs",
    remedy: 'add the field the message names',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM3',
    context: 'catalogue',
    meaning: "a module file's field whose value is not of its form (a name, mode, port, key, list...)",
    remedy: 'write the field as the message says',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM4',
    context: 'catalogue',
    meaning: "a module file's resource id that is not its kind:path or kind:name",
    remedy: 'leave "id" out (mesh module add fills it in) or write the id the message gives',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM5',
    context: 'catalogue',
    meaning: 'a module file listing one resource (one path or name of a kind) twice',
    remedy: 'list each path or name once: two entries would fight over one file or unit',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  {
    code: 'MSHM6',
    context: 'catalogue',
    meaning: "a module file's service named as one of the bundle's own units",
    remedy: "choose another name: mesh-NAME.service would overwrite the control plane's own unit",
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  // The builder's settings (mesh-builder run): refused before it takes a request off the queue.
  {
    code: 'MSHM8',
    context: 'catalogue',
    meaning: 'a MESH_BUILDER_REGISTRY that is not HOST:PORT',
    remedy: 'give the registry images are pushed to as HOST:PORT (default 127.0.0.1:5000), no scheme or path',
    raisedIn: ['src/builder/run.ts'],
  },
  {
    code: 'MSHM9',
    context: 'catalogue',
    meaning: 'a MESH_BUILDER_PULL that is not a pull policy',
    remedy: 'give always, missing, never or newer (podman build --pull), or unset it for missing',
    raisedIn: ['src/builder/run.ts'],
  },
  {
    code: 'MSHM7',
    context: 'catalogue',
    meaning: "a module file's path that is not absolute and normalised",
    remedy: 'write an absolute path without "..", "//" or a trailing "/"',
    raisedIn: ['src/catalogue/module_refusal.ts'],
  },
  // The builder's enrolment line and credential file (mesh-builder enrol, run), and a source's ref (mesh module list --refresh).
  {
    code: 'MSHP0',
    context: 'catalogue',
    meaning: 'a builder enrolment line that is not one (mesh-builder enrol)',
    remedy: 'paste the whole line `mesh builder add NAME` printed',
    raisedIn: ['src/wire/builder_line.ts'],
  },
  {
    code: 'MSHP1',
    context: 'catalogue',
    meaning: 'a builder enrolled again over the credential it keeps',
    remedy: 'remove its credential.json first if it is to become another builder',
    raisedIn: ['src/builder/enrol.ts'],
  },
  {
    code: 'MSHP2',
    context: 'catalogue',
    meaning: 'a builder enrolment line whose account the broker refuses (the line was replaced)',
    remedy: 'on the control plane run mesh builder add NAME again and enrol with the new line',
    raisedIn: ['src/builder/enrol.ts'],
  },
  {
    code: 'MSHP3',
    context: 'catalogue',
    meaning: 'a builder enrolment line whose account may read no build queue',
    remedy: 'on the control plane run mesh builder add NAME again (mesh serve declares the queue)',
    raisedIn: ['src/builder/enrol.ts'],
  },
  {
    code: 'MSHP4',
    context: 'catalogue',
    meaning: 'a builder credential.json that exists but cannot be read (a fault, not a wait)',
    remedy: "fix its permissions (0600, the builder's user), or enrol again",
    raisedIn: ['src/builder/credential.ts'],
  },
  {
    code: 'MSHP5',
    context: 'catalogue',
    meaning: 'a builder credential.json that is damaged (not JSON, or not a credential)',
    remedy: 'on the control plane run mesh builder add NAME again, remove the file and enrol with the new line',
    raisedIn: ['src/builder/credential.ts'],
  },
  {
    code: 'MSHP6',
    context: 'catalogue',
    meaning: 'mesh-builder run on a machine with no builder credential',
    remedy: 'run mesh-builder enrol with the line mesh builder add NAME printed',
    raisedIn: ['src/builder/run.ts'],
  },
  {
    code: 'MSHP7',
    context: 'catalogue',
    meaning: 'a source whose ref names no branch, tag or commit of its repository',
    remedy: 'give a ref the repository has: mesh module source MODULE --git URL --ref REF',
    raisedIn: ['src/catalogue/git_head.ts'],
  },
  // The builder's line off argv and pinned builds (src/builder/builder_program.ts, src/catalogue/source.ts, serve's build results).
  {
    code: 'MSHU5',
    context: 'catalogue',
    meaning:
      "a builder enrolment line on mesh-builder enrol's command line, where every user of the machine can read it",
    remedy: 'give it on standard input as mesh builder add prints it: echo LINE | mesh-builder enrol',
    raisedIn: ['src/builder/builder_program.ts'],
  },
  {
    code: 'MSHU6',
    context: 'catalogue',
    meaning:
      'a build result naming an image repository other than the one the control plane assigned to its module: recorded as a failed build',
    remedy:
      "set the builder's MESH_BUILDER_REGISTRY to the module's registry, or assign another: mesh module source MODULE --git URL --image REGISTRY/REPOSITORY",
    raisedIn: ['src/serve/handlers/build_result.ts'],
  },
  {
    code: 'MSHU8',
    context: 'catalogue',
    meaning: "the control plane did not replace a builder's password at its enrolment in time",
    remedy: 'check mesh serve is running; then mesh builder add NAME makes a new line',
    raisedIn: ['src/builder/enrol.ts'],
  },
  {
    code: 'MSHU7',
    context: 'catalogue',
    meaning: 'a module source --image that is not REGISTRY/REPOSITORY',
    remedy: 'give the registry and repository its images are pushed to, e.g. --image registry.example.org:5000/web',
    raisedIn: ['src/catalogue/source.ts'],
  },

  {
    code: 'MSH46',
    context: 'secret',
    meaning: 'an accepted secret whose value is empty',
    remedy: 'put the value the other system knows in the file (or on stdin)',
    raisedIn: ['src/secret/accept.ts'],
  },
  {
    code: 'MSH47',
    context: 'secret',
    meaning: 'a secret placed with no holder named',
    remedy: 'name at least one holder: --node NAME',
    raisedIn: ['src/secret/accept.ts'],
  },
  {
    code: 'MSH48',
    context: 'secret',
    meaning: 'a secret placed with no path on its holders',
    remedy: 'say where it goes: --path /ABSOLUTE/PATH',
    raisedIn: ['src/cli/secret.ts'],
  },
  {
    code: 'MSH49',
    context: 'secret',
    meaning: 'a secret placed on a holder with no queue on the broker: it could not be told',
    remedy: 'nothing was stored; retire the node and enrol it again',
    raisedIn: ['src/secret/accept.ts'],
  },
  {
    code: 'MSHQ0',
    context: 'secret',
    meaning: 'a secret remade for a holder with no queue on the broker: it could not be told',
    remedy: 'nothing was changed; retire the node and enrol it again, or unassign it',
    raisedIn: ['src/secret/remake.ts'],
  },
  // MSHQ1 on: assignment's promises, change-freeze windows and declarations at a time (the header's Qx).
  {
    code: 'MSHQ1',
    context: 'assignment',
    meaning: 'a change that would break a promise: nothing was committed and nothing is owed',
    remedy: 'keep the promise (mesh promise list says what it asks), or remove it first: mesh promise remove NAME',
  },
  {
    code: 'MSHQ2',
    context: 'assignment',
    meaning: 'a promise that is broken already when it is made',
    remedy: 'make it true first (the refusal says what breaks it), then promise it',
  },
  {
    code: 'MSHQ3',
    context: 'assignment',
    meaning: 'a promise that is not one of the kinds mesh keeps, or badly named',
    remedy: 'one of: --site S --closed PORT; --node A --reaches B:PORT; --module M --runs SERVICE; --hubs N',
    raisedIn: ['src/assignment/promise.ts'],
  },
  {
    code: 'MSHQ4',
    context: 'assignment',
    meaning: 'a promise whose name is taken',
    remedy: 'choose another name, or mesh promise remove NAME first',
  },
  {
    code: 'MSHQ5',
    context: 'assignment',
    meaning: 'a promise removed that does not exist',
    remedy: 'mesh promise list shows the promises',
  },
  {
    code: 'MSHQ6',
    context: 'assignment',
    meaning: 'a time that is neither a timestamp nor an age',
    remedy: 'give a timestamp (2026-12-05 12:00, 2026-12-05T12:00:00Z) or an age (90s, 30m, 2h, 7d)',
  },
  {
    code: 'MSHQ7',
    context: 'assignment',
    meaning: 'a node asked about at a time that was never declared',
    remedy: 'see mesh node list; a node is kept from its first declaration on',
    raisedIn: ['src/assignment/history.ts'],
  },
  {
    code: 'MSHQ8',
    context: 'assignment',
    meaning: 'an explicit declare of a change a change-freeze window holds',
    remedy: 'it goes out when the window ends; to send it now: mesh freeze override ID --reason TEXT',
  },
  {
    code: 'MSHQ9',
    context: 'assignment',
    meaning: 'a change-freeze window without both ends, or one that ends before it begins',
    remedy: 'mesh freeze add --from TIME --until LATER-TIME [--site S] [--module M]',
  },
  {
    code: 'MSHB3',
    context: 'assignment',
    meaning: 'a change-freeze window that ended already',
    remedy: 'give an --until in the future',
  },
  {
    code: 'MSHB4',
    context: 'assignment',
    meaning: 'a change-freeze window overridden without a reason',
    remedy: 'say why, for the history: mesh freeze override ID --reason TEXT',
  },
  {
    code: 'MSHB5',
    context: 'assignment',
    meaning: 'an override of a change-freeze window that holds nothing now or later',
    remedy: 'mesh freeze list shows the windows',
  },
  {
    code: 'MSHB6',
    context: 'assignment',
    meaning: 'a change-freeze window removed or overridden that does not exist',
    remedy: 'mesh freeze list shows the windows',
    raisedIn: ['src/cli/freeze.ts'],
  },
  {
    code: 'MSHB7',
    context: 'assignment',
    meaning: 'a promise whose name is not a name',
    remedy: 'a lower-case letter, then letters, digits or dashes: mesh promise add no-dmz-postgres ...',
  },

  {
    code: 'MSHB0',
    context: 'provision',
    meaning: 'a provision offered without its kind or provider',
    remedy: 'say what it is and who provides it: --kind postgres|route --provider MODULE',
    raisedIn: ['src/cli/provision.ts'],
  },
  {
    code: 'MSHB1',
    context: 'provision',
    meaning: 'a postgres provision offered without where its server listens',
    remedy: 'give --host HOST --port PORT',
    raisedIn: ['src/provision/grants.ts'],
  },
  {
    code: 'MSHB2',
    context: 'provision',
    meaning: "a holder of a pair's credential with no queue on the broker: a rotation sends to every holder or to none",
    remedy: 'nothing was sent and the old credential keeps working; retire and enrol it again, or unassign its module',
    raisedIn: ['src/provision/credential.ts'],
  },

  {
    code: 'MSHY0',
    context: 'overlay',
    meaning: 'a question about paths that names no node',
    remedy: 'name at least one node, e.g. --down hub1',
  },
  {
    code: 'MSHY1',
    context: 'overlay',
    meaning: 'a question about paths that names a node the overlay does not hold',
    remedy:
      'name nodes mesh overlay show lists: a node joins the overlay once enrolled and given an address by mesh declare',
  },
  {
    code: 'MSHY2',
    context: 'assignment',
    meaning: 'a path asked from a node to itself',
    remedy: 'name two different nodes: mesh overlay why FROM TO',
  },
  {
    code: 'MSHY3',
    context: 'assignment',
    meaning: 'a path asked on a port that is not a port number',
    remedy: 'give a TCP port from 1 to 65535',
    raisedIn: ['src/assignment/why.ts'],
  },
  {
    code: 'MSHY4',
    context: 'overlay',
    meaning: 'a what-if --limit that is not a count',
    remedy: 'give a whole number; 0 prints every lost pair',
    raisedIn: ['src/cli/overlay.ts'],
  },
  {
    code: 'MSH67',
    context: 'overlay',
    meaning: 'a pinned overlay address that is not an IPv4 address',
    remedy: 'give an address such as 10.99.0.7',
    raisedIn: ['src/overlay/hub.ts'],
  },

  {
    code: 'MSH72',
    context: 'audit',
    meaning: 'a history filter --kind that is no kind of the history',
    remedy: 'use one of the kinds mesh log lists, or a prefix before a dash (e.g. token)',
    raisedIn: ['src/audit/log.ts'],
  },
  {
    code: 'MSH73',
    context: 'audit',
    meaning: 'a history --limit that is not a whole number above 0',
    remedy: 'give a whole number above 0',
    raisedIn: ['src/audit/log.ts'],
  },
  {
    code: 'MSH77',
    context: 'audit',
    meaning:
      'a kept audit head (mesh audit verify --head FILE) that cannot be read or is not one mesh audit head wrote',
    remedy: 'give the file mesh audit head --out wrote (JSON with seq and hash), unchanged',
    raisedIn: ['src/audit/head.ts'],
  },
  {
    code: 'MSH78',
    context: 'audit',
    meaning: 'mesh migrate has no way to act as mesh_audit, the owner of the history, which no process logs in as',
    remedy:
      'set MESH_STORE_AUDIT_OWNER to the URL (or a 0600 file holding it) of a role that may SET ROLE mesh_audit: the database superuser',
    raisedIn: ['src/store/migrate.ts'],
  },

  {
    code: 'MSHE2',
    context: 'store',
    meaning: 'a MESH_STORE_WAIT_SECONDS that is not a number of seconds',
    remedy: 'give whole or fractional seconds, 0 or more (unset: the default)',
    raisedIn: ['src/store/wait.ts'],
  },
  {
    code: 'MSHE3',
    context: 'store',
    meaning: 'a migration file that is not named NNNN-words.sql',
    remedy: 'rename it: four digits, a dash, lower-case words joined by dashes',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE4',
    context: 'store',
    meaning: 'a migration file with nothing but comments',
    remedy: 'a migration must change something: write its SQL or delete the file',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE5',
    context: 'store',
    meaning: 'two migrations of a context sharing a number',
    remedy: 'renumber the one that has not run to follow the highest',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE6',
    context: 'store',
    meaning: 'a migration that ran is no longer in the folder',
    remedy: 'restore it as it was: a migration that ran is never deleted',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE7',
    context: 'store',
    meaning: 'a migration edited after it ran',
    remedy: 'put it back as it was (git checkout) and write the change as a new migration numbered above the highest',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE8',
    context: 'store',
    meaning: 'a new migration numbered below one that already ran',
    remedy: 'renumber it above the highest',
    raisedIn: ['src/store/migrate.ts'],
  },
  {
    code: 'MSHE9',
    context: 'store',
    meaning: "a context's store variable (MESH_STORE_<CONTEXT>) that is not set",
    remedy:
      'set it to the URL of its store (postgres://mesh_CONTEXT@HOST:PORT/DB) or the path of a 0600 file holding it',
    raisedIn: ['src/store/locate.ts'],
  },
  {
    code: 'MSHH0',
    context: 'store',
    meaning: 'a store variable naming a file that does not exist',
    remedy: 'give the path of the 0600 file holding the URL',
    raisedIn: ['src/store/locate.ts'],
  },
  {
    code: 'MSHH1',
    context: 'store',
    meaning: 'a store variable naming a file others can read',
    remedy: 'chmod 600 the file',
    raisedIn: ['src/store/locate.ts'],
  },
  {
    code: 'MSHH2',
    context: 'store',
    meaning: 'a store URL carrying a password in the environment',
    remedy: 'put the URL in a 0600 file and set the variable to its path',
    raisedIn: ['src/store/locate.ts'],
  },
  {
    code: 'MSHH3',
    context: 'store',
    meaning: 'a store URL that is not a valid postgres:// URL',
    remedy: 'write postgres://ROLE@HOST:PORT[,HOST:PORT...]/DB',
    raisedIn: ['src/store/hosts.ts'],
  },
  {
    code: 'MSHH4',
    context: 'store',
    meaning: 'a store URL listing a host that is not HOST or HOST:PORT',
    remedy: 'write each host as HOST or HOST:PORT, joined by commas',
    raisedIn: ['src/store/hosts.ts'],
  },
  {
    code: 'MSHH5',
    context: 'store',
    meaning: 'a store URL of several hosts that does not ask for the primary',
    remedy: 'add ?target_session_attrs=read-write, so only the primary is taken',
    raisedIn: ['src/store/hosts.ts'],
  },
  // The control plane's home (MESH_HOME: broker.json, signing.key), read before anything is asked of the broker or the store.
  {
    code: 'MSHH6',
    context: 'store',
    meaning: 'a control plane home file (MESH_HOME/broker.json or signing.key) that does not exist',
    remedy: "run the first-node bundle, or set MESH_HOME to the control plane's folder",
    raisedIn: ['src/home/home.ts'],
  },
  {
    code: 'MSHH7',
    context: 'store',
    meaning: 'a control plane home file others can read (it holds the broker admin password or the signing key)',
    remedy: 'chmod 600 it, and treat what it holds as read by others',
    raisedIn: ['src/home/home.ts'],
  },
  {
    code: 'MSHH8',
    context: 'store',
    meaning: 'a broker.json that is not JSON',
    remedy: "mend it where the message says, or restore it from the first-node bundle's copy",
    raisedIn: ['src/home/home.ts'],
  },
  {
    code: 'MSHH9',
    context: 'store',
    meaning: 'a signing.key that is not a 32-byte Ed25519 key in base64',
    remedy: 'restore the key from a backup: another key is another mesh, and every node refuses what it signs',
    raisedIn: ['src/home/home.ts'],
  },
  {
    code: 'MSHJ0',
    context: 'store',
    meaning: 'a broker.json "amqp" entry that is not a broker node',
    remedy: 'give {"host": HOST, "port": PORT}, with "fingerprint" for another node\'s TLS listener',
    raisedIn: ['src/broker/admin.ts'],
  },
  {
    code: 'MSHJ1',
    context: 'store',
    meaning: 'a broker.json "amqp" entry without a usable "host"',
    remedy: 'give the node\'s address or name, e.g. "10.99.0.2"',
    raisedIn: ['src/broker/admin.ts'],
  },
  {
    code: 'MSHJ2',
    context: 'store',
    meaning: 'a broker.json "amqp" entry without a usable "port"',
    remedy: 'give a number from 1 to 65535 (the AMQP port, or the TLS port with "fingerprint")',
    raisedIn: ['src/broker/admin.ts'],
  },
  {
    code: 'MSHJ3',
    context: 'store',
    meaning: 'a broker.json "amqp" entry whose "fingerprint" is not a SHA-256 fingerprint',
    remedy:
      'give 32 upper-case hex pairs joined by colons, as `openssl x509 -noout -fingerprint -sha256 -in CERT` or `mesh broker list` print it, or leave it out for a plaintext hop',
    raisedIn: ['src/broker/admin.ts'],
  },
  {
    code: 'MSHJ4',
    context: 'store',
    meaning: 'a broker.json whose "amqp" lists no broker',
    remedy: 'name at least one broker node: {"host": HOST, "port": PORT}',
    raisedIn: ['src/broker/admin.ts'],
  },
  {
    code: 'MSHJ5',
    context: 'store',
    meaning: 'a broker.json whose "management" lists no API',
    remedy: "name at least one: the http://127.0.0.1:PORT of the broker's management API",
    raisedIn: ['src/broker/admin.ts'],
  },
  // The one program shell of every CLI (src/sys/program.ts).
  {
    code: 'MSHJ6',
    context: 'store',
    meaning: 'a command line option the command does not have (a typo is never run as if absent)',
    remedy: "use one of the options the message lists (see the command's --help)",
    raisedIn: ['src/sys/program.ts'],
  },
  {
    code: 'MSHJ7',
    context: 'store',
    meaning: 'a metrics address (mesh serve --metrics, MESH_SERVE_METRICS) that is not ADDRESS:PORT',
    remedy: 'give an IP address and a port, e.g. 127.0.0.1:9780 (the default) or [::1]:9780',
    raisedIn: ['src/serve/metrics_listen.ts'],
  },
  {
    code: 'MSHJ8',
    context: 'store',
    meaning: "a metrics address mesh serve cannot listen on (in use, or not this machine's)",
    remedy: 'name a free ADDRESS:PORT with --metrics or MESH_SERVE_METRICS (each serve on a machine needs its own)',
    raisedIn: ['src/serve/endpoint.ts'],
  },
  {
    code: 'MSHJ9',
    context: 'store',
    meaning: 'a log format setting (MESH_LOG_FORMAT) that is neither plain nor json',
    remedy: 'set plain (the default: a time and a sentence) or json (one object a line), or unset it',
    raisedIn: ['src/sys/log.ts'],
  },
  {
    code: 'MSHE0',
    context: 'store',
    meaning: 'a promote whose --data holds no PostgreSQL cluster',
    remedy: "give the standby's data directory with --data",
    raisedIn: ['src/store/promote.ts'],
  },
  {
    code: 'MSHE1',
    context: 'store',
    meaning: 'a promote of a cluster that is not a standby (no standby.signal)',
    remedy: 'it is a primary already: nothing to promote',
    raisedIn: ['src/store/promote.ts'],
  },

  // mesh-host: a declaration (or a command line) it will not apply; reported with the code, as the message said it.
  {
    code: 'MSH80',
    context: 'host',
    meaning: 'mesh-host overlay take without a tunnel named',
    remedy: 'name the tunnel to take over: --tunnel IFACE',
    raisedIn: ['host/host_program.ts'],
  },
  {
    code: 'MSH81',
    context: 'host',
    meaning: 'a service or container name outside [a-z][a-z0-9-]{0,62}',
    remedy: 'fix the declaration: names are [a-z][a-z0-9-]{0,62}',
    raisedIn: ['host/apply/container.ts', 'host/apply/service.ts'],
  },
  {
    code: 'MSH82',
    context: 'host',
    meaning: 'a service whose exec is not an argv starting with an absolute path',
    remedy: "fix the declaration: exec's first word is an absolute path",
    raisedIn: ['host/apply/service.ts'],
  },
  {
    code: 'MSH83',
    context: 'host',
    meaning: 'a container network other than none or a named network namespace',
    remedy: 'use "none" or "ns:/run/netns/NAME" (podman\'s own networks change the host\'s firewall)',
    raisedIn: ['host/apply/container.ts'],
  },
  {
    code: 'MSH84',
    context: 'host',
    meaning: "a container mount that is not two absolute paths without ':' or ','",
    remedy: "both must be absolute paths without ':' or ',' (podman -v splits on them)",
    raisedIn: ['host/apply/container.ts'],
  },
  {
    code: 'MSH85',
    context: 'host',
    meaning: 'a declared path that is not absolute and normalised',
    remedy: 'fix the declaration: an absolute path, no "..", under an allowed root',
    raisedIn: ['host/apply/paths.ts'],
  },
  {
    code: 'MSH86',
    context: 'host',
    meaning: "a declared path under none of the host's allowed roots",
    remedy: "declare it under an allowed root, or add the root to this host's configuration",
    raisedIn: ['host/apply/paths.ts'],
  },
  {
    code: 'MSH87',
    context: 'host',
    meaning: 'a declared path whose directory leads out of the allowed roots through a symlink',
    remedy: 'remove the symlink or fix the declaration',
    raisedIn: ['host/apply/paths.ts'],
  },
  {
    code: 'MSHX1',
    context: 'inventory',
    meaning: 'a console sign-in form larger than a sign-in link can make',
    remedy: 'open the link mesh console token prints and press sign in',
    raisedIn: ['src/console/server.ts'],
  },
  {
    code: 'MSHX0',
    context: 'host',
    meaning:
      "a declared path that is the host's own (its directory, a unit or drop-in of mesh's services), the control plane's home or state, or the machine's accounts",
    remedy: 'declare the file elsewhere: these are never written by a declaration, whatever the roots',
    raisedIn: ['host/apply/paths.ts'],
  },
  {
    code: 'MSH88',
    context: 'host',
    meaning: 'a declared owner that is no user on this host',
    remedy: 'create the user (or declare it) before files owned by it',
    raisedIn: ['host/apply/owner.ts'],
  },
  {
    code: 'MSH89',
    context: 'host',
    meaning: 'a declared mode that is not an octal mode',
    remedy: 'fix the declaration: an octal mode like "0644"',
    raisedIn: ['host/apply/owner.ts'],
  },
  {
    code: 'MSHC0',
    context: 'host',
    meaning: 'a resource kind this mesh-host has no driver for',
    remedy: 'update mesh-host to a version that knows the kind',
    raisedIn: ['host/apply/engine.ts'],
  },
  {
    code: 'MSHC1',
    context: 'host',
    meaning: 'a resource id listed twice in one apply: nothing was applied',
    remedy: 'fix the declaration so each id appears once',
    raisedIn: ['host/apply/engine.ts'],
  },
  {
    code: 'MSHC2',
    context: 'host',
    meaning: 'a resource another origin (carried or declared) holds: each origin removes and replaces only its own',
    remedy: "remove it from the other origin's resources first",
    raisedIn: ['host/apply/engine.ts'],
  },
  {
    code: 'MSHC3',
    context: 'host',
    meaning: 'a declared directory whose path holds something else',
    remedy: 'move it away so the directory can be made',
    raisedIn: ['host/apply/directory.ts'],
  },
  {
    code: 'MSHC4',
    context: 'host',
    meaning: 'a WireGuard interface name wg-quick cannot take',
    remedy: 'fix the declaration: a lower-case letter, then up to 14 lower-case letters, digits, _ or -',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHC5',
    context: 'host',
    meaning: 'a WireGuard key that is not 32 bytes in base64',
    remedy: 'give 44 characters of base64 (wg genkey, wg pubkey)',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHC6',
    context: 'host',
    meaning: 'a WireGuard address or allowed IP without a valid prefix',
    remedy: 'write it like 10.99.0.2/24',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHC7',
    context: 'host',
    meaning: 'a WireGuard listen or endpoint port outside 1-65535',
    remedy: 'give a port from 1 to 65535',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHC8',
    context: 'host',
    meaning: 'a WireGuard interface whose peers are not a list',
    remedy: 'fix the declaration: peers is a list',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHC9',
    context: 'host',
    meaning: 'a WireGuard peer key listed twice: WireGuard keeps one entry per key',
    remedy: 'the mesh must give each peer once, routing through a hub by its one entry',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHG0',
    context: 'host',
    meaning: 'a WireGuard peer endpoint that is not host:port',
    remedy: 'write it as HOST:PORT or [IPV6]:PORT',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHG1',
    context: 'host',
    meaning: 'a WireGuard peer with no allowed IPs',
    remedy: 'a peer nothing routes to carries nothing: give it its addresses',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHG2',
    context: 'host',
    meaning: 'a WireGuard peer allowing a default route (/0)',
    remedy: 'the overlay routes its own addresses only, never a default route',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },
  {
    code: 'MSHG6',
    context: 'host',
    meaning: 'a tunnel taken over on a machine that is not enrolled',
    remedy: 'run echo TOKEN | mesh-host enrol first, then take the tunnel over',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHG7',
    context: 'host',
    meaning: 'a tunnel taken over whose address is not the one the mesh declares',
    remedy:
      'on the control plane, pin the found address (mesh overlay address NODE ADDRESS) and declare again, then take it over again',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHG4',
    context: 'host',
    meaning: 'a mesh-host seconds setting (MESH_HOST_*_SECONDS) that is not a positive number',
    remedy: 'give a positive number of seconds, or unset it for the default',
    raisedIn: ['host/config.ts', 'src/sys/backoff.ts'],
  },
  {
    code: 'MSHG5',
    context: 'host',
    meaning: 'a reconnect backoff whose floor is above its ceiling',
    remedy: 'lower MESH_HOST_BACKOFF_MIN_SECONDS or raise MESH_HOST_BACKOFF_MAX_SECONDS',
    raisedIn: ['src/sys/backoff.ts'],
  },
  {
    code: 'MSHK7',
    context: 'host',
    meaning: 'a reconnect jitter setting (MESH_HOST_BACKOFF_JITTER) that is neither decorrelated nor none',
    remedy: 'set decorrelated (the default: waits spread over the window) or none (the plain doubling), or unset it',
    raisedIn: ['src/sys/backoff.ts'],
  },
  // mesh-host's own files, refused rather than read as empty (L4, D2): each names its remedy.
  {
    code: 'MSHI5',
    context: 'host',
    meaning: 'an identity.json that exists but cannot be read: a fault to repair, not a host waiting to enrol',
    remedy: 'fix its permissions (root, 0600), or retire this node and enrol it again',
    raisedIn: ['host/identity.ts'],
  },
  {
    code: 'MSHI6',
    context: 'host',
    meaning: 'an identity.json that is damaged (not JSON, or not an identity)',
    remedy: 'restore it from a backup, or retire this node (mesh node retire NAME) and enrol it again',
    raisedIn: ['host/identity.ts'],
  },
  {
    code: 'MSHI7',
    context: 'host',
    meaning:
      'a serial.json (where hosts kept their mark before applied.json held it) that is damaged: read as 0 it would let an old declaration be applied again',
    remedy:
      'restore it from a backup, or remove it and let the host take its floor from the mesh (mesh-host asks for it when the kept declaration is gone)',
    raisedIn: ['host/serial.ts'],
  },
  {
    code: 'MSHI8',
    context: 'host',
    meaning: 'a state file (applied.json: what mesh-host holds) that is not JSON',
    remedy: 'restore it from a backup, or move it away and let the host remove orphans from its last report',
    raisedIn: ['host/apply/state.ts'],
  },
  {
    code: 'MSHI9',
    context: 'host',
    meaning: 'a state file (applied.json) that is not of version 1',
    remedy: 'move it away and let the host remove orphans from its last report',
    raisedIn: ['host/apply/state.ts'],
  },
  {
    code: 'MSHK0',
    context: 'host',
    meaning: 'a broker list saved on a machine that is not enrolled',
    remedy: 'run echo TOKEN | mesh-host enrol first: the brokers are part of its identity',
    raisedIn: ['host/identity.ts'],
  },
  {
    code: 'MSHK1',
    context: 'host',
    meaning: 'a tunnel taken over (mesh-host overlay take) that is not up: nothing to take',
    remedy: 'start it (wg-quick up IFACE) and take it over, or let the mesh raise its own',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHK2',
    context: 'host',
    meaning: 'a tunnel taken over that was raised by hand, not from its wg-quick file: nothing could start it again',
    remedy: 'take it down and let the mesh raise its own, or write its file and bring it up with wg-quick up IFACE',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHK3',
    context: 'host',
    meaning: 'a tunnel taken over before the mesh declared an overlay interface for the node',
    remedy:
      'on the control plane, mesh declare --all --changed (a node needs a peer, a hub or a dialable node at its site, to get one)',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHK4',
    context: 'host',
    meaning: "a tunnel taken over that is the mesh's own interface",
    remedy: 'nothing to take over: name the tunnel that was there before the mesh',
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHK5',
    context: 'host',
    meaning: 'a tunnel taken over that listens on another port than the mesh declares',
    remedy: "set the mesh's port to the tunnel's, or move the tunnel to the mesh's, and declare again",
    raisedIn: ['host/overlay/take.ts'],
  },
  {
    code: 'MSHK6',
    context: 'host',
    meaning:
      'an enrolment.pending.json (an enrolment in flight: its keys and chosen broker password) that cannot be read; replacing it could lock out a node the mesh already enrolled',
    remedy:
      'to start over: remove the file; if the mesh accepted that enrolment (mesh node list), mesh node retire NAME and enrol with a new token (mesh token issue NAME)',
    raisedIn: ['host/enrol_pending.ts'],
  },
  {
    code: 'MSHG3',
    context: 'host',
    meaning: 'a WireGuard peer keepalive that is not whole seconds from 0 to 65535',
    remedy: 'give whole seconds, e.g. 25',
    raisedIn: ['host/apply/wireguard/wgconf.ts'],
  },

  // mesh-host enrol: each way an enrolment ends without an identity (host/enrol.ts).
  {
    code: 'MSHG8',
    context: 'host',
    meaning: 'mesh-host enrol on a machine that is already enrolled: it keeps one identity',
    remedy:
      'to enrol it again: mesh node retire NAME on the control plane, then remove identity.json from MESH_HOST_DIR',
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHG9',
    context: 'host',
    meaning: "the broker refused the token's account, with the token's secret and with the password this machine chose",
    remedy:
      'the token was spent by another machine, replaced or the node retired: ask the operator for a new one (mesh token issue NAME)',
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHI0',
    context: 'host',
    meaning: 'no broker of the token answered an enrolment',
    remedy:
      'check this machine reaches one of them (the message says what each said), then run echo TOKEN | mesh-host enrol again: it resumes with the same keys',
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHI1',
    context: 'host',
    meaning: 'the broker has no control queue to take an enrolment request',
    remedy: 'start mesh serve (it declares mesh.control), then run echo TOKEN | mesh-host enrol again',
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHI2',
    context: 'host',
    meaning: 'the broker did not accept an enrolment request (it nacked the publish)',
    remedy:
      "see the broker's log for why (a full or limited mesh.control), then run echo TOKEN | mesh-host enrol again",
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHI3',
    context: 'host',
    meaning: 'no answer from the control plane to an enrolment within its time',
    remedy:
      'check mesh serve is running, then run echo TOKEN | mesh-host enrol again: it resumes with the same keys and password (or give it longer: MESH_HOST_ENROL_SECONDS)',
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHI4',
    context: 'host',
    meaning:
      "the mesh refused an enrolment (the token expired, was spent by other keys, replaced, or names another node: the control plane's log says which)",
    remedy: 'ask the operator for a new token (mesh token issue NAME)',
    raisedIn: ['host/enrol.ts'],
  },
  // The token's pin and the token's way in (host/enrol.ts, src/wire/token.ts, host/host_program.ts).
  {
    code: 'MSHU0',
    context: 'host',
    meaning: 'an enrolment welcome naming a signing key other than the one the token names: nothing of it is kept',
    remedy:
      "tell the operator: someone who can publish to the broker's queues answered in the mesh's name; run the enrolment again once the mesh's own answer can arrive",
    raisedIn: ['host/enrol.ts'],
  },
  {
    code: 'MSHU1',
    context: 'host',
    meaning: "a token that does not name the mesh's signing key (issued by an older mesh)",
    remedy: 'issue a new one on the control plane: mesh token issue NAME',
    raisedIn: ['src/wire/token.ts'],
  },
  {
    code: 'MSHU2',
    context: 'host',
    meaning: "a token on mesh-host enrol's command line, where every user of the machine can read it",
    remedy: 'give it on standard input as mesh token issue prints it: echo TOKEN | mesh-host enrol',
    raisedIn: ['host/host_program.ts'],
  },
  {
    code: 'MSHU3',
    context: 'host',
    meaning: 'mesh-host enrol with no token on standard input',
    remedy: 'give it on standard input as mesh token issue prints it: echo TOKEN | mesh-host enrol',
    raisedIn: ['host/host_program.ts'],
  },

  // The bundle's installers (install.sh and what it runs): refused before anything is installed.
  {
    code: 'MSH90',
    context: 'bundle',
    meaning: 'install given only one of --add-broker-node and --broker-public',
    remedy: 'give both: the node, and the address nodes dial for its broker',
    raisedIn: ['bundle/install.ts'],
  },
  {
    code: 'MSH91',
    context: 'bundle',
    meaning: 'an install port option that is not a port number',
    remedy: 'give a port from 1 to 65535',
    raisedIn: ['bundle/install.ts'],
  },
  {
    code: 'MSH92',
    context: 'bundle',
    meaning: 'an install --host-env that is not MESH_NAME=value',
    remedy: 'give a MESH_ variable and its value, e.g. --host-env MESH_HOST_HEARD_SECONDS=60',
    raisedIn: ['bundle/install.ts'],
  },
  {
    code: 'MSH93',
    context: 'bundle',
    meaning: 'a bundle step run without root',
    remedy: 'sudo it',
    raisedIn: ['bundle/broker_node.ts', 'bundle/install.ts', 'bundle/standby.ts'],
  },
  {
    code: 'MSH94',
    context: 'bundle',
    meaning: 'a bundle step that needs this machine enrolled, on one that is not',
    remedy: 'enrol it first (mesh token issue NAME on the first node, then mesh-host enrol here), or give --host-dir',
    raisedIn: ['bundle/broker_node.ts', 'bundle/install.ts', 'bundle/standby.ts'],
  },
  {
    code: 'MSH95',
    context: 'bundle',
    meaning: "the standby bundle's primary half without its options",
    remedy: 'give --standby NODE --standby-address ADDR --listen ADDR',
    raisedIn: ['bundle/standby.ts'],
  },
  {
    code: 'MSH96',
    context: 'bundle',
    meaning: "the standby bundle's standby half without its options",
    remedy: 'give --name NODE --primary HOST:PORT --passfile PATH (the file the primary half wrote)',
    raisedIn: ['bundle/standby.ts'],
  },
  {
    code: 'MSH97',
    context: 'bundle',
    meaning: 'a standby --primary that is not HOST:PORT',
    remedy: "give the primary's overlay address and store port, e.g. --primary 10.99.0.1:5432",
    raisedIn: ['bundle/standby.ts'],
  },
  {
    code: 'MSH98',
    context: 'bundle',
    meaning: 'the standby bundle run without naming its half',
    remedy: 'standby.js primary ... on the primary, standby.js standby ... on the standby (see bundle/standby.ts)',
    raisedIn: ['bundle/standby.ts'],
  },
  {
    code: 'MSH99',
    context: 'bundle',
    meaning: 'install --broker-node without --join or --hand-over',
    remedy:
      "give --join FIRST (the first node's name) and --hand-over FILE (what install.sh --add-broker-node wrote); see --help",
    raisedIn: ['bundle/broker_node.ts'],
  },
  {
    code: 'MSHD0',
    context: 'bundle',
    meaning: "a broker node's hand-over file that is not there",
    remedy: 'run install.sh --add-broker-node NODE on the first node and copy the file it names here (scp)',
    raisedIn: ['bundle/broker_cluster.ts'],
  },
  {
    code: 'MSHD1',
    context: 'bundle',
    meaning: 'a hand-over file others may read (it holds the Erlang cookie)',
    remedy: "chmod 600 it, and run the first node's step again if others may have read it",
    raisedIn: ['bundle/broker_cluster.ts'],
  },
  {
    code: 'MSHD2',
    context: 'bundle',
    meaning: 'a hand-over file that is not JSON or not complete',
    remedy: 'copy it again from the first node',
    raisedIn: ['bundle/broker_cluster.ts'],
  },
  {
    code: 'MSHD3',
    context: 'bundle',
    meaning: 'a hand-over file another first node wrote than --join names',
    remedy: 'give --join as the file says, or the file that node wrote',
    raisedIn: ['bundle/broker_cluster.ts'],
  },
  {
    code: 'MSHD4',
    context: 'bundle',
    meaning: 'a hand-over file written for another node than this machine',
    remedy: "on the first node run install.sh --add-broker-node with this node's name",
    raisedIn: ['bundle/broker_cluster.ts'],
  },
  {
    code: 'MSHD5',
    context: 'bundle',
    meaning: '--add-broker-node names the first node itself',
    remedy: '--add-broker-node names another enrolled node',
    raisedIn: ['bundle/broker_hand_over.ts'],
  },
  {
    code: 'MSHD6',
    context: 'bundle',
    meaning: 'a standby name no replication slot can take',
    remedy: 'use lower-case letters, digits and _',
    raisedIn: ['bundle/replication.ts'],
  },
  {
    code: 'MSHD7',
    context: 'bundle',
    meaning: 'a standby cloned into a folder that already holds a cluster',
    remedy: 'a standby is cloned into an empty directory: move it away first if it is an old primary',
    raisedIn: ['bundle/replication.ts'],
  },
  {
    code: 'MSHD8',
    context: 'bundle',
    meaning: "a broker node's overlay address (hand-over file, or the store) that is not IPv4",
    remedy:
      "a broker node's Erlang distribution listens on its IPv4 overlay address: see mesh overlay show, and copy the hand-over file again from the first node",
    raisedIn: ['bundle/rabbitmq.ts'],
  },
  {
    code: 'MSHD9',
    context: 'bundle',
    meaning: 'a broker node named outside [a-z][a-z0-9-]{0,62}',
    remedy: 'name the node as it is enrolled (mesh node list)',
    raisedIn: ['bundle/rabbitmq.ts'],
  },
  {
    code: 'MSHL0',
    context: 'bundle',
    meaning: 'an install with no --public on a machine with no IPv4 address off loopback',
    remedy: 'give the address nodes dial with --public HOST',
    raisedIn: ['bundle/layout.ts'],
  },
  {
    code: 'MSHT0',
    context: 'bundle',
    meaning: "a daemon's user (mesh, mesh-console, mesh-broker) already exists as a login account or root",
    remedy: 'rename that account (usermod -l NEWNAME NAME), then run the installer again',
    raisedIn: ['bundle/users.ts'],
  },
  {
    code: 'MSHL1',
    context: 'bundle',
    meaning: 'a broker node added (--add-broker-node) where no first node was installed',
    remedy: 'install the first node first (install.sh without --add-broker-node), then add broker nodes on it',
    raisedIn: ['bundle/broker_hand_over.ts'],
  },
  {
    code: 'MSHL2',
    context: 'bundle',
    meaning: 'a broker node added that has no overlay address (not enrolled)',
    remedy: 'enrol it first (mesh token issue NODE, then mesh-host enrol on it), and see mesh overlay show',
    raisedIn: ['bundle/broker_hand_over.ts'],
  },

  // The wire: a message (or a file kept as it came) refused by whoever reads it, mesh-host or mesh serve alike.
  // A WireError carries its fault kind (what D1 tells apart and the report says) and one of these beside it;
  // a refusal without a code of its own takes its fault's (FAULT_CODES in src/wire/envelope.ts).
  {
    code: 'MSHN0',
    context: 'wire',
    meaning:
      'a message or kept file that is not of its form: not JSON, or not the shape of its kind (reported as malformed)',
    remedy:
      'nothing in it was used; the two ends may run different versions of mesh: update the older one (the message names the field)',
    raisedIn: [
      'src/wire/build.ts',
      'src/wire/builder_line.ts',
      'src/wire/declaration.ts',
      'src/wire/enrol.ts',
      'src/wire/envelope.ts',
      'src/wire/last_report.ts',
      'src/wire/packages.ts',
      'src/wire/parse_resources.ts',
      'src/wire/recover.ts',
      'src/wire/rekey.ts',
      'src/wire/report.ts',
    ],
  },
  {
    code: 'MSHN1',
    context: 'wire',
    meaning:
      'a message or kept file not signed by the key it must be: another mesh, or altered bytes (reported as forged)',
    remedy: 'nothing in it was used; if it recurs, find who else publishes to this queue or edits the file',
    raisedIn: ['src/serve/handlers/rekey.ts', 'src/wire/enrol.ts', 'src/wire/envelope.ts'],
  },
  {
    code: 'MSHN2',
    context: 'wire',
    meaning: 'a message over the size limit, refused before it was parsed',
    remedy: 'nothing in it was read; move large content out of modules (an image, or a file the node fetches)',
    raisedIn: ['src/wire/build.ts', 'src/wire/builder_line.ts', 'src/wire/envelope.ts', 'src/wire/report.ts'],
  },
  {
    code: 'MSHN3',
    context: 'wire',
    meaning: 'a declaration whose signed expiry passed before it arrived (reported as stale)',
    remedy:
      "it was not applied; see that mesh serve runs and this node's link to the broker is up: a current declaration is signed again well before then",
    raisedIn: ['host/agent.ts'],
  },
  {
    code: 'MSHN4',
    context: 'wire',
    meaning: 'a genuinely signed message for another node or mesh, or a node speaking for another (reported as forged)',
    remedy:
      "nothing in it was used; check that the queue and the identity are this node's own (mesh node list, mesh-host status)",
    raisedIn: ['src/serve/handlers/rekey.ts', 'src/wire/declaration.ts', 'src/wire/last_report.ts'],
  },
  {
    code: 'MSHN5',
    context: 'wire',
    meaning:
      "a replayed declaration: the mesh's own, correctly signed, with a serial not newer than the one applied, or another declaration at a serial used",
    remedy:
      'it was not applied and the newest stands; delivery is at least once (a redelivery, a broker restart), so nothing needs doing; mesh declare NODE signs a newer one',
    raisedIn: ['host/agent.ts'],
  },
  {
    code: 'MSHN6',
    context: 'wire',
    meaning:
      "an enrolment request whose chosen broker password is weak: not 43 to 200 base64url characters (fewer than 32 random bytes), so it would guard the node's account for years",
    remedy:
      'nothing was spent (the node is told only that it was refused); mesh-host chooses 32 random bytes: update the mesh-host that sent it',
    raisedIn: ['src/wire/enrol.ts'],
  },
  {
    code: 'MSHV0',
    context: 'inventory',
    meaning: "the control plane's stated version is not MAJOR.MINOR.PATCH",
    remedy: 'state the version package.json names, as mesh serve does when it starts',
  },
  {
    code: 'MSHV1',
    context: 'inventory',
    meaning: 'a node reported an agent version that is not MAJOR.MINOR.PATCH',
    remedy: 'the mesh-host sends the version its package.json names; a hand-built agent must too',
  },
  {
    code: 'MSHV2',
    context: 'inventory',
    meaning: 'a skew rule reaching fewer than 0 or more than 100 minors back',
    remedy: 'give 0 (the current minor only) to 100: select inventory.set_agent_skew(1)',
  },
  {
    code: 'MSHV3',
    context: 'assignment',
    meaning: 'a module assigned to a node whose agent is too old to apply one of its resource kinds',
    remedy: 'upgrade mesh-host on that node first; mesh node list --outdated lists the nodes behind',
  },
  {
    code: 'MSHV4',
    context: 'assignment',
    meaning: 'an agent feature that is not a resource kind with a MAJOR.MINOR.PATCH first version',
    remedy:
      "name a kind as declarations do and the mesh-host release that first applies it: select assignment.set_agent_feature('file', '0.2.0')",
  },
  {
    code: 'MSHZ0',
    context: 'catalogue',
    meaning: 'a mesh-host package added under a version already added with other bytes',
    remedy: 'a version names one package: build the new one with a new version, then mesh agent add it',
  },
  {
    code: 'MSHZ1',
    context: 'assignment',
    meaning: 'an agent upgrade to a version no mesh-host package was added for',
    remedy: 'add the package first: mesh agent add mesh-host_VERSION_ARCH.deb; mesh agent list shows those added',
  },
  {
    code: 'MSHZ2',
    context: 'assignment',
    meaning: 'an agent upgrade to a version outside the skew rule: the control plane would not speak with it',
    remedy:
      'upgrade the control plane first (its version bounds the agents it speaks with), or pick a version within the rule',
  },
  {
    code: 'MSHZ3',
    context: 'host',
    meaning:
      'an agent package whose bytes are not the sha256 and size the signed declaration names: nothing of it is installed',
    remedy:
      'mesh agent list shows the sha256 the store holds; add the package again from a good copy under a new version',
    raisedIn: ['host/apply/agent.ts'],
  },
  {
    code: 'MSHZ4',
    context: 'host',
    meaning:
      'a declared agent version that did not come up on this node: the machine went back to the version before by itself',
    remedy:
      "read the node's journal for why the new agent ended; declare another version with mesh agent upgrade --to VERSION",
    raisedIn: ['host/apply/agent.ts'],
  },
  {
    code: 'MSHZ5',
    context: 'catalogue',
    meaning: 'a file added as an agent package that is not a mesh-host package at a MAJOR.MINOR.PATCH version',
    remedy: 'add the mesh-host_VERSION_ARCH.deb that npm run deb makes',
    raisedIn: ['src/catalogue/agent_package.ts'],
  },
  {
    code: 'MSHZ6',
    context: 'wire',
    meaning: 'an ask for agent package chunks that is not {sha256, from, count} with at most a few chunks',
    remedy: 'nothing is sent for it; the mesh-host that asked writes asks as src/wire/agent_package.ts does: update it',
    raisedIn: ['src/wire/agent_package.ts'],
  },
  {
    code: 'MSHZ7',
    context: 'host',
    meaning: 'an agent package whose chunks did not come over the broker within the wait',
    remedy: 'is mesh serve running, and this node linked? The next declaration or reconcile asks again',
    raisedIn: ['host/upgrade/fetch.ts'],
  },
  {
    code: 'MSHZ8',
    context: 'host',
    meaning: 'an agent package that holds no agent at /usr/lib/mesh/dist/host/cli.js: not a mesh-host package',
    remedy: 'declare a version whose package npm run deb made (mesh agent add checks the name, not the tree)',
    raisedIn: ['host/apply/agent.ts'],
  },
  {
    code: 'MSHZ9',
    context: 'inventory',
    meaning:
      'an ask for agent package chunks every one of which was handed to the same node within the interval, refused unread',
    remedy:
      'nothing was read or sent again; the host asks again after the interval by itself (mesh serve logs each refusal: a node asking in a loop is worth a look)',
  },
  {
    code: 'MSHO0',
    context: 'inventory',
    meaning: 'a package version that is not a Debian version',
    remedy: 'a version is [EPOCH:]UPSTREAM[-REVISION], UPSTREAM starting with a digit (deb-version(7))',
  },
  {
    code: 'MSHO1',
    context: 'inventory',
    meaning: 'an advisory that is not an OSV document naming a Debian package version',
    remedy: 'give a file of OSV documents whose affected entries name a Debian ecosystem with ECOSYSTEM ranges',
  },
  {
    code: 'MSHO2',
    context: 'host',
    meaning: 'a MESH_HOST_DPKG_ROOT that is not an absolute directory',
    remedy: 'give the absolute root of the dpkg database the host reports and installs into, or unset it for /',
    raisedIn: ['host/config.ts'],
  },
  {
    code: 'MSHO3',
    context: 'inventory',
    meaning: 'an advisories file that is not JSON',
    remedy: 'give a file holding one OSV document, or a JSON list of them',
    raisedIn: ['src/inventory/advisories.ts'],
  },
  {
    code: 'MSHO4',
    context: 'assignment',
    meaning: 'a rollout of an advisory that is not loaded',
    remedy: 'load it first: mesh advisories load FILE',
  },
  {
    code: 'MSHO5',
    context: 'assignment',
    meaning: 'a rollout of an advisory that lists no node running an affected version with a fix to declare',
    remedy:
      'mesh advisories lists the nodes each advisory affects; one naming no fixed version has nothing to roll out',
  },
  {
    code: 'MSHO6',
    context: 'inventory',
    meaning: 'an advisory that is not an OSV document with an id',
    remedy: 'give a file of one OSV document ({"id": ..., "affected": [...]}) or a JSON list of them',
  },
  {
    code: 'MSHS1',
    context: 'wire',
    meaning: "a node's message to the control queue over mesh serve's intake limit for its kind, refused unread",
    remedy:
      'nothing in it was read; a mesh-host sends nothing this large: see what runs under that node account (mesh node list, the broker connections of node.NAME)',
    raisedIn: ['src/serve/intake.ts'],
  },
  {
    code: 'MSHS2',
    context: 'wire',
    meaning:
      'a report whose list (held, failed, corrected, superseded, packages) is longer than its cap, refused whole',
    remedy:
      'nothing of it was recorded and the last report stands; a node holding more than the cap is split over more nodes, or the cap (src/wire/report.ts) raised in a release',
    raisedIn: ['src/wire/packages.ts', 'src/wire/report.ts'],
  },
  {
    code: 'MSHS3',
    context: 'inventory',
    meaning: 'a recover or rekey asked again by the same node within its interval with nothing new to answer, refused',
    remedy:
      'the answer given before stands; the host asks again after the interval by itself (mesh serve logs each refusal: a node asking in a loop is worth a look)',
  },

  // Backup and restore: the file refused before anything is touched (store), and the serials a
  // store behind its nodes continues above (assignment).
  {
    code: 'MSHR0',
    context: 'assignment',
    meaning: 'a node said it applied a serial below 0 or beyond what a host reads exactly (2^53 less 2^20)',
    remedy: "the node's serial.json is damaged: see its mesh-host log (mesh-host refuses a damaged one with MSHI7)",
  },
  {
    code: 'MSHR1',
    context: 'store',
    meaning: 'a restore of a file that is not a mesh backup (not a tar, no manifest, members of another kind)',
    remedy: 'name a file mesh backup wrote',
    raisedIn: ['src/cli/backup.ts'],
  },
  {
    code: 'MSHR2',
    context: 'store',
    meaning: "a restore of a backup whose member does not match the manifest's sha256: damaged",
    remedy: 'nothing was restored; restore from another copy of the backup',
    raisedIn: ['src/cli/backup.ts'],
  },
  {
    code: 'MSHR3',
    context: 'store',
    meaning: 'a restore onto a store that already holds a mesh (enrolled nodes)',
    remedy: 'restore onto a freshly installed first node, or add --force to replace this store with the backup',
    raisedIn: ['src/store/dump.ts'],
  },
  {
    code: 'MSHR4',
    context: 'store',
    meaning: 'a backup or restore without MESH_STORE_AUDIT_OWNER, the superuser session it needs',
    remedy: 'set MESH_STORE_AUDIT_OWNER to the URL (or a 0600 file holding it) of the database superuser',
    raisedIn: ['src/store/dump.ts'],
  },
  {
    code: 'MSHR5',
    context: 'store',
    meaning: 'a backup to a FILE whose folder does not exist',
    remedy: 'name a FILE in a folder that exists',
    raisedIn: ['src/cli/backup.ts'],
  },
];

const BY_CODE = new Map(REGISTER.map((c) => [c.code, c]));

/** The register's entry for a code, if it has one. */
export function codeEntry(code: string): Code | undefined {
  return BY_CODE.get(code);
}

/** A refusal mesh made on purpose, in SQL or by refuse(): the code says which, the message says it to a person. */
export class MeshError extends Error {
  readonly code: string;
  readonly context: Refuser;
  readonly remedy: string;
  /** What was refused, without the remedy and code: for a caller that says it again under its own class or code. */
  readonly said: string;
  constructor(entry: Code, said: string, hint: string | undefined, cause: unknown) {
    const remedy = hint || entry.remedy;
    super(`${said}: ${remedy} (${entry.code}).`, { cause });
    this.name = 'MeshError';
    this.said = said;
    this.code = entry.code;
    this.context = entry.context;
    this.remedy = remedy;
  }
}

/** An MSH code the register does not know: our SQL and this table disagree, which is a bug in mesh. */
export class UnregisteredCode extends Error {
  readonly code: string;
  constructor(code: string, said: string, cause: unknown) {
    super(
      `the store refused with ${code}, a code src/sys/errors.ts does not list (a bug in mesh: report it with this line): ${said}.`,
      { cause },
    );
    this.name = 'UnregisteredCode';
    this.code = code;
  }
}

/** Map a store error to what a person reads: a known code to a MeshError, an unknown MSH code to the bug it is; anything else as it came. */
export function storeError(err: unknown): Error {
  // A refusal already made (refuse() inside a transaction) passes as it is: wrapped again it would say its remedy twice.
  if (err instanceof MeshError || err instanceof UnregisteredCode) return err;
  const e = err as { code?: string; message?: string; hint?: string };
  if (typeof e?.code !== 'string' || !e.code.startsWith('MSH')) return err as Error;
  const entry = BY_CODE.get(e.code);
  if (!entry) return new UnregisteredCode(e.code, e.message ?? '', err);
  return new MeshError(entry, e.message ?? entry.meaning, e.hint, err);
}

/**
 * The one way TypeScript refuses bad input: `throw refuse('MSH80', 'what was
 * refused', 'what to do')`. It is the MeshError a SQL raise becomes, so the
 * CLI prints both alike; the remedy defaults to the register's. A code the
 * register lacks is the bug UnregisteredCode says it is.
 */
export function refuse(code: string, said: string, remedy?: string, cause?: unknown): MeshError | UnregisteredCode {
  const entry = BY_CODE.get(code);
  if (!entry) return new UnregisteredCode(code, said, cause);
  return new MeshError(entry, said, remedy, cause);
}

/** What --json prints for a failed command: the code, context and remedy of a refusal; the message alone for anything else. */
export function errorJson(err: unknown): {
  error: { message: string; code?: string; context?: string; remedy?: string };
} {
  const e = err as Error;
  if (e instanceof MeshError)
    return { error: { code: e.code, context: e.context, message: e.message, remedy: e.remedy } };
  return { error: { message: e?.message ?? String(err) } };
}
