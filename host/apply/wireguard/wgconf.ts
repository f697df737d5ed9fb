// The wg-quick file for a WireguardResource, and the live state `wg show
// <if> dump` reports, in one comparable shape. The file is line-based: a
// value with a newline in it could add a `PostUp =` line that wg-quick runs
// as root, so every field is checked against a strict pattern before a
// byte is written.
import type { WireguardResource } from '../../../src/wire/resources.js';
import { refuse } from '../../../src/sys/errors.js';
import { isHostPort } from '../../../src/wire/names.js';

/** wg-quick derives the interface from the file name and allows only this. */
const IFACE = /^[a-z][a-z0-9_-]{0,14}$/;
const KEY = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/; // 32 bytes of base64
const CIDR4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const CIDR6 = /^[0-9a-fA-F:]{2,39}\/\d{1,3}$/;

export function checkInterfaceName(name: unknown): string {
  if (typeof name !== 'string' || !IFACE.test(name)) {
    throw refuse(
      'MSHC4',
      `Interface name ${JSON.stringify(name)} is refused`,
      `it must match ${IFACE} (wg-quick takes the name from the file name, at most 15 characters). Fix the declaration`,
    );
  }
  return name;
}

export function checkKey(key: unknown, what: string): string {
  if (typeof key !== 'string' || !KEY.test(key)) {
    throw refuse('MSHC5', `${what} is not a WireGuard key`);
  }
  return key;
}

function checkCidr(c: unknown, what: string): string {
  if (typeof c === 'string') {
    const m = CIDR4.exec(c);
    if (m && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32) return c;
    if (CIDR6.test(c) && Number(c.split('/')[1]) <= 128) return c;
  }
  throw refuse('MSHC6', `${what} ${JSON.stringify(c)} is not an address with a prefix length`);
}

function checkPort(p: unknown, what: string): number {
  if (typeof p !== 'number' || !Number.isInteger(p) || p < 1 || p > 65535) {
    throw refuse('MSHC7', `${what} ${JSON.stringify(p)} is not a port`);
  }
  return p;
}

/**
 * Throw unless r can be written as a wg-quick file as it stands. O1: a key
 * appears once in a peer list; WireGuard keeps one entry per key, so a
 * second entry would silently replace the first (or wg refuses the file).
 */
export function checkResource(r: WireguardResource): void {
  const name = checkInterfaceName(r.name);
  const at = `wireguard ${name}`;
  checkCidr(r.address, `${at}: address`);
  if (r.listenPort !== undefined) checkPort(r.listenPort, `${at}: listenPort`);
  if (!Array.isArray(r.peers)) throw refuse('MSHC8', `${at}: peers is not a list`);
  const seen = new Map<string, number>();
  r.peers.forEach((p, i) => {
    const key = checkKey(p.publicKey, `${at}: peer ${i + 1} publicKey`);
    const first = seen.get(key);
    if (first !== undefined) {
      throw refuse(
        'MSHC9',
        `${at}: peer key ${key} appears twice in the peer list (peers ${first + 1} and ${i + 1}); WireGuard takes one entry per key`,
      );
    }
    seen.set(key, i);
    if (p.endpoint !== undefined) {
      if (!isHostPort(p.endpoint))
        throw refuse('MSHG0', `${at}: peer ${key} endpoint ${JSON.stringify(p.endpoint)} is not host:port`);
    }
    if (!Array.isArray(p.allowedIps) || p.allowedIps.length === 0) {
      throw refuse('MSHG1', `${at}: peer ${key} has no allowedIps`);
    }
    p.allowedIps.forEach((c) => {
      checkCidr(c, `${at}: peer ${key} allowedIps`);
      // wg-quick turns a /0 into policy routing that takes over the host's
      // default route; the overlay never needs it and an update in place
      // (syncconf) would not mirror it.
      if (c.endsWith('/0')) throw refuse('MSHG2', `${at}: peer ${key} allows ${c}`);
    });
    if (p.keepalive !== undefined && (!Number.isInteger(p.keepalive) || p.keepalive < 0 || p.keepalive > 65535)) {
      throw refuse('MSHG3', `${at}: peer ${key} keepalive ${JSON.stringify(p.keepalive)} is not a number of seconds`);
    }
  });
}

/** The file wg-quick reads. `privateKey` is the node's overlay key; the result must never be logged. */
export function renderConf(r: WireguardResource, privateKey: string): string {
  return render(r, privateKey, true);
}

/** The same without wg-quick's own keys (Address): what `wg syncconf` takes. */
export function renderWgConf(r: WireguardResource, privateKey: string): string {
  return render(r, privateKey, false);
}

