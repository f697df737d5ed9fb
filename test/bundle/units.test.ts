// The first node's systemd units (carried by the bundle where the machine
// boots with systemd): each restarts on failure, starts after what it needs,
// logs to the journal and is hardened to what it does; systemd itself
// accepts every file; and the same specs raise supervised services where
// there is no systemd, with the argv the lab has always run.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { unitText, carriedService, type Spec } from '../../bundle/units.js';
import { postgresSpec } from '../../bundle/postgres.js';
import { brokerSpec } from '../../bundle/rabbitmq.js';
import { serveSpec, hostSpec, consoleSpec, controlResources } from '../../bundle/control.js';
import { brokerResources } from '../../bundle/rabbitmq.js';
import { ruleset } from '../../bundle/nftables.js';
import { DAEMON_USERS, DEFAULT_PORTS, type Options } from '../../bundle/layout.js';
import type { FileResource, ServiceResource } from '../../src/wire/resources.js';

const test = suite('bundle units');
const o: Options = {
  state: '/var/lib/mesh',
  home: '/etc/mesh',
  hostDir: '/var/lib/mesh-host',
  name: 'first',
  site: 'default',
  publicHost: '198.51.100.7',
  dialable: '198.51.100.7:51820',
  ports: DEFAULT_PORTS,
  roots: ['/etc', '/srv'],
  hostEnv: {},
};
const SECRETS = { password: 'x', cert: '/c.pem', key: '/k.pem', fingerprint: 'AA' };
const nft: Spec = {
  name: 'mesh-nftables',
  description: 'mesh firewall base',
  profile: 'oneshot',
  exec: ['/usr/sbin/nft', '-f', '/var/lib/mesh/nftables.nft'],
};
const specs = [nft, postgresSpec(o), brokerSpec(o), serveSpec(o), hostSpec(o)];
const unit = (name: string) => unitText(specs.find((s) => s.name === name)!);
const lines = (text: string, key: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));

test('systemd accepts every unit file the bundle writes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-units-'));
  for (const s of specs) writeFileSync(join(dir, `${s.name}.service`), unitText(s));
  // Exits non-zero, naming the line, on any key or value systemd does not take.
  execFileSync('systemd-analyze', ['verify', '--man=no', ...specs.map((s) => join(dir, `${s.name}.service`))], {
    stdio: 'pipe',
  });
});

test('every daemon restarts on failure and logs to the journal under its own name', () => {
  for (const name of ['mesh-postgres', 'mesh-rabbitmq', 'mesh-serve', 'mesh-host']) {
    const t = unit(name);
    assert.equal(lines(t, 'Restart'), ['on-failure'], name);
    assert.equal(lines(t, 'StandardOutput'), ['journal'], name);
    assert.equal(lines(t, 'SyslogIdentifier'), [name], name);
    assert.equal(lines(t, 'WantedBy'), ['multi-user.target'], name);
  }
});

test('order: the table before the network, the store and broker after it, serve after both', () => {
  assert.match(lines(unit('mesh-nftables'), 'Before')[0]!, /network-pre\.target/);
  assert.equal(lines(unit('mesh-nftables'), 'DefaultDependencies'), ['no']);
  for (const name of ['mesh-postgres', 'mesh-rabbitmq', 'mesh-host'])
    assert.match(lines(unit(name), 'After')[0]!, /mesh-nftables\.service/, name);
  const serve = lines(unit('mesh-serve'), 'After')[0]!;
  assert.match(serve, /mesh-postgres\.service/);
  assert.match(serve, /mesh-rabbitmq\.service/);
});

test('hardening: daemons get no new privileges, a read-only system, a private /tmp and no capabilities; the agent keeps what it uses', () => {
  for (const name of ['mesh-postgres', 'mesh-rabbitmq', 'mesh-serve']) {
    const t = unit(name);
    assert.equal(lines(t, 'NoNewPrivileges'), ['yes'], name);
    assert.equal(lines(t, 'ProtectSystem'), ['full'], name);
    assert.equal(lines(t, 'PrivateTmp'), ['yes'], name);
    assert.equal(lines(t, 'CapabilityBoundingSet'), [''], name);
  }
  assert.equal(lines(unit('mesh-postgres'), 'User'), ['postgres']);
  assert.equal(lines(unit('mesh-nftables'), 'CapabilityBoundingSet'), ['CAP_NET_ADMIN']);
  const host = unit('mesh-host');
  assert.equal(lines(host, 'PrivateTmp'), ['yes']);
  assert.match(lines(host, 'CapabilityBoundingSet')[0]!, /CAP_NET_ADMIN/);
  assert.not.match(lines(host, 'CapabilityBoundingSet')[0]!, /CAP_SYS_MODULE|CAP_SYS_BOOT|CAP_SYS_PTRACE/);
});

test('the environment is paths and ports, never a secret, and reaches systemd as written', () => {
  const t = unit('mesh-rabbitmq');
  assert.ok(
    lines(t, 'Environment').includes(
      '"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}"',
    ),
  );
  assert.ok(lines(t, 'Environment').includes('"ERL_EPMD_ADDRESS=127.0.0.1"'));
  for (const s of specs) assert.not.match(unitText(s), /password|PASSWORD|secret=/, s.name);
  const odd = unitText({
    name: 'x',
    description: 'x',
    profile: 'service',
    env: { A: '50% $HOME' },
    exec: ['/bin/echo', '$HOME', '100%'],
  });
  assert.equal(lines(odd, 'Environment'), ['"A=50%% $HOME"']);
  assert.equal(lines(odd, 'ExecStart'), ['"/bin/echo" "$$HOME" "100%%"']);
});

