// The node's `inet mesh` table (X1, X2, O2): input dropped unless it is
// loopback, an answer, the ICMP a network needs, or one of the declared rules;
// nothing forwarded into or out of the overlay unless it goes both ways. The
// whole table is one resource, loaded in one `nft -f` transaction (the file
// first makes the table exist, then deletes it, then writes it whole), so a
// half-applied firewall never exists.
//
// Drift is judged on what the kernel holds: after each load the host keeps
// `nft list table inet mesh` as nft printed it; at reconcile a listing that
// differs (a rule added or removed by hand) is drift and the table is loaded
// again. Every string in a rule passed the parser's checks (no quotes, braces,
// semicolons, newlines), and the syntax around them is written here.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isIP } from 'node:net';
import type { FirewallResource, FirewallRule } from '../../src/wire/resources.js';
import type { Driver, DriverContext, Observed } from './driver.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { digestOf } from './digest.js';
import { run, runAny } from '../../src/sys/proc.js';

const NFT = '/usr/sbin/nft';

// What every node admits whatever it is declared: without these a network
// does not work (path MTU, neighbour discovery, answers) or an overlay
// address cannot be pinged.
const BASE = [
  'iif "lo" accept comment "loopback"',
  'ct state established,related accept comment "answers to what this node began"',
  'ct state invalid drop',
  'icmp type { echo-request, destination-unreachable, time-exceeded, parameter-problem } accept comment "ICMP a network needs"',
  'icmpv6 type { echo-request, destination-unreachable, packet-too-big, time-exceeded, parameter-problem, nd-router-solicit, nd-router-advert, nd-neighbor-solicit, nd-neighbor-advert, mld-listener-query } accept comment "ICMPv6 a network needs"',
];

function ruleLines(r: FirewallRule): string[] {
  const ports = r.to !== undefined && r.to !== r.port ? `${r.port}-${r.to}` : String(r.port);
  const tail = `${r.via ? `iifname "${r.via}" ` : ''}`;
  const end = `${r.proto} dport ${ports} accept comment "${r.why}"`;
  if (!r.from) return [`${tail}${end}`];
  // One rule per address family: `ip saddr` cannot hold an IPv6 prefix.
  const v4 = r.from.filter((c) => isIP(c.split('/')[0]!) === 4);
  const v6 = r.from.filter((c) => isIP(c.split('/')[0]!) === 6);
  const out: string[] = [];
  if (v4.length) out.push(`${tail}ip saddr { ${v4.join(', ')} } ${end}`);
  if (v6.length) out.push(`${tail}ip6 saddr { ${v6.join(', ')} } ${end}`);
  return out;
}

/**
 * O2: forwarding through the overlay goes overlay to overlay (a hub between
 * two spokes) or not at all, whatever else the machine forwards: a node is
 * never a way from a peer into its other networks, its containers, or from
 * them onto the overlay. Policy accept: the machine's other forwarding is not
 * mesh's to decide. A drop here is final whichever table accepts it.
 */
function forwardChain(ifname: string): string[] {
  return [
    '  chain forward {',
    '    type filter hook forward priority filter; policy accept;',
    `    iifname "${ifname}" oifname "${ifname}" accept comment "overlay to overlay"`,
    `    iifname "${ifname}" drop comment "from the overlay to anywhere else"`,
    `    oifname "${ifname}" drop comment "from anywhere else onto the overlay"`,
    '  }',
  ];
}

/** The nft file for the table: the one renderer, used by the host and by the first-node bundle. */
export function renderTable(r: Pick<FirewallResource, 'rules' | 'forward'>): string {
  return [
    '#!/usr/sbin/nft -f',
    "# mesh: this node's inet mesh table (written by mesh; input closed unless listed).",
    '# The first two lines make the table exist and then drop it, so loading this',
    '# file replaces the whole table in one transaction whether or not it was there.',
    'table inet mesh',
    'delete table inet mesh',
    'table inet mesh {',
    '  chain input {',
    '    type filter hook input priority filter; policy drop;',
    ...BASE.map((l) => `    ${l}`),
    ...r.rules.flatMap(ruleLines).map((l) => `    ${l}`),
    // Closed, said at once: a peer learns "refused" instead of waiting out a
    // timeout (and a scan tells closed from open). Anything else is dropped.
    '    meta l4proto tcp reject with tcp reset comment "closed"',
    '    meta l4proto udp reject comment "closed"',
    '  }',
    ...(r.forward ? forwardChain(r.forward) : []),
    '}',
    '',
  ].join('\n');
}

