// The installers refuse bad options and bad files with codes, before they
// change anything: install.js, standby.js and broker_node.js run for real
// with options they refuse (as root, as the bundle runs, but with every
// folder a temp one, and each refusal comes before anything is made), and
// the hand-over and standby checks are called on temp files.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { chmodSync, existsSync, mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runAny } from '../../src/sys/proc.js';
import { readHandOver, writeHandOver, markClustered, type HandOver } from '../../bundle/broker_cluster.js';
import { handOverBroker, overlayAddress } from '../../bundle/broker_hand_over.js';
import { standbySlot, cloneStandby, replicationOpening } from '../../bundle/replication.js';
import { paths, type Options } from '../../bundle/layout.js';
import { ensureUsers } from '../../bundle/users.js';
import { freshStore } from '../harness/store.js';

const bundleJs = (name: string) => fileURLToPath(new URL(`../../bundle/${name}.js`, import.meta.url));
const B = suite<{ dir: string }>('the installers refuse with codes');
B.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-bundle-refusals-'));
});
B.after(({ dir }) => {
  rmSync(dir, { recursive: true, force: true });
});

const coded = (said: string, code: string) => assert.ok(said.trimEnd().endsWith(`(${code}).`), `${code}: ${said}`);
function throwsCoded(f: () => unknown, code: string): string {
  try {
    f();
  } catch (e) {
    coded((e as Error).message, code);
    return (e as Error).message;
  }
  throw new Error(`expected ${code}, nothing was refused`);
}
async function rejectsCoded(p: Promise<unknown>, code: string): Promise<string> {
  const said = await p.then(
    () => '',
    (e: Error) => e.message,
  );
  coded(said, code);
  return said;
}

B('install.js, standby.js and broker_node.js refuse their options with codes, and make nothing', async ({ dir }) => {
  const state = join(dir, 'state');
  const temp = [
    '--state',
    state,
    '--home',
    join(dir, 'home'),
    '--host-dir',
    join(dir, 'host'),
    '--public',
    '192.0.2.1',
    '--name',
    'b1',
  ];
  const cases: [string, string[], string][] = [
    ['install', [...temp, '--add-broker-node', 'b2'], 'MSH90'],
    ['install', [...temp, '--pg-port', '0'], 'MSH91'],
    ['install', [...temp, '--host-env', 'PATH=/tmp'], 'MSH92'],
    // Adding a broker node from a machine not enrolled: refused before a user or folder is made.
    ['install', [...temp, '--add-broker-node', 'b2', '--broker-public', '192.0.2.2'], 'MSH94'],
    ['standby', ['primary', '--state', state], 'MSH95'],
    [
      'standby',
      [
        'primary',
        '--state',
        state,
        '--host-dir',
        join(dir, 'host'),
        '--standby',
        'b2',
        '--standby-address',
        '10.99.0.2',
        '--listen',
        '10.99.0.1',
      ],
      'MSH94',
    ],
    ['standby', ['standby', '--state', state], 'MSH96'],
    [
      'standby',
      ['standby', '--state', state, '--name', 'b2', '--primary', 'db1', '--passfile', join(dir, 'pass')],
      'MSH97',
    ],
    ['standby', ['--state', state], 'MSH98'],
    ['broker_node', ['--broker-node', '--state', state], 'MSH99'],
    [
      'broker_node',
      [
        '--broker-node',
        '--state',
        state,
        '--join',
        'b1',
        '--hand-over',
        join(dir, 'h.json'),
        '--host-dir',
        join(dir, 'host'),
      ],
      'MSH94',
    ],
  ];
  for (const [program, argv, code] of cases) {
    // In a network namespace of its own: were a refusal gone (a mutant), the firewall the install
    // would load goes with the namespace, not onto the machine running the tests.
    const r = await runAny('unshare', ['--net', process.execPath, bundleJs(program), ...argv], {
      env: { PATH: process.env.PATH },
    });
    assert.is(r.code, 1, `${program} ${argv.join(' ')}: ${r.stderr}`);
    assert.ok(r.stderr.startsWith('bundle: '), r.stderr);
    coded(r.stderr, code);
  }
  assert.equal(readdirSync(dir), [], 'nothing was made');
});

B("a daemon's user that already exists as a login account is refused with MSHT0, and none is made", async () => {
  // nobody (65534) is past every system uid: an account the installer must not hand the signing key.
  const said = await rejectsCoded(ensureUsers({ serve: 'nobody', console: 'nobody', broker: 'nobody' }), 'MSHT0');
  assert.match(said, /user nobody already exists and is not a system user \(uid 65534\)/);
  await rejectsCoded(ensureUsers({ serve: 'root', console: 'root', broker: 'root' }), 'MSHT0');
});

B('a bundle step run without root is refused with MSH93 before it reads anything', async ({ dir }) => {
  // Not root: in a user namespace of its own the step runs as uid 65534 and
  // holds no capability on this machine, yet reads files as their owner does.
  // So it loads from a checkout under a directory others cannot enter (/root,
  // 0700), where a step run as nobody (runuser) could not load at all.
  const notRoot = ['--user', '--', process.execPath];
  const uid = await runAny('unshare', [...notRoot, '-e', 'process.stdout.write(String(process.getuid()))']);
  assert.is(uid.stdout, '65534', `the step runs as another user than root: ${uid.stderr}`);
  for (const argv of [
    [bundleJs('standby'), 'primary'],
    [bundleJs('install')],
    [bundleJs('broker_node'), '--broker-node', '--join', 'b1', '--hand-over', join(dir, 'h.json')],
  ]) {
    const r = await runAny('unshare', [...notRoot, ...argv], { env: { PATH: process.env.PATH } });
    assert.is(r.code, 1, r.stderr);
    coded(r.stderr, 'MSH93');
  }
});