test('without systemd the same spec is a supervised service with the argv the lab runs', () => {
  const pg = carriedService(postgresSpec(o), false) as ServiceResource;
  assert.is(pg.kind, 'service');
  assert.equal(pg.exec.slice(0, 4), ['/usr/sbin/runuser', '-u', 'postgres', '--']);
  const rabbit = carriedService(brokerSpec(o), false) as ServiceResource;
  assert.is(rabbit.exec[0], '/usr/bin/env');
  assert.equal(rabbit.restartOn, [
    'file:/var/lib/mesh/rabbitmq/rabbitmq.conf',
    'file:/var/lib/mesh/rabbitmq/enabled_plugins',
  ]);
  const unitFile = carriedService(serveSpec(o), true) as FileResource;
  assert.equal([unitFile.kind, unitFile.path], ['file', '/etc/systemd/system/mesh-serve.service']);
});

test("serve's unit says its metrics listen on loopback, and the first node's table does not admit that port (X1)", () => {
  const exec = lines(unit('mesh-serve'), 'ExecStart')[0]!;
  assert.match(exec, /"serve" "--metrics" "127\.0\.0\.1:9780"$/);
  const table = ruleset(DEFAULT_PORTS);
  assert.not.match(table, /\b9780\b/, 'the metrics port is not opened by default');
  assert.match(table, /\b5671\b/, "the ruleset names the ports it opens (the broker's TLS)");
});

test('serve and mesh-host say ready and alive: Type=notify, a watchdog, and the word admitted from systemd-notify, their child', () => {
  for (const [name, sec] of [
    ['mesh-serve', '120s'],
    ['mesh-host', '600s'],
  ]) {
    const t = unit(name!);
    assert.equal(lines(t, 'Type'), ['notify'], name);
    assert.equal(lines(t, 'WatchdogSec'), [sec], name);
    assert.equal(lines(t, 'NotifyAccess'), ['all'], name);
  }
  assert.equal(lines(unit('mesh-rabbitmq'), 'Type'), ['simple']);
});

test('V2: the agent unit runs mesh-host supervise, which alone is told to stop and stops the agent it started', () => {
  const host = unit('mesh-host');
  assert.match(lines(host, 'ExecStart')[0]!, /"supervise"$/);
  assert.equal(lines(host, 'KillMode'), ['mixed']);
  assert.equal(lines(unit('mesh-serve'), 'KillMode'), ['control-group']);
});

test('P1: under systemd each daemon is its own user, handed only the store URLs it uses', () => {
  const sep: Options = { ...o, users: DAEMON_USERS, console: '127.0.0.1:7780' };
  const serve = unitText(serveSpec(sep));
  const con = unitText(consoleSpec(sep, sep.console!));
  const broker = unitText(brokerSpec(sep));
  assert.equal(lines(serve, 'User'), ['mesh']);
  assert.equal(lines(con, 'User'), ['mesh-console']);
  assert.equal(lines(broker, 'User'), ['mesh-broker']);
  assert.equal(lines(unitText(hostSpec(sep)), 'User'), [], 'mesh-host, the agent, stays root');
  const vars = (t: string) => lines(t, 'Environment').map((l) => l.slice(1).split('=')[0]!);
  const stores = (t: string) =>
    vars(t)
      .filter((k) => k.startsWith('MESH_STORE_'))
      .sort();
  assert.equal(stores(serve), [
    'MESH_STORE_ASSIGNMENT',
    'MESH_STORE_CATALOGUE',
    'MESH_STORE_INVENTORY',
    'MESH_STORE_OVERLAY',
    'MESH_STORE_PROVISION',
    'MESH_STORE_SECRET',
  ]);
  assert.equal(stores(con), [
    'MESH_STORE_ASSIGNMENT',
    'MESH_STORE_AUDIT',
    'MESH_STORE_CATALOGUE',
    'MESH_STORE_INVENTORY',
    'MESH_STORE_OVERLAY',
  ]);
  // The console's URLs are its own copies, not the files serve reads; it gets no MESH_HOME.
  assert.ok(lines(con, 'Environment').every((l) => !l.includes('/var/lib/mesh/store/')));
  assert.not.ok(vars(con).includes('MESH_HOME'));
  assert.equal(stores(broker), []);
  assert.not.ok(vars(broker).includes('MESH_HOME'));
  // The files each reads, owned by its user: broker.json serve's, the broker's config the broker's.
  const owner = (rs: ReturnType<typeof controlResources>, path: string) =>
    (rs.find((r) => (r as FileResource).path === path) as FileResource).owner;
  assert.is(owner(controlResources(sep, SECRETS), '/etc/mesh/broker.json'), 'mesh');
  assert.is(owner(brokerResources(sep, SECRETS), '/var/lib/mesh/rabbitmq/rabbitmq.conf'), 'mesh-broker');
  // The daemons keep their hardening as their own users.
  for (const t of [serve, con, broker]) {
    assert.equal(lines(t, 'NoNewPrivileges'), ['yes']);
    assert.equal(lines(t, 'ProtectHome'), ['yes']);
    assert.equal(lines(t, 'CapabilityBoundingSet'), ['']);
  }
  // Without systemd (the lab) nothing changes user.
  assert.equal(lines(unitText(serveSpec(o)), 'User'), []);
});

test.run();