/** What nft prints, without rule handles or spacing differences. */
export function normalise(listing: string): string {
  return listing
    .split('\n')
    .map((l) => l.replace(/\s+#\s*handle\s+\d+\s*$/, '').trim())
    .filter(Boolean)
    .join('\n');
}

export async function listTable(): Promise<string | null> {
  const r = await runAny(NFT, ['list', 'table', 'inet', 'mesh']);
  return r.code === 0 ? normalise(r.stdout) : null;
}

/** Load an nft file whole; throws with nft's own complaint. */
export async function loadFile(path: string): Promise<void> {
  await run(NFT, ['-f', path]);
}

interface Kept {
  digest: string;
  listing: string;
}
const dir = (ctx: DriverContext) => join(ctx.stateDir, 'firewall');
const keptPath = (ctx: DriverContext) => join(dir(ctx), 'mesh.json');

async function kept(ctx: DriverContext): Promise<Kept | null> {
  try {
    return JSON.parse(await readFile(keptPath(ctx), 'utf8')) as Kept;
  } catch {
    return null;
  }
}

// MESH_HOST_FIREWALL=off (ctx.firewall false): a host that shares its network
// namespace with other things that must not be closed (the test suites' hosts
// run in the machine's own namespace) holds its firewall without loading it,
// and says so. Every real host, the bundle's and the lab's, loads it.

const digest = (r: FirewallResource) =>
  digestOf({ kind: 'firewall', name: r.name, rules: r.rules, forward: r.forward });

async function observe(r: FirewallResource, ctx: DriverContext): Promise<Observed> {
  if (!ctx.firewall) return 'ok';
  const now = await listTable();
  if (now === null) return 'absent';
  const k = await kept(ctx);
  return k && k.digest === digest(r) && k.listing === now ? 'ok' : 'drift';
}

export const firewallDriver: Driver<FirewallResource> = {
  kind: 'firewall',
  target: (r) => r.name,
  digest,
  observe,
  async apply(r, ctx) {
    if (!ctx.firewall) {
      ctx.log('firewall: held, not loaded (MESH_HOST_FIREWALL=off)');
      return false;
    }
    if ((await observe(r, ctx)) === 'ok') return false;
    await mkdir(dir(ctx), { recursive: true, mode: 0o700 });
    const file = join(dir(ctx), 'mesh.nft');
    await writeAtomic(file, renderTable(r), 0o600);
    await loadFile(file);
    const listing = await listTable();
    if (listing === null)
      throw new Error('nft loaded the firewall but does not list table inet mesh: check that nothing else deletes it.');
    await writeAtomic(keptPath(ctx), JSON.stringify({ digest: digest(r), listing } satisfies Kept), 0o600);
    ctx.changed.add(r.id);
    ctx.log(`firewall: table inet mesh loaded, ${r.rules.length} rule(s) beyond the base`);
    return true;
  },
  async remove(held, ctx) {
    if (!ctx.firewall) return;
    // What this driver made, it unmakes: the machine's own ruleset, if any,
    // decides again. (The mesh composes a firewall for every node, so this
    // happens only when a node stops being declared one on purpose.)
    const r = await runAny(NFT, ['delete', 'table', 'inet', held.target]);
    if (r.code !== 0 && !/No such file|does not exist/i.test(r.stderr))
      throw new Error(`Removing table inet ${held.target} failed: ${r.stderr.trim()}`);
    await writeAtomic(keptPath(ctx), JSON.stringify(null), 0o600).catch(() => {});
    ctx.log('firewall: table inet mesh removed');
  },
};