function render(r: WireguardResource, privateKey: string, quick: boolean): string {
  const lines = [
    "# Written by mesh-host from the node's declaration; edits are put back.",
    '[Interface]',
    `PrivateKey = ${privateKey}`,
  ];
  if (quick) lines.push(`Address = ${r.address}`);
  if (r.listenPort !== undefined) lines.push(`ListenPort = ${r.listenPort}`);
  for (const p of r.peers) {
    lines.push('', '[Peer]', `PublicKey = ${p.publicKey}`);
    if (p.endpoint !== undefined) lines.push(`Endpoint = ${p.endpoint}`);
    lines.push(`AllowedIPs = ${p.allowedIps.join(', ')}`);
    if (p.keepalive) lines.push(`PersistentKeepalive = ${p.keepalive}`);
  }
  return lines.join('\n') + '\n';
}

/** What drift is judged on: key, port, and per peer its allowed IPs and keepalive. */
export interface LiveState {
  privateKey: string;
  listenPort: number;
  peers: Map<string, { allowedIps: string[]; keepalive: number }>;
}

/**
 * Parse `wg show <if> dump`: the first line is the interface (private key,
 * public key, port, fwmark), each further line a peer (key, psk, endpoint,
 * allowed ips, handshake, rx, tx, keepalive), tab-separated.
 */
export function parseDump(dump: string): LiveState {
  const lines = dump.split('\n').filter((l) => l.length > 0);
  if (lines.length === 0) throw new Error('wg show dump printed nothing.');
  const head = lines[0]!.split('\t');
  const peers = new Map<string, { allowedIps: string[]; keepalive: number }>();
  for (const line of lines.slice(1)) {
    const f = line.split('\t');
    const ips = f[3] === '(none)' || f[3] === undefined ? [] : f[3].split(',');
    peers.set(f[0]!, {
      allowedIps: ips.map(normCidr).sort(),
      keepalive: f[7] === 'off' || f[7] === undefined ? 0 : Number(f[7]),
    });
  }
  return { privateKey: head[0]!, listenPort: Number(head[2]), peers };
}

/** The first difference between declared and live, in words without the private key; null when none. */
export function liveDiffers(r: WireguardResource, privateKey: string, live: LiveState): string | null {
  if (clamp(live.privateKey) !== clamp(privateKey))
    return 'the interface runs with another private key than the overlay key file';
  if (r.listenPort !== undefined && live.listenPort !== r.listenPort)
    return `listens on ${live.listenPort}, declared ${r.listenPort}`;
  for (const p of r.peers) {
    const l = live.peers.get(p.publicKey);
    if (!l) return `peer ${p.publicKey} is missing`;
    const want = p.allowedIps.map(normCidr).sort();
    if (want.join(',') !== l.allowedIps.join(','))
      return `peer ${p.publicKey} allows ${l.allowedIps.join(',') || 'nothing'}, declared ${want.join(',')}`;
    if ((p.keepalive ?? 0) !== l.keepalive)
      return `peer ${p.publicKey} keepalive ${l.keepalive}, declared ${p.keepalive ?? 0}`;
  }
  const declared = new Set(r.peers.map((p) => p.publicKey));
  for (const k of live.peers.keys()) if (!declared.has(k)) return `peer ${k} is not declared`;
  return null;
}

/**
 * WireGuard clamps an X25519 private key when it is set and prints the
 * clamped form; a key made by @noble/curves' randomSecretKey (as enrolment
 * may) is not clamped, so compare clamped with clamped.
 */
function clamp(key: string): string {
  const b = Buffer.from(key, 'base64');
  if (b.length !== 32) return key;
  b[0]! &= 248;
  b[31] = (b[31]! & 127) | 64;
  return b.toString('base64');
}

/** Whether IPv4 prefix OUTER contains prefix INNER (false for anything else): what `ip route show match` answers. */
export function covers(outer: string, inner: string): boolean {
  const a = CIDR4.exec(outer.trim());
  const b = CIDR4.exec(inner.trim());
  if (!a || !b) return false;
  const bits = Number(a[5]);
  if (bits > 32 || bits > Number(b[5])) return false;
  return normCidr(`${b.slice(1, 5).join('.')}/${bits}`) === normCidr(outer);
}

/** wg prints allowed IPs with host bits cleared; compare the same way. */
export function normCidr(c: string): string {
  const m = CIDR4.exec(c.trim());
  if (!m) return c.trim().toLowerCase();
  const bits = Number(m[5]);
  const n = m.slice(1, 5).reduce((a, o) => (a << 8) | Number(o), 0) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  const net = (n & mask) >>> 0;
  return `${net >>> 24}.${(net >>> 16) & 255}.${(net >>> 8) & 255}.${net & 255}/${bits}`;
}
