// A real multi-site network on one machine, in network namespaces.
//
//   machine ─┐                         ┌─ machine
//   machine ─┼─ [router A: NAT] ─ [internet bridge] ─ [router B: NAT] ─┼─ machine
//
// Each site is a LAN (a bridge inside its router's namespace) behind a router
// that masquerades onto the "internet" (a bridge in a namespace of its own,
// 203.0.113.0/24, TEST-NET-3), optionally forwarding a UDP port to one of
// its machines. Routers drop unsolicited traffic from the internet, as a
// home router does, so a machine behind one can be dialled only through a
// forward.
//
// Each machine also has a mount namespace of its own with tmpfs on
// /run/wireguard and /etc/wireguard: wireguard-go's control socket is not
// per network namespace (LAB-NOTES), so two machines' wg0 would collide.
// Commands run there through `nsenter -t PID -m -n`, PID being a sleeping
// holder process; use absolute paths (nsenter changes the directory).
//
// Every name carries a per-run id, and down() removes exactly what up() made.
// Traffic only ever goes to addresses inside these namespaces.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { run, runAny } from '../../src/sys/proc.js';
import { quietEnv } from '../../host/apply/wireguard/quiet_env.js';

export interface SiteSpec {
  name: string; // [a-z0-9]{1,8}
  machines: string[]; // machine names, unique across the topology
  /** UDP ports forwarded from the router's internet address to a machine (same port). */
  forwards?: { udp: number; to: string }[];
  /**
   * A machine every packet to the router's internet address is forwarded to
   * (a "DMZ host", as a server with a public address is): its own firewall,
   * not the router's, decides what the internet reaches.
   */
  dmz?: string;
}

export interface Topology {
  sites: SiteSpec[];
  /**
   * A veth from the root namespace to the internet namespace, a /30 of its
   * own per lab (100.64.0.0/10, chosen free), the internet masquerading onto
   * it: machines reach services the test runs in the root namespace (the
   * broker) at uplinkAddress, through their site's NAT, as they would reach
   * a control plane on the internet. Two labs never share an address.
   */
  uplink?: boolean;
}

export interface Lab {
  id: string;
  /** Run argv inside a machine (its network and mount namespaces). Rejects on non-zero exit. */
  exec(machine: string, argv: string[], input?: string): Promise<string>;
  /** Same, resolving with the exit code and output whatever they are. */
  execAny(machine: string, argv: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }>;
  /** Run argv in a namespace by its role: `router:<site>` or `internet`. */
  execIn(where: string, argv: string[]): Promise<string>;
  /** A machine's LAN address. */
  lanAddress(machine: string): string;
  /** A site's address on the internet (where its forwards are dialled). */
  publicAddress(site: string): string;
  /** The root namespace's address on the internet, when the topology asked for an uplink. */
  uplinkAddress: string | undefined;
  /** The pid whose namespaces a machine's commands enter. */
  pid(machine: string): number;
  down(): Promise<void>;
}

const INTERNET = '203.0.113';

/** What up() has made so far, and so exactly what down() removes. */
class Made {
  readonly namespaces: string[] = [];
  readonly holders = new Map<string, ChildProcess & { pid: number }>();
  readonly lan = new Map<string, string>();
  readonly pub = new Map<string, string>();
  uplink: string | undefined;
  uplinkAddress: string | undefined;
  constructor(readonly id: string) {}

  ns(role: string): string {
    return `${this.id}-${role}`;
  }

  async addNs(name: string): Promise<void> {
    await run('ip', ['netns', 'add', name]);
    this.namespaces.push(name);
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up']);
  }

