// The wireguard driver on real wireguard-go, in network namespaces: a hub
// dialable only through its site router's port forward, spokes behind NAT,
// FORWARD policy DROP on the hub (as Docker leaves it), the hub's firewall
// loaded, and a network behind the hub that no spoke may reach (O2). Each
// machine runs the drivers itself (agent.js under nsenter), exactly as its
// host would.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { x25519 } from '@noble/curves/ed25519.js';
import { up, type Lab } from '../../lab/netns/topology.js';
import type { WireguardResource } from '../../src/wire/resources.js';
import { checkResource, renderConf } from '../../host/apply/wireguard/wgconf.js';
import type { FirewallResource } from '../../src/wire/resources.js';
import { run, runAny } from '../../src/sys/proc.js';

const agent = fileURLToPath(new URL('./agent.js', import.meta.url));
const PORT = 51820;
const IF = 'mesh0';

interface Node {
  name: string;
  site: string;
  overlay: string;
  priv: string;
  pub: string;
  keyPath: string;
}

function keypair(): { priv: string; pub: string } {
  const sk = x25519.utils.randomSecretKey();
  return { priv: Buffer.from(sk).toString('base64'), pub: Buffer.from(x25519.getPublicKey(sk)).toString('base64') };
}

// ---- pure: what the driver refuses before touching anything -------------

const shape = suite('wireguard resource shape (O1)');

const base = (): WireguardResource => ({
  id: 'wireguard:mesh0',
  kind: 'wireguard',
  name: IF,
  address: '10.99.0.1/24',
  listenPort: PORT,
  peers: [{ publicKey: keypair().pub, allowedIps: ['10.99.0.2/32'] }],
});

shape('O1: a key that appears twice in the peer list is refused, naming the key', () => {
  const r = base();
  const dup = r.peers[0]!.publicKey;
  r.peers.push(
    { publicKey: keypair().pub, allowedIps: ['10.99.0.3/32'] },
    { publicKey: dup, endpoint: '192.0.2.1:51820', allowedIps: ['10.99.0.0/24'] },
  );
  assert.throws(
    () => checkResource(r),
    (e: Error) => e.message.includes(dup) && /appears twice/.test(e.message),
  );
});

shape('a value that could smuggle a line into the wg-quick file is refused', () => {
  const r = base();
  r.peers[0]!.endpoint = '192.0.2.1:51820\nPostUp = touch /tmp/pwned';
  assert.throws(() => checkResource(r), /endpoint/);
  const s = base();
  s.address = '10.99.0.1/24\nPostUp = id';
  assert.throws(() => checkResource(s), /address/);
  const t = base();
  t.name = '../../etc/x';
  assert.throws(() => checkResource(t), /Interface name/);
});

shape('the file carries endpoint and keepalive only where given', () => {
  const r = base();
  r.peers.push({ publicKey: keypair().pub, endpoint: '203.0.113.1:51820', allowedIps: ['10.99.0.0/24'], keepalive: 5 });
  const text = renderConf(r, keypair().priv);
  assert.is(text.match(/^Endpoint = /gm)?.length, 1);
  assert.is(text.match(/^PersistentKeepalive = 5$/gm)?.length, 1);
  assert.match(text, /^ListenPort = 51820$/m);
});

shape.run();

// ---- in namespaces --------------------------------------------------------

const mesh = suite('overlay in namespaces (O1, O2, D4)');
let lab: Lab | undefined;
let tmp = '';
const nodes: Record<string, Node> = {};
const res: Record<string, WireguardResource> = {};

async function call(lab: Lab, n: Node, op: string, r: WireguardResource | FirewallResource): Promise<unknown> {
  const out = await lab.execAny(
    n.name,
    [process.execPath, agent, op],
    JSON.stringify({ resource: r, overlayKeyPath: n.keyPath, stateDir: tmp }),
  );
  if (process.env.MESH_TEST_VERBOSE) process.stderr.write(`[${n.name} ${op}] ${out.stderr}`);
  let parsed: { ok: boolean; result?: unknown; error?: string };
  try {
    parsed = JSON.parse(out.stdout);
  } catch {
    throw new Error(`agent ${op} on ${n.name} exited ${out.code}: ${out.stderr}`);
  }
  if (!parsed.ok) throw new Error(`${op} on ${n.name}: ${parsed.error}`);
  return parsed.result;
}

async function pings(lab: Lab, from: string, to: string, tries = 5): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const r = await lab.execAny(from, ['/usr/bin/ping', '-c1', '-W2', '-n', '-q', to]);
    if (r.code === 0) return true;
  }
  return false;
}

