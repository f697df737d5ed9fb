// What mesh-host refuses to apply, it reports with the refusal's code (the
// register in src/sys/errors.ts), the sentence kept: each bad declaration
// goes through the real engine (or, for WireGuard, the check its driver runs
// first) and fails with its own code; nothing is made.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdir, rm, symlink, writeFile, access } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { apply } from '../../host/apply/engine.js';
import { drivers } from '../../host/apply/registry.js';
import { checkResource } from '../../host/apply/wireguard/wgconf.js';
import { heardSeconds, reconcileSeconds, DEFAULT_ROOTS, hostConfig } from '../../host/config.js';
import { checkPath } from '../../host/apply/paths.js';
import { readMark } from '../../host/serial.js';
import { readState, statePath } from '../../host/apply/state.js';
import { saveBrokers } from '../../host/identity.js';
import { runCli, MESH_HOST } from '../harness/mesh.js';
import { agreementPair, b64 } from '../../src/crypto/keys.js';
import { sandbox, file, counter, type Sandbox } from './helpers.js';
import type { Resource, WireguardResource } from '../../src/wire/resources.js';

const H = suite<{ s: Sandbox }>('mesh-host reports what it refuses with the code');
H.before(async (ctx) => {
  ctx.s = await sandbox();
});
H.after(async (ctx) => {
  await rm(dirname(ctx.s.root), { recursive: true, force: true });
});

const coded = (said: string, code: string) => assert.ok(said.endsWith(`(${code}).`), `${code}: ${said}`);
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** One bad resource applied alone: it fails, with CODE, and is not held. */
async function failsWith(s: Sandbox, r: Resource, code: string, opts = s.opts): Promise<string> {
  const out = await apply([r], 'declared', opts);
  assert.equal(out.changed, [], `${r.id} changed nothing`);
  assert.is(out.failed.length, 1, `${r.id} failed`);
  coded(out.failed[0]!.error, code);
  return out.failed[0]!.error;
}

H('a declared file, directory, service or container it cannot take fails with its own code', async ({ s }) => {
  assert.match(await failsWith(s, file('etc/x', 'x'), 'MSH85'), /Path "etc\/x" is refused/);
  const decoy = join(s.stateDir, 'decoy'); // outside the roots: a sandbox path, never a real one
  assert.match(await failsWith(s, file(decoy, 'x'), 'MSH86'), /not under any allowed root/);
  assert.not.ok(await exists(decoy));
  const outside = join(s.stateDir, 'outside');
  await mkdir(outside);
  await symlink(outside, join(s.root, 'link'));
  assert.match(await failsWith(s, file(join(s.root, 'link', 'x'), 'x'), 'MSH87'), /outside the allowed roots/);
  await failsWith(s, file(join(s.root, 'owned'), 'x', { owner: 'no-such-user-mesh' }), 'MSH88');
  await failsWith(s, file(join(s.root, 'moded'), 'x', { mode: 'rw-r--r--' }), 'MSH89');
  await writeFile(join(s.root, 'plain'), 'a file where a directory is declared');
  await failsWith(
    s,
    { kind: 'directory', id: `directory:${join(s.root, 'plain')}`, path: join(s.root, 'plain'), mode: '0755' },
    'MSHC3',
  );
  await failsWith(s, counter('Bad_Name', join(s.root, 'count')), 'MSH81');
  await failsWith(s, { ...counter('relexec', join(s.root, 'count')), exec: ['sh', '-c', 'true'] }, 'MSH82');
  const box = { kind: 'container' as const, id: 'container:box', name: 'box', image: 'localhost/none:1' };
  await failsWith(s, { ...box, name: 'Box' }, 'MSH81');
  await failsWith(s, { ...box, network: 'bridge' }, 'MSH83');
  await failsWith(s, { ...box, mounts: [{ source: join(s.root, 'data'), target: 'data' }] }, 'MSH84');
});

H(
  "the host's own files, mesh's units and the machine's accounts are never writable, whatever the roots (MSHX0)",
  async ({ s }) => {
    // Under the default roots, each of these was writable.
    const where = { roots: DEFAULT_ROOTS, stateDir: '/var/lib/mesh-host' };
    for (const path of [
      '/var/lib/mesh-host/identity.json',
      '/var/lib/mesh-host/serial.json',
      '/etc/systemd/system/mesh-host.service.d/override.conf',
      '/etc/systemd/system/mesh-serve.service',
      '/usr/local/lib/systemd/system/mesh-host.service.d/x.conf',
      '/etc/mesh/signing.key',
      '/var/lib/mesh/store',
      '/etc/shadow',
      '/etc/sudoers.d/mesh',
    ]) {
      let said = '';
      try {
        checkPath(path, where);
      } catch (e) {
        said = (e as Error).message;
      }
      coded(said, 'MSHX0');
    }
    // What modules are declared to write stays writable.
    checkPath('/etc/mesh/provision/pg/app.json', where);
    checkPath('/etc/nginx/nginx.conf', where);
    // Through the engine: a root that holds the host's own directory still does not open it.
    const wide = { ...s.opts, roots: [s.root, dirname(s.stateDir)] };
    const serial = join(s.stateDir, 'serial.json');
    await failsWith(s, file(serial, 'x'), 'MSHX0', wide);
    assert.not.ok(await exists(serial));
    // Nor a symlink inside the roots that leads into it.
    await symlink(s.stateDir, join(s.root, 'state-link'));
    await failsWith(s, file(join(s.root, 'state-link', 'x'), 'x'), 'MSHX0', wide);
    assert.not.ok(await exists(join(s.stateDir, 'x')));
  },
);