  readonly down = async (): Promise<void> => {
    // Kill everything living in our namespaces (holders, wireguard-go
    // daemons the machines started), then delete them; veths and bridges
    // go with their namespace.
    for (const n of this.namespaces) {
      const pids = (await runAny('ip', ['netns', 'pids', n])).stdout.split('\n').filter(Boolean).map(Number);
      for (const p of pids) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
    for (const h of this.holders.values()) {
      try {
        h.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (this.uplink) {
      await runAny('ip', ['link', 'del', this.uplink]);
      this.uplink = undefined;
    }
    for (const n of this.namespaces.reverse()) {
      for (let i = 0; i < 20; i++) {
        const r = await runAny('ip', ['netns', 'del', n]);
        if (r.code === 0 || /No such file/.test(r.stderr)) break;
        await sleep(50);
      }
    }
    this.namespaces.length = 0;
  };
}

const sysctl = (n: string, key: string, value: string) =>
  run('ip', ['netns', 'exec', n, 'sysctl', '-q', '-w', `${key}=${value}`]);

// veth created directly across two namespaces: no name ever lands in the root namespace.
const veth = (a: string, aName: string, b: string, bName: string) =>
  run('ip', ['-n', a, 'link', 'add', aName, 'type', 'veth', 'peer', 'name', bName, 'netns', b]);

/** The internet: a bridge in a namespace of its own, and optionally the uplink from the root namespace. Returns its namespace. */
async function internet(m: Made, withUplink: boolean): Promise<string> {
  const inet = m.ns('inet');
  await m.addNs(inet);
  await run('ip', ['-n', inet, 'link', 'add', 'br0', 'type', 'bridge']);
  await run('ip', ['-n', inet, 'addr', 'add', `${INTERNET}.254/24`, 'dev', 'br0']);
  await run('ip', ['-n', inet, 'link', 'set', 'br0', 'up']);
  if (!withUplink) return inet;
  const [rootAddr, inetAddr] = await freeLink();
  // The one name that lands in the root namespace; down() removes it.
  const uplink = (m.uplink = `${m.id}up`);
  await run('ip', ['link', 'add', uplink, 'type', 'veth', 'peer', 'name', 'root', 'netns', inet]);
  await run('ip', ['addr', 'add', `${rootAddr}/30`, 'dev', uplink]);
  await run('ip', ['link', 'set', uplink, 'up']);
  await run('ip', ['-n', inet, 'addr', 'add', `${inetAddr}/30`, 'dev', 'root']);
  await run('ip', ['-n', inet, 'link', 'set', 'root', 'up']);
  await sysctl(inet, 'net.ipv4.ip_forward', '1');
  // Masqueraded onto the link: the root namespace needs no route to the lab's internet.
  await run('ip', ['netns', 'exec', inet, 'nft', '-f', '-'], {
    input:
      'table ip lab {\n chain postrouting {\n  type nat hook postrouting priority srcnat;\n  oifname "root" masquerade\n }\n}\n',
  });
  m.uplinkAddress = rootAddr;
  return inet;
}

/** A site's router: NAT onto the internet, its forwards, and a policy that drops the unsolicited. */
function routerRules(site: SiteSpec, wan: string, prefix: string): string {
  const fwd = (site.forwards ?? []).map((f) => {
    if (!site.machines.includes(f.to))
      throw new Error(`site ${site.name} forwards to ${f.to}, which is not one of its machines`);
    // By the public address, not the incoming interface: a machine of the
    // same LAN dialling the public endpoint is forwarded too (hairpin NAT,
    // as most routers do), so one dialable address serves every site.
    return `  ip daddr ${wan} udp dport ${Number(f.udp)} dnat to ${prefix}.${10 + site.machines.indexOf(f.to)}:${Number(f.udp)}`;
  });
  if (site.dmz !== undefined && !site.machines.includes(site.dmz))
    throw new Error(`site ${site.name} puts ${site.dmz} in its DMZ, which is not one of its machines`);
  const dmz =
    site.dmz === undefined ? [] : [`  ip daddr ${wan} dnat to ${prefix}.${10 + site.machines.indexOf(site.dmz)}`];
  return [
    'table ip lab {',
    ' chain prerouting {',
    '  type nat hook prerouting priority dstnat;',
    ...fwd,
    ...dmz,
    ' }',
    ' chain postrouting {',
    '  type nat hook postrouting priority srcnat;',
    '  oifname "wan" masquerade',
    // The hairpinned answer must come back through the router to be un-NATed.
    `  ip saddr ${prefix}.0/24 ip daddr ${prefix}.0/24 ct status dnat masquerade`,
    ' }',
    ' chain forward {',
    '  type filter hook forward priority filter; policy drop;',
    '  ct state established,related accept',
    '  iifname "lan" accept',
    '  ct status dnat accept',
    ' }',
    '}',
  ].join('\n');
}

/** One site: its router between the internet and its LAN, then its machines on the LAN. */
async function addSite(m: Made, inet: string, site: SiteSpec, si: number, names: Set<string>): Promise<void> {
  if (!/^[a-z0-9]{1,8}$/.test(site.name)) throw new Error(`site name ${site.name} must be [a-z0-9]{1,8}`);
  const r = m.ns(`r${site.name}`);
  const wan = `${INTERNET}.${si + 1}`;
  const prefix = `192.168.${10 + si}`;
  m.pub.set(site.name, wan);
  await m.addNs(r);
  await veth(inet, `s${si}`, r, 'wan');
  await run('ip', ['-n', inet, 'link', 'set', `s${si}`, 'master', 'br0', 'up']);
  await run('ip', ['-n', r, 'addr', 'add', `${wan}/24`, 'dev', 'wan']);
  await run('ip', ['-n', r, 'link', 'set', 'wan', 'up']);
  await run('ip', ['-n', r, 'link', 'add', 'lan', 'type', 'bridge']);
  await run('ip', ['-n', r, 'addr', 'add', `${prefix}.1/24`, 'dev', 'lan']);
  await run('ip', ['-n', r, 'link', 'set', 'lan', 'up']);
  await sysctl(r, 'net.ipv4.ip_forward', '1');
  // Bridge netfilter is on in a new namespace: without this, traffic
  // between two machines of one LAN meets the router's forward policy.
  for (const k of ['net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables']) {
    await runAny('ip', ['netns', 'exec', r, 'sysctl', '-q', '-w', `${k}=0`]);
  }
  await run('ip', ['netns', 'exec', r, 'nft', '-f', '-'], { input: routerRules(site, wan, prefix) });
  for (const [mi, name] of site.machines.entries()) {
    if (!/^[a-z0-9]{1,8}$/.test(name) || names.has(name))
      throw new Error(`machine name ${name} must be [a-z0-9]{1,8} and unique`);
    names.add(name);
    const mn = m.ns(name);
    const addr = `${prefix}.${10 + mi}`;
    m.lan.set(name, addr);
    await m.addNs(mn);
    await veth(r, `p${mi}`, mn, 'eth0');
    await run('ip', ['-n', r, 'link', 'set', `p${mi}`, 'master', 'lan', 'up']);
    await run('ip', ['-n', mn, 'addr', 'add', `${addr}/24`, 'dev', 'eth0']);
    await run('ip', ['-n', mn, 'link', 'set', 'eth0', 'up']);
    await run('ip', ['-n', mn, 'route', 'add', 'default', 'via', `${prefix}.1`]);
    m.holders.set(name, await holder(mn));
  }
  await run('ip', ['-n', r, 'route', 'add', 'default', 'via', `${INTERNET}.254`]).catch(() => {});
}

export async function up(topology: Topology, id = `m${randomBytes(3).toString('hex')}`): Promise<Lab> {
  if (!/^[a-z0-9]{1,8}$/.test(id)) throw new Error(`lab id ${id} must be [a-z0-9]{1,8}`);
  const made = new Made(id);
  try {
    const inet = await internet(made, Boolean(topology.uplink));
    const names = new Set<string>();
    for (const [si, site] of topology.sites.entries()) await addSite(made, inet, site, si, names);
  } catch (err) {
    await made.down();
    throw err;
  }
  const pidOf = (m: string) => {
    const h = made.holders.get(m);
    if (!h) throw new Error(`no machine ${m} in lab ${id}`);
    return h.pid;
  };
  const enter = (m: string, argv: string[]) => ['-t', String(pidOf(m)), '-m', '-n', '--', ...argv];
  return {
    id,
    // A machine's commands may be wg-quick up, which may start wireguard-go.
    exec: (m, argv, input) => run('nsenter', enter(m, argv), { input, env: quietEnv() }),
    execAny: (m, argv, input) => runAny('nsenter', enter(m, argv), { input, env: quietEnv() }),
    execIn: (where, argv) =>
      run('ip', [
        'netns',
        'exec',
        where === 'internet' ? made.ns('inet') : made.ns(where.replace(/^router:/, 'r')),
        ...argv,
      ]),
    uplinkAddress: made.uplinkAddress,
    lanAddress: (m) => {
      const a = made.lan.get(m);
      if (!a) throw new Error(`no machine ${m}`);
      return a;
    },
    publicAddress: (s) => {
      const a = made.pub.get(s);
      if (!a) throw new Error(`no site ${s}`);
      return a;
    },
    pid: pidOf,
    down: made.down,
  };
}

/** A sleeping process in the machine's netns with private tmpfs mounts; resolves once they are mounted. */
function holder(netns: string): Promise<ChildProcess & { pid: number }> {
  const script =
    'mkdir -p /run/wireguard && mount -t tmpfs -o mode=0700 tmpfs /run/wireguard' +
    ' && mount -t tmpfs -o mode=0700 tmpfs /etc/wireguard && echo ready && exec sleep infinity';
  const child = spawn(
    'ip',
    ['netns', 'exec', netns, 'unshare', '--mount', '--propagation', 'private', 'sh', '-c', script],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => {
      out += d;
      // ip netns exec, unshare and sh all exec: the child's pid is the holder's.
      if (out.includes('ready')) resolve(child as ChildProcess & { pid: number });
    });
    child.stderr!.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`holder for ${netns} exited ${code}: ${err.trim()}`)));
  });
}

/** A /30 in 100.64.0.0/10 that no address in the root namespace overlaps: [root side, internet side]. */
async function freeLink(): Promise<[string, string]> {
  const used: string[] = (await run('ip', ['-4', '-o', 'addr', 'show'])).match(/\b100\.\d+\.\d+\.\d+/g) ?? [];
  for (let i = 0; i < 100; i++) {
    const n = (0x64400000 + 4 * (1 + Math.floor(Math.random() * 0xffffe))) >>> 0; // 100.64.0.0/10, never its first /30
    const ip = (k: number) => `${k >>> 24}.${(k >>> 16) & 255}.${(k >>> 8) & 255}.${k & 255}`;
    const quad = [0, 1, 2, 3].map((d) => ip(n + d));
    if (!quad.some((a) => used.includes(a))) return [ip(n + 1), ip(n + 2)];
  }
  throw new Error('no free /30 in 100.64.0.0/10 for the lab uplink');
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