function spoke(n: Node, endpoint: string): WireguardResource {
  return {
    id: `wireguard:${IF}`,
    kind: 'wireguard',
    name: IF,
    address: `${n.overlay}/24`,
    peers: [{ publicKey: nodes.hub!.pub, endpoint, allowedIps: ['10.99.0.0/24'], keepalive: 5 }],
  };
}
function hub(spokes: Node[]): WireguardResource {
  return {
    id: `wireguard:${IF}`,
    kind: 'wireguard',
    name: IF,
    address: `${nodes.hub!.overlay}/24`,
    listenPort: PORT,
    hub: true,
    peers: spokes.map((s) => ({ publicKey: s.pub, allowedIps: [`${s.overlay}/32`] })),
  };
}
const forwardRules = async (lab: Lab) =>
  (await lab.exec('hub', ['/usr/sbin/iptables', '-w', '-S', 'FORWARD'])).split('\n').filter((l) => l.includes(IF));
const sysctl = async (lab: Lab, m: string, key: string) => (await lab.exec(m, ['/usr/sbin/sysctl', '-n', key])).trim();

// The hub's firewall as the mesh composes it for an overlay member: input
// open for WireGuard, and the forward chain on the overlay interface (O2).
const hubFirewall: FirewallResource = {
  id: 'firewall:mesh',
  kind: 'firewall',
  name: 'mesh',
  rules: [{ proto: 'udp', port: PORT, why: 'WireGuard' }],
  forward: IF,
};

// A network on the hub's other side: a namespace of its own on a veth from
// the hub, its default route through the hub.
const BEHIND = '172.31.77';
let behindNs = '';
async function behindHub(lab: Lab): Promise<string> {
  behindNs = `${lab.id}-bh`;
  await run('ip', ['netns', 'add', behindNs]);
  await run('ip', [
    '-n',
    behindNs,
    'link',
    'add',
    'eth0',
    'type',
    'veth',
    'peer',
    'name',
    'bh0',
    'netns',
    String(lab.pid('hub')),
  ]);
  await run('ip', ['-n', behindNs, 'addr', 'add', `${BEHIND}.2/24`, 'dev', 'eth0']);
  await run('ip', ['-n', behindNs, 'link', 'set', 'eth0', 'up']);
  await run('ip', ['-n', behindNs, 'route', 'add', 'default', 'via', `${BEHIND}.1`]);
  await lab.exec('hub', ['/usr/sbin/ip', 'addr', 'add', `${BEHIND}.1/24`, 'dev', 'bh0']);
  await lab.exec('hub', ['/usr/sbin/ip', 'link', 'set', 'bh0', 'up']);
  return behindNs;
}

/** An nft counter of packets from SOURCE arriving in a namespace (argv prefix enters it). */
const COUNT = (source: string) =>
  `table ip probe {\n chain in {\n  type filter hook prerouting priority -300;\n  ip saddr ${source} counter\n }\n}\n`;
const counted = (listing: string) => Number(/counter packets (\d+)/.exec(listing)?.[1] ?? 'NaN');

// A lab that does not come up says why (test/harness/suite.ts) and mesh.after takes it down.
mesh.before(setUp);

