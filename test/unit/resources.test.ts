// The one check of what a resource may be (src/wire/parse_resources.ts), at a
// fleet's size: a hub peers with every node, and a provider's port admits
// every node of its consumers. A list longer than any fleet is refused.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseResource, parseModuleEntries, BUNDLE_UNITS } from '../../src/wire/parse_resources.js';
import { WireError } from '../../src/wire/envelope.js';

const R = suite('resources at fleet size');

const key = (i: number) =>
  Buffer.alloc(32, 0)
    .fill(i % 256, 0, 1)
    .fill(Math.floor(i / 256) % 256, 1, 2)
    .toString('base64');
const addr = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/32`;
const hub = (n: number) => ({
  id: 'wireguard:mesh0',
  kind: 'wireguard',
  name: 'mesh0',
  address: '10.0.0.1/16',
  listenPort: 51820,
  hub: true,
  peers: Array.from({ length: n }, (_, i) => ({ publicKey: key(i), allowedIps: [addr(i + 2)], keepalive: 25 })),
});
const firewall = (n: number) => ({
  id: 'firewall:mesh',
  kind: 'firewall',
  name: 'mesh',
  rules: [
    {
      proto: 'tcp',
      port: 5432,
      from: Array.from({ length: n }, (_, i) => addr(i + 2)),
      via: 'mesh0',
      why: 'provision appdb',
    },
  ],
});

R('a hub of a 10,000-node fleet: 9,999 peers are one declaration', () => {
  const r = parseResource(hub(9_999), 'resources[0]') as { peers: unknown[] };
  assert.is(r.peers.length, 9_999);
});

R('a port admitting 10,000 nodes', () => {
  const r = parseResource(firewall(10_000), 'resources[0]') as { rules: { from: unknown[] }[] };
  assert.is(r.rules[0]!.from.length, 10_000);
});

R('a port admitting 100,000 nodes', () => {
  const r = parseResource(firewall(100_000), 'resources[0]') as { rules: { from: unknown[] }[] };
  assert.is(r.rules[0]!.from.length, 100_000);
});

/** A hub whose peer for another hub routes BLOCKS /20 blocks of that hub's group, beside its /32. */
const hubRoutes = (blocks: number) => ({
  ...hub(1),
  peers: [
    {
      publicKey: Buffer.alloc(32, 7).toString('base64'),
      allowedIps: [
        '10.0.0.1/32',
        ...Array.from({ length: blocks }, (_, i) => `${10 + (i >> 12)}.${(i >> 4) & 255}.${(i & 15) << 4}.0/20`),
      ],
    },
  ],
});

R("a hub's peer for another hub in a /8 overlay: its /32 and all 4,096 blocks; one more is refused", () => {
  const r = parseResource(hubRoutes(4096), 'resources[0]') as { peers: { allowedIps: unknown[] }[] };
  assert.is(r.peers[0]!.allowedIps.length, 4097);
  assert.throws(
    () => parseResource(hubRoutes(4097), 'resources[0]'),
    (err: unknown) =>
      err instanceof WireError &&
      /resources\[0\]\.peers\[0\]\.allowedIps must be a list of at most 4097/.test(err.message),
  );
});

R('longer than any fleet is refused, the field named', () => {
  for (const [what, v] of [
    ['peers', hub(524_289)],
    ['rules[0].from', firewall(524_289)],
  ] as const) {
    try {
      parseResource(v, 'resources[0]');
      assert.unreachable(`${what} of 524,289 was taken`);
    } catch (err) {
      assert.instance(err, WireError);
      assert.is((err as WireError).fault, 'malformed');
      assert.match(
        (err as Error).message,
        new RegExp(`resources\\[0\\]\\.${what.replace(/[[\].]/g, '\\$&')} must be a list of at most 524288`),
      );
    }
  }
});

R("a declared service may not take the name of one of the bundle's own units", () => {
  const svc = (name: string) => ({ id: `service:${name}`, kind: 'service', name, exec: ['/usr/bin/true'] });
  for (const n of BUNDLE_UNITS) {
    try {
      parseResource(svc(n), 'resources[0]');
      assert.unreachable(`a service named ${n} was taken`);
    } catch (err) {
      assert.instance(err, WireError);
      assert.is((err as WireError).fault, 'malformed');
      assert.match(
        (err as Error).message,
        `resources[0].name must not be "${n}": mesh-${n}.service is the bundle's own unit`,
      );
    }
  }
  assert.is((parseResource(svc('web'), 'resources[0]') as { name: string }).name, 'web');
  // The list is the bundle's: every unit it names is mesh-<one of them>.
  const dir = new URL('../../../bundle/', import.meta.url).pathname;
  const named = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((f) => [...readFileSync(join(dir, f), 'utf8').matchAll(/name: 'mesh-([a-z0-9-]+)'/g)].map((m) => m[1]!));
  assert.ok(named.length >= BUNDLE_UNITS.length, `found ${named.join(', ')}`);
  assert.equal([...new Set(named)].sort(), [...BUNDLE_UNITS].sort());
});

R('a module file carrying what the mesh composes (firewall, wireguard, secret) is refused with the remedy', () => {
  const refused = (r: unknown, want: RegExp) => {
    try {
      parseModuleEntries([r]);
    } catch (e) {
      assert.instance(e, WireError);
      assert.match((e as Error).message, want);
      return;
    }
    assert.unreachable(`accepted ${JSON.stringify(r)}`);
  };
  refused(firewall(1), /resources\[0\]\.kind.*declare an opening instead/);
  refused(hub(1), /resources\[0\]\.kind.*overlay graph/);
  refused(
    { id: 'secret:/etc/k', kind: 'secret', path: '/etc/k', mode: '0600', sealed: 'eA==' },
    /mesh secret make\|accept/,
  );
  assert.is(
    parseModuleEntries([{ id: 'opening:web', kind: 'opening', name: 'web', proto: 'tcp', port: 80, from: 'any' }])
      .length,
    1,
  );
});

R.run();
