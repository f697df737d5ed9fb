// The firewall driver on real machines (lab namespaces): a node's input is
// closed unless a rule admits it (X1), a rule admits exactly its sources, a
// rule added by hand is put back at the next reconcile (D6), and hostile
// rules are refused by the one parser before nft ever sees them (X2).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { up, type Lab } from '../../lab/netns/topology.js';
import type { FirewallResource, FirewallRule } from '../../src/wire/resources.js';
import { parseResources, parseModuleEntries } from '../../src/wire/parse_resources.js';
import { WireError } from '../../src/wire/envelope.js';
import { renderTable } from '../../host/apply/firewall.js';

const PROBE = fileURLToPath(new URL('../../lab/probe.js', import.meta.url));
const test = suite('firewall driver');
let lab: Lab;
let listener: ChildProcess | undefined;
const STATE = '/srv/fw-state';

const fw = (rules: FirewallRule[]): FirewallResource => ({
  kind: 'firewall',
  id: 'firewall:mesh',
  name: 'mesh',
  rules,
});

async function onA(op: 'apply' | 'reconcile', resources: unknown[]) {
  return JSON.parse(await lab.exec('fa', [process.execPath, PROBE, op, STATE], JSON.stringify(resources))) as {
    changed: string[];
    corrected?: string[];
    failed: { id: string; error: string }[];
  };
}
const reach = async (from: string, port: number) =>
  (await lab.exec(from, [process.execPath, PROBE, 'connect', lab.lanAddress('fa'), String(port)])).trim();
const table = async () => lab.exec('fa', ['/usr/sbin/nft', 'list', 'table', 'inet', 'mesh']);