async function setUp(): Promise<void> {
  tmp = mkdtempSync(join(tmpdir(), 'mesh-overlay-'));
  chmodSync(tmp, 0o700);
  lab = await up({
    sites: [
      { name: 'a', machines: ['hub', 'a1'], forwards: [{ udp: PORT, to: 'hub' }] },
      { name: 'b', machines: ['b1', 'b2'] },
    ],
  });
  const overlay: Record<string, string> = { hub: '10.99.0.1', a1: '10.99.0.2', b1: '10.99.0.3', b2: '10.99.0.4' };
  for (const [name, ip] of Object.entries(overlay)) {
    const k = keypair();
    const keyPath = join(tmp, `${name}.key`);
    writeFileSync(keyPath, `${k.priv}\n`, { mode: 0o600 });
    nodes[name] = { name, site: name === 'hub' || name === 'a1' ? 'a' : 'b', overlay: ip, ...k, keyPath };
  }
  // Another tenant (Docker) left FORWARD at DROP on the hub (O2); nothing on
  // it forwards yet, so what forwards is what the driver turned on.
  await lab.exec('hub', ['/usr/sbin/iptables', '-w', '-P', 'FORWARD', 'DROP']);
  await lab.exec('hub', ['/usr/sbin/sysctl', '-q', '-w', 'net.ipv4.ip_forward=0']);
  res.hub = hub([nodes.a1!, nodes.b1!]);
  // a1 shares the hub's site: it dials the hub on the LAN, the hub appears once (O1).
  res.a1 = spoke(nodes.a1!, `${lab.lanAddress('hub')}:${PORT}`);
  res.b1 = spoke(nodes.b1!, `${lab.publicAddress('a')}:${PORT}`);
  res.b2 = spoke(nodes.b2!, `${lab.publicAddress('a')}:${PORT}`);
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    void (lab?.down() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}

mesh.after(async () => {
  if (behindNs) await runAny('ip', ['netns', 'del', behindNs]);
  await lab?.down();
  lab = undefined;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

mesh('apply raises the interface from a 0600 file; a second apply changes nothing', async () => {
  assert.is(await call(lab!, nodes.hub!, 'apply', hubFirewall), true, "the hub's firewall");
  for (const m of ['hub', 'a1', 'b1']) {
    assert.is(await call(lab!, nodes[m]!, 'observe', res[m]!), 'absent', `${m} before apply`);
    assert.is(await call(lab!, nodes[m]!, 'apply', res[m]!), true, `${m} first apply`);
  }
  for (const m of ['hub', 'a1', 'b1']) {
    assert.is(await call(lab!, nodes[m]!, 'apply', res[m]!), false, `${m} second apply`);
    assert.is(await call(lab!, nodes[m]!, 'observe', res[m]!), 'ok', `${m} observe`);
    const mode = (await lab!.exec(m, ['/usr/bin/stat', '-c', '%a', `/etc/wireguard/${IF}.conf`])).trim();
    assert.is(mode, '600', `${m} file mode`);
  }
});

mesh(
  'O1/O2: all nine paths ping over the overlay, spoke to spoke through a hub whose FORWARD policy is DROP',
  async () => {
    const failed: string[] = [];
    for (const from of ['hub', 'a1', 'b1']) {
      for (const to of ['hub', 'a1', 'b1']) {
        if (!(await pings(lab!, from, nodes[to]!.overlay))) failed.push(`${from}->${to}`);
      }
    }
    assert.equal(failed, [], `paths that did not ping: ${failed.join(', ')}`);
    const policy = await lab!.exec('hub', ['/usr/sbin/iptables', '-w', '-S', 'FORWARD']);
    assert.match(policy, /^-P FORWARD DROP$/m, "the other tenant's policy is left alone");
    assert.equal(
      await forwardRules(lab!),
      [`-A FORWARD -i ${IF} -o ${IF} -m comment --comment "mesh:${IF}" -j ACCEPT`],
      'the hub holds one accept rule, overlay in and overlay out',
    );
    // Forwarding is on for the overlay interface alone.
    assert.is(await sysctl(lab!, 'hub', `net.ipv4.conf.${IF}.forwarding`), '1');
    assert.is(await sysctl(lab!, 'hub', 'net.ipv4.ip_forward'), '0', 'no other interface forwards');
  },
);

mesh(
  'O2: a spoke cannot reach an address behind the hub, nor that network a spoke, even where the hub routes it',
  async () => {
    const ns = await behindHub(lab!);
    const inBehind = (argv: string[]) => run('ip', ['netns', 'exec', ns, ...argv]);
    // The hub forwards for its other networks and accepts whatever FORWARD
    // sees: only mesh's own forward chain stands between the overlay and them.
    await lab!.exec('hub', ['/usr/sbin/sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);
    await lab!.exec('hub', ['/usr/sbin/iptables', '-w', '-P', 'FORWARD', 'ACCEPT']);
    // b1 is hostile: it routes the hub's other network into its tunnel.
    await lab!.exec('b1', [
      '/usr/bin/wg',
      'set',
      IF,
      'peer',
      nodes.hub!.pub,
      'allowed-ips',
      `10.99.0.0/24,${BEHIND}.0/24`,
    ]);
    await lab!.exec('b1', ['/usr/sbin/ip', 'route', 'add', `${BEHIND}.0/24`, 'dev', IF]);
    try {
      await run('ip', ['netns', 'exec', ns, 'nft', '-f', '-'], { input: COUNT('10.99.0.0/24') });
      await lab!.exec('b1', ['/usr/sbin/nft', '-f', '-'], COUNT(`${BEHIND}.0/24`));
      assert.not.ok(await pings(lab!, 'b1', `${BEHIND}.2`, 2), 'b1 reached the network behind the hub');
      const back = await runAny('ip', ['netns', 'exec', ns, 'ping', '-c2', '-W2', '-n', '-q', nodes.b1!.overlay]);
      assert.is.not(back.code, 0, 'the network behind the hub reached b1');
      assert.is(
        counted(await inBehind(['nft', 'list', 'table', 'ip', 'probe'])),
        0,
        'packets from the overlay arrived behind the hub',
      );
      assert.is(
        counted(await lab!.exec('b1', ['/usr/sbin/nft', 'list', 'table', 'ip', 'probe'])),
        0,
        'packets from behind the hub arrived at b1',
      );
      assert.ok(await pings(lab!, 'a1', nodes.b1!.overlay), 'spoke to spoke still goes through the hub');
    } finally {
      await lab!.exec('b1', ['/usr/sbin/nft', 'delete', 'table', 'ip', 'probe']).catch(() => {});
      await lab!.exec('b1', ['/usr/sbin/ip', 'route', 'del', `${BEHIND}.0/24`, 'dev', IF]);
      await lab!.exec('b1', ['/usr/bin/wg', 'set', IF, 'peer', nodes.hub!.pub, 'allowed-ips', '10.99.0.0/24']);
      await lab!.exec('hub', ['/usr/sbin/iptables', '-w', '-P', 'FORWARD', 'DROP']);
      // Turning ip_forward off turns every interface's forwarding off: the hub's apply holds its own again.
      await lab!.exec('hub', ['/usr/sbin/sysctl', '-q', '-w', 'net.ipv4.ip_forward=0']);
      assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'drift');
      await call(lab!, nodes.hub!, 'apply', res.hub!);
    }
  },
);

mesh('D6: a peer changed by hand is drift, and apply puts it back without a restart', async () => {
  // Routing b1's overlay address nowhere breaks a1->b1 through the hub.
  // (Removing the peer outright would also lose its session: a spoke behind
  // NAT is then unreachable until it next sends data, whatever apply does.)
  await lab!.exec('hub', ['/usr/bin/wg', 'set', IF, 'peer', nodes.b1!.pub, 'allowed-ips', '10.99.0.99/32']);
  assert.not.ok(await pings(lab!, 'a1', nodes.b1!.overlay, 1), 'the hand change broke a1->b1');
  assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'drift');
  assert.is(await call(lab!, nodes.hub!, 'apply', res.hub!), true);
  assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'ok');
  assert.ok(await pings(lab!, 'a1', nodes.b1!.overlay), 'a1->b1 after repair');
});

mesh('D4: a new peer on the hub takes effect in the same apply, no hand restart', async () => {
  assert.is(await call(lab!, nodes.b2!, 'apply', res.b2!), true);
  assert.not.ok(await pings(lab!, 'b2', nodes.hub!.overlay, 1), 'the hub does not know b2 yet');
  res.hub = hub([nodes.a1!, nodes.b1!, nodes.b2!]);
  assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'drift');
  assert.is(await call(lab!, nodes.hub!, 'apply', res.hub!), true);
  for (const [from, to] of [
    ['b2', 'hub'],
    ['hub', 'b2'],
    ['a1', 'b2'],
    ['b2', 'b1'],
  ] as const) {
    assert.ok(await pings(lab!, from, nodes[to]!.overlay), `${from}->${to} after the hub's apply`);
  }
  assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'ok');
  // The spokes the hub already had keep working through the change.
  assert.ok(await pings(lab!, 'hub', nodes.a1!.overlay, 2), 'hub->a1 after the change');
  assert.ok(await pings(lab!, 'a1', nodes.b1!.overlay, 2), 'a1->b1 after the change');
});

