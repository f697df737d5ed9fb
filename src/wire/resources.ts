// The resources a declaration can carry. One shape for both ends: the control
// plane composes these, the host parses them (parse_declaration.ts) and hands
// each to the driver of its kind (host/apply/<kind>.ts).

/** Where a resource came from. Each origin removes only its own (D3). */
export type Origin = 'carried' | 'declared';

interface Base {
  /** Unique within a declaration, stable across declarations: `<kind>:<path|name>`. */
  id: string;
  /** Ids (or absolute file paths) whose change in this apply must restart this one (D4). */
  restartOn?: string[];
}

export interface FileResource extends Base {
  kind: 'file';
  path: string; // absolute, normalised, inside the host's allowed roots
  content: string; // base64 of the exact bytes
  mode: string; // octal string, e.g. "0644"
  owner?: string; // user name; default root
  createOnce?: boolean; // D5: written when absent, untouched when present
}

export interface DirectoryResource extends Base {
  kind: 'directory';
  path: string;
  mode: string;
}

export interface ServiceResource extends Base {
  kind: 'service';
  name: string; // [a-z][a-z0-9-]{0,62}
  exec: string[]; // argv; argv[0] absolute
  /** Files whose contents the service reads at start. */
  workdir?: string;
}

export interface ContainerResource extends Base {
  kind: 'container';
  name: string;
  image: string;
  command?: string[];
  envFiles?: string[]; // absolute paths of files holding KEY=value lines
  mounts?: { source: string; target: string; readOnly?: boolean }[];
  network?: string; // "none" | "ns:/run/netns/NAME"; default none
}

export interface WireguardPeer {
  publicKey: string; // base64 X25519
  endpoint?: string; // host:port, only where that end can be dialled
  allowedIps: string[]; // CIDRs
  keepalive?: number; // seconds; spokes behind NAT
}

export interface WireguardResource extends Base {
  kind: 'wireguard';
  name: string; // interface name, e.g. mesh0
  address: string; // CIDR, e.g. 10.99.0.2/24
  listenPort?: number;
  hub?: boolean; // forwards between spokes (O2)
  peers: WireguardPeer[];
  /** The private key is the node's overlay key; it never travels. */
}

export interface SecretFileResource extends Base {
  kind: 'secret';
  path: string;
  mode: string;
  sealed: string; // base64 blob sealed to this node's sealing key (S1)
}

/**
 * One opening in a node's firewall. Every field is checked by the one parser
 * (parse_resources.ts) before the host renders it into nft syntax, so no
 * string here is ever nft text: the host writes the syntax around them.
 */
export interface FirewallRule {
  proto: 'tcp' | 'udp';
  port: number; // 1-65535
  to?: number; // last port of a range, >= port
  from?: string[]; // source CIDRs; absent = anywhere
  via?: string; // only on this interface (the overlay's), e.g. mesh0
  why: string; // why it exists, kept as the rule's nft comment
}

/**
 * The node's whole `inet mesh` table (X1, X2): input dropped unless loopback,
 * established, the ICMP a network needs, or one of `rules`; forwarding through
 * the overlay only overlay to overlay. Applied as one
 * `nft -f` transaction; composed in SQL (assignment.firewalls).
 */
export interface FirewallResource extends Base {
  kind: 'firewall';
  name: 'mesh'; // the table; the only one mesh owns
  rules: FirewallRule[];
  /**
   * The overlay interface, on every node that has one: a forward chain drops
   * whatever is forwarded in from it or out to it unless it goes both (O2).
   */
  forward?: string;
}

/**
 * A port a module serves, in a module file only (never in a declaration): SQL
 * turns it into rules in the firewall of every node the module runs on.
 * from: "any", "site:NAME" (that site's nodes, over the overlay) or
 * "module:NAME" (nodes running that module, over the overlay).
 */
export interface OpeningResource extends Base {
  kind: 'opening';
  name: string;
  proto: 'tcp' | 'udp';
  port: number;
  to?: number;
  from: string;
  why?: string;
}

/** A broker a host may dial, and the certificate fingerprint it pins there. */
export interface BrokerEntry {
  address: string; // host:port, TLS
  fingerprint: string; // SHA-256, upper-case hex pairs joined by ':' (X509Certificate.fingerprint256)
}

/**
 * Every broker the node may dial, tried in turn, composed by the
 * mesh from inventory.broker on every node once one is recorded. Applying it
 * rewrites the identity's list; a later declaration without it leaves the list
 * as it is, so a node is never left with no broker to dial.
 */
export interface BrokersResource extends Base {
  kind: 'brokers';
  brokers: BrokerEntry[];
}

/**
 * The mesh-host this node must run (V2): a version, and the sha256 and size of
 * its package. The signature over the declaration vouches for the sha256; the
 * bytes come over the broker (the host asks serve for them) and are checked
 * against it before anything is unpacked. One a node: its id is its kind.
 */
export interface AgentResource extends Base {
  kind: 'agent';
  version: string; // MAJOR.MINOR.PATCH[-PRERELEASE], as the agent reports it
  sha256: string; // hex, of the whole package
  size: number; // bytes
}

/**
 * A Debian package installed at VERSION or above, from the sources the machine
 * already has (apt-get install NAME=VERSION). Above is kept: a later security
 * upgrade is never undone. Removing it uninstalls nothing: a fixed package is
 * not taken away with the declaration that brought it.
 */
export interface PackageResource extends Base {
  kind: 'package';
  name: string;
  version: string;
}

export type Resource =
  | AgentResource
  | FileResource
  | PackageResource
  | BrokersResource
  | FirewallResource
  | DirectoryResource
  | ServiceResource
  | ContainerResource
  | WireguardResource
  | SecretFileResource;

export type ResourceKind = Resource['kind'];

/** What a module file may list: the resources it puts on a node, and the ports it serves. */
export type ModuleEntry = Resource | OpeningResource;

export interface Declaration {
  mesh: string; // the mesh id (hex of the signing key's digest)
  node: string;
  serial: number; // only goes forward (D2)
  signed: number; // when it was signed, seconds since 1970
  expires: number; // until when it holds: past it a host still applies it but says it is stale
  resources: Resource[];
}