H(
  "a kind it has no driver for, an id listed twice, and another origin's resource are refused with their codes",
  async ({ s }) => {
    const f = file(join(s.root, 'f'), 'v1');
    await failsWith(s, f, 'MSHC0', { ...s.opts, drivers: new Map([...drivers].filter(([kind]) => kind !== 'file')) });
    let twice = '';
    await apply([f, f], 'declared', s.opts).catch((e: Error) => (twice = e.message));
    coded(twice, 'MSHC1');
    assert.not.ok(await exists(f.path), 'nothing was applied');
    await apply([f], 'carried', s.opts);
    assert.match(await failsWith(s, f, 'MSHC2'), /Remove it from the carried resources first/);
  },
);

const wg = (): WireguardResource => ({
  id: 'wireguard:mesh0',
  kind: 'wireguard',
  name: 'mesh0',
  address: '10.99.0.1/24',
  listenPort: 51820,
  peers: [{ publicKey: b64(agreementPair().public), allowedIps: ['10.99.0.2/32'] }],
});

H('a WireGuard interface it cannot write as a wg-quick file is refused with the code of what is wrong', () => {
  const cases: [string, (r: WireguardResource) => void][] = [
    [
      'MSHC4',
      (r) => {
        r.name = '../../etc/x';
      },
    ],
    [
      'MSHC5',
      (r) => {
        r.peers[0]!.publicKey = 'not-a-key';
      },
    ],
    [
      'MSHC6',
      (r) => {
        r.address = '10.99.0.1';
      },
    ],
    [
      'MSHC7',
      (r) => {
        r.listenPort = 70000;
      },
    ],
    [
      'MSHC8',
      (r) => {
        (r as { peers: unknown }).peers = 'none';
      },
    ],
    [
      'MSHC9',
      (r) => {
        r.peers.push({ ...r.peers[0]!, allowedIps: ['10.99.0.3/32'] });
      },
    ],
    [
      'MSHG0',
      (r) => {
        r.peers[0]!.endpoint = '192.0.2.1:51820\nPostUp = id';
      },
    ],
    [
      'MSHG1',
      (r) => {
        r.peers[0]!.allowedIps = [];
      },
    ],
    [
      'MSHG2',
      (r) => {
        r.peers[0]!.allowedIps = ['0.0.0.0/0'];
      },
    ],
    [
      'MSHG3',
      (r) => {
        r.peers[0]!.keepalive = -1;
      },
    ],
  ];
  checkResource(wg()); // the base is fine: each case breaks one thing
  for (const [code, spoil] of cases) {
    const r = wg();
    spoil(r);
    let said = '';
    try {
      checkResource(r);
    } catch (e) {
      said = (e as Error).message;
    }
    coded(said, code);
  }
});

H('a seconds setting mesh-host cannot use is refused with MSHG4', () => {
  let said = '';
  try {
    heardSeconds({ MESH_HOST_HEARD_SECONDS: 'often' });
  } catch (e) {
    said = (e as Error).message;
  }
  coded(said, 'MSHG4');
  // D6's period too: NaN or 0 would make setInterval reconcile without pause.
  for (const bad of ['often', '0', '-5']) {
    said = '';
    try {
      reconcileSeconds({ MESH_HOST_RECONCILE_SECONDS: bad });
    } catch (e) {
      said = (e as Error).message;
    }
    coded(said, 'MSHG4');
  }
  assert.is(reconcileSeconds({}), 300);
});

// Its own files: refused with their code rather than read as empty (an empty mark would reopen replays, D2).
H(
  'an identity.json that cannot be read or is damaged stops mesh-host run with MSHI5 or MSHI6 (L4: a fault, not a wait)',
  async ({ s }) => {
    for (const [code, make] of [
      ['MSHI5', (p: string) => mkdir(p)],
      ['MSHI6', (p: string) => writeFile(p, '{', { mode: 0o600 })],
    ] as const) {
      const dir = join(s.stateDir, `id-${code}`);
      await mkdir(dir);
      await make(join(dir, 'identity.json'));
      const r = await runCli(MESH_HOST, ['run'], { PATH: process.env.PATH, MESH_HOST_DIR: dir });
      assert.is(r.code, 1, r.stderr);
      assert.ok(r.stderr.startsWith(`mesh-host: ${join(dir, 'identity.json')} `), r.stderr);
      coded(r.stderr.trimEnd(), code);
    }
  },
);

H(
  'a damaged serial.json or applied.json, and brokers saved with no identity, are refused with their codes',
  async ({ s }) => {
    const dir = join(s.stateDir, 'files');
    await mkdir(dir);
    const said = async (f: () => unknown) => {
      try {
        await f();
      } catch (e) {
        return (e as Error).message;
      }
      return 'nothing refused';
    };
    await writeFile(join(dir, 'serial.json'), '{"v":1,"serial":"7"}');
    coded(await said(() => readMark(dir)), 'MSHI7');
    await writeFile(statePath(dir), '{');
    coded(await said(() => readState(dir)), 'MSHI8');
    await writeFile(statePath(dir), '{"v":2,"resources":[]}');
    coded(await said(() => readState(dir)), 'MSHI9');
    // A damaged mark read as 0 would let an old declaration be applied again.
    await writeFile(statePath(dir), '{"v":1,"resources":[],"mark":{"serial":"7"}}');
    coded(await said(() => readState(dir)), 'MSHF4');
    coded(await said(() => hostConfig({ MESH_HOST_DPKG_ROOT: 'var/lib' })), 'MSHO2');
    coded(
      await said(() =>
        saveBrokers(join(dir, 'none'), [{ host: 'mq1', port: 5671, fingerprint: Array(32).fill('AB').join(':') }]),
      ),
      'MSHK0',
    );
  },
);

H.run();