B(
  'a hand-over file that is missing, readable by others, not one, or for another join is refused with its code',
  async ({ dir }) => {
    const file = join(dir, 'hand-over.json');
    const want = { first: 'first', node: 'second' };
    throwsCoded(() => readHandOver(file, want), 'MSHD0');
    const h: HandOver = {
      first: { name: 'first', erlNode: 'mesh-first@127.0.0.1', address: '127.0.0.1' },
      node: { name: 'second', address: '127.0.0.2', public: '127.0.0.1' },
      ports: { amqps: 1, amqp: 2, mgmt: 3, epmd: 4, dist: 5 },
      cookie: 'c',
      adminPassword: 'p',
      cert: 'c',
      key: 'k',
    };
    await writeHandOver(file, h);
    assert.is(readHandOver(file, want).cookie, 'c', 'the good file is read');
    chmodSync(file, 0o644);
    throwsCoded(() => readHandOver(file, want), 'MSHD1');
    writeFileSync(file, 'not json', { mode: 0o600 });
    chmodSync(file, 0o600);
    throwsCoded(() => readHandOver(file, want), 'MSHD2');
    writeFileSync(file, JSON.stringify({ ...h, cookie: '' }));
    throwsCoded(() => readHandOver(file, want), 'MSHD2');
    await writeHandOver(file, h);
    assert.match(
      throwsCoded(() => readHandOver(file, { ...want, first: 'hub' }), 'MSHD3'),
      /give --join first/,
    );
    throwsCoded(() => readHandOver(file, { ...want, node: 'web1' }), 'MSHD4');
    // Its node's overlay address is where Erlang's distribution listens: IPv4 only.
    await writeHandOver(file, { ...h, node: { ...h.node, address: 'fe80::2' } });
    throwsCoded(() => readHandOver(file, want), 'MSHD8');
    rmSync(file);
  },
);

B(
  'adding the first node as a broker node of its own cluster, a standby name no slot can take, and a clone over a cluster are refused',
  async ({ dir }) => {
    await rejectsCoded(handOverBroker({} as Options, 'b1', 'b1', '192.0.2.1'), 'MSHD5');
    throwsCoded(() => standbySlot('db-2'), 'MSHD6');
    const pgData = join(dir, 'data');
    mkdirSync(pgData);
    writeFileSync(join(pgData, 'PG_VERSION'), '15\n');
    await rejectsCoded(
      cloneStandby({
        pgData,
        primaryHost: '127.0.0.1',
        primaryPort: 1,
        passfile: join(dir, 'pass'),
        standby: 'b2',
        pgBasebackup: '/bin/false',
      }),
      'MSHD7',
    );
    rmSync(pgData, { recursive: true });
  },
);

B(
  "the primary half's opening to its standby is a module entry the parser takes (the refusal would stop the step)",
  () => {
    const [o] = replicationOpening(5433, 'mesh-store-standby') as unknown as Record<string, unknown>[];
    assert.equal(
      { kind: o?.kind, port: o?.port, from: o?.from },
      { kind: 'opening', port: 5433, from: 'module:mesh-store-standby' },
    );
  },
);

B('a broker node named outside the node names is refused with MSHD9 before it is marked clustered', async ({ dir }) => {
  const state = join(dir, 'clustered');
  await rejectsCoded(markClustered({ state } as Options, '10.99.0.2', 'Hub_1'), 'MSHD9');
  assert.not.ok(existsSync(state), 'nothing was written');
});

B(
  'install.js with no --public on a machine with no address off loopback is refused with MSHL0, and makes nothing',
  async ({ dir }) => {
    const state = join(dir, 'lonely');
    // A network namespace of its own holds loopback alone.
    const r = await runAny('unshare', ['-n', process.execPath, bundleJs('install'), '--state', state, '--name', 'b1'], {
      env: { PATH: process.env.PATH },
    });
    assert.is(r.code, 1, r.stderr);
    coded(r.stderr, 'MSHL0');
    assert.not.ok(existsSync(state), 'nothing was made');
  },
);

B(
  'a broker node added where no first node was installed (MSHL1), or that has no overlay address (MSHL2), is refused',
  async ({ dir }) => {
    const o = { state: join(dir, 'first'), home: join(dir, 'first', 'home') } as Options;
    const env = { ...process.env };
    const store = await freshStore();
    try {
      await rejectsCoded(overlayAddress(o, 'b2'), 'MSHL1');
      // A first node's store, where b2 was never enrolled.
      mkdirSync(join(o.state, 'store'), { recursive: true });
      writeFileSync(paths(o).storeFile('overlay'), store.url('overlay'), { mode: 0o600 });
      assert.match(await rejectsCoded(overlayAddress(o, 'b2'), 'MSHL2'), /b2 has no overlay address: enrol it first/);
    } finally {
      await store.drop();
      rmSync(o.state, { recursive: true, force: true });
      for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
      Object.assign(process.env, env);
    }
  },
);

B.run();