mesh('D4: an address change restarts the interface in the same apply', async () => {
  const moved = { ...res.a1!, address: '10.99.0.2/16' };
  assert.is(await call(lab!, nodes.a1!, 'apply', moved), true);
  assert.match(await lab!.exec('a1', ['/usr/sbin/ip', '-o', 'addr', 'show', 'dev', IF]), /10\.99\.0\.2\/16/);
  assert.is(await call(lab!, nodes.a1!, 'observe', moved), 'ok');
  assert.ok(await pings(lab!, 'a1', nodes.b1!.overlay), 'a1->b1 after the restart');
});

mesh('O2: remove takes the interface, the file and every rule of ours, and nothing else', async () => {
  await call(lab!, nodes.hub!, 'remove', res.hub!);
  assert.equal(await forwardRules(lab!), [], 'no FORWARD rule of ours is left');
  assert.is(await sysctl(lab!, 'hub', 'net.ipv4.ip_forward'), '0');
  assert.match(await lab!.exec('hub', ['/usr/sbin/iptables', '-w', '-S', 'FORWARD']), /^-P FORWARD DROP$/m);
  assert.is(await call(lab!, nodes.hub!, 'observe', res.hub!), 'absent');
  const file = await lab!.execAny('hub', ['/usr/bin/test', '-e', `/etc/wireguard/${IF}.conf`]);
  assert.is(file.code, 1, 'the file is gone');
  await call(lab!, nodes.hub!, 'remove', res.hub!); // removing again is a no-op, not an error
});

mesh.run();