test.before(async () => {
  lab = await up({ sites: [{ name: 'a', machines: ['fa', 'fb', 'fc'] }] });
  await lab.exec('fa', ['/bin/sh', '-c', 'mount -t tmpfs -o mode=0755 tmpfs /srv']);
  listener = spawn(
    'nsenter',
    ['-t', String(lab.pid('fa')), '-m', '-n', '--', process.execPath, PROBE, 'listen', '7001', '7002'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((ok) => listener!.stdout!.once('data', () => ok()));
});

test.after(async () => {
  listener?.kill('SIGKILL');
  await lab?.down();
});

test('before any firewall both ports answer (the listener works)', async () => {
  assert.is(await reach('fb', 7001), 'open');
  assert.is(await reach('fc', 7002), 'open');
});

test('X1: with the table loaded, a port no rule names is refused from the network, and loopback still reaches it', async () => {
  const out = await onA('apply', [fw([])]);
  assert.equal(out.failed, []);
  assert.equal(out.changed, ['firewall:mesh']);
  assert.match(await table(), /policy drop/);
  assert.is(await reach('fb', 7001), 'refused');
  assert.is(await reach('fc', 7002), 'refused');
  assert.is((await lab.exec('fa', [process.execPath, PROBE, 'connect', '127.0.0.1', '7002'])).trim(), 'open');
});

test('X2: a rule admits exactly its sources: fb reaches 7001, fc does not; nobody reaches 7002', async () => {
  const out = await onA('apply', [
    fw([{ proto: 'tcp', port: 7001, from: [`${lab.lanAddress('fb')}/32`], why: 'provision db: consumer fb' }]),
  ]);
  assert.equal(out.failed, []);
  assert.is(await reach('fb', 7001), 'open');
  assert.is(await reach('fc', 7001), 'refused');
  assert.is(await reach('fb', 7002), 'refused');
  assert.match(await table(), /comment "provision db: consumer fb"/);
});

test('an unchanged firewall is not loaded again', async () => {
  const out = await onA('apply', [
    fw([{ proto: 'tcp', port: 7001, from: [`${lab.lanAddress('fb')}/32`], why: 'provision db: consumer fb' }]),
  ]);
  assert.equal(out.changed, []);
});

test('D6: a rule added by hand to inet mesh is found at reconcile and the declared table put back', async () => {
  const declared = [
    fw([{ proto: 'tcp', port: 7001, from: [`${lab.lanAddress('fb')}/32`], why: 'provision db: consumer fb' }]),
  ];
  await lab.exec('fa', ['/usr/sbin/nft', 'insert', 'rule', 'inet', 'mesh', 'input', 'tcp', 'dport', '7002', 'accept']);
  assert.is(await reach('fc', 7002), 'open', 'the hand-added rule did not take effect');
  const out = await onA('reconcile', declared);
  assert.equal(out.corrected, ['firewall:mesh']);
  assert.is(await reach('fc', 7002), 'refused');
  assert.not.match(await table(), /dport 7002 accept/);
  assert.equal(
    (await onA('reconcile', declared)).corrected,
    [],
    'a second reconcile found drift in a table it just loaded',
  );
});

test('a table deleted by hand is loaded again at reconcile', async () => {
  await lab.exec('fa', ['/usr/sbin/nft', 'delete', 'table', 'inet', 'mesh']);
  const out = await onA('reconcile', [fw([])]);
  assert.equal(out.corrected, ['firewall:mesh']);
  assert.is(await reach('fb', 7001), 'refused');
});

test('a port range and an interface-bound rule render as nft accepts them', async () => {
  const out = await onA('apply', [
    fw([
      { proto: 'tcp', port: 7001, to: 7002, why: 'range' },
      { proto: 'udp', port: 51820, via: 'mesh0', from: ['10.99.0.0/16', 'fd00::/8'], why: 'WireGuard: peers hub, b1' },
    ]),
  ]);
  assert.equal(out.failed, []);
  assert.is(await reach('fc', 7002), 'open');
  await onA('apply', [fw([])]);
});

const refused = (fn: () => unknown, field: RegExp) => {
  try {
    fn();
  } catch (err) {
    assert.instance(err, WireError);
    assert.match((err as Error).message, field);
    return;
  }
  assert.unreachable('not refused');
};

test('X2: hostile rules are refused by the parser the host runs: nft injection in a comment, bad ports, bad sources', () => {
  const rule = (r: Record<string, unknown>) => () =>
    parseResources([
      { kind: 'firewall', id: 'firewall:mesh', name: 'mesh', rules: [{ proto: 'tcp', port: 80, why: 'ok', ...r }] },
    ]);
  refused(rule({ why: 'x" accept; flush ruleset; #' }), /rules\[0\]\.why/);
  refused(rule({ why: 'a\nb' }), /rules\[0\]\.why/);
  refused(rule({ why: 'x } chain evil { type filter hook input priority -1; policy accept; }' }), /rules\[0\]\.why/);
  refused(rule({ port: 70000 }), /rules\[0\]\.port/);
  refused(rule({ port: 0 }), /rules\[0\]\.port/);
  refused(rule({ port: '22' }), /rules\[0\]\.port/);
  refused(rule({ port: 9000, to: 8000 }), /rules\[0\]\.to/);
  refused(rule({ to: 65536 }), /rules\[0\]\.to/);
  refused(rule({ from: ['10.0.0.1/32 } accept'] }), /rules\[0\]\.from\[0\]/);
  refused(rule({ from: ['10.0.0.1/33'] }), /rules\[0\]\.from\[0\]/);
  refused(rule({ via: 'eth0"; accept' }), /rules\[0\]\.via/);
  refused(rule({ proto: 'icmp' }), /rules\[0\]\.proto/);
  refused(() => parseResources([{ kind: 'firewall', id: 'firewall:filter', name: 'filter', rules: [] }]), /name/);
  // A module's served port is never a declaration's: the host refuses one.
  refused(
    () => parseResources([{ kind: 'opening', id: 'opening:web', name: 'web', proto: 'tcp', port: 80, from: 'any' }]),
    /kind/,
  );
});

test('X2: a module file with a hostile opening is refused by the same checks mesh module add runs', () => {
  const open = (r: Record<string, unknown>) => () =>
    parseModuleEntries([
      { kind: 'opening', id: 'opening:web', name: 'web', proto: 'tcp', port: 80, from: 'any', ...r },
    ]);
  assert.equal(open({})(), [{ kind: 'opening', id: 'opening:web', name: 'web', proto: 'tcp', port: 80, from: 'any' }]);
  refused(open({ port: 65536 }), /\.port/);
  refused(open({ from: 'site:b"; accept' }), /\.from/);
  refused(open({ from: 'everywhere' }), /\.from/);
  refused(open({ why: 'web" accept' }), /\.why/);
  refused(open({ id: 'opening:w"eb', name: 'w"eb' }), /\.name/);
});

test('the rendered table drops by default and answers closed ports at once', () => {
  const t = renderTable({ rules: [] });
  assert.match(t, /policy drop;/);
  assert.match(t, /iif "lo" accept/);
  assert.match(t, /ct state established,related accept/);
  assert.match(t, /reject with tcp reset/);
});

test.run();
