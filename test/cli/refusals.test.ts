// Bad input to the real CLI is refused with its code, before any store or
// broker is asked (these runs have neither): the sentence names the remedy
// and ends with the code, and with --json the refusal is a JSON document a
// program reads by its code, as a SQL refusal is (src/sys/errors.ts).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { runAny } from '../../src/sys/proc.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runCli, MESH, MESH_HOST } from '../harness/mesh.js';
import { fileURLToPath } from 'node:url';
import { codeEntry } from '../../src/sys/errors.js';
import { waitLimit } from '../../src/store/wait.js';

const MESH_BUILDER = fileURLToPath(new URL('../../src/builder/cli.js', import.meta.url));
const C = suite<{ dir: string; env: NodeJS.ProcessEnv }>('the CLI refuses bad input with its code');

C.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-refusals-'));
  // No store, no broker, no home: a refusal that needed one would fail otherwise, and say so.
  ctx.env = { PATH: process.env.PATH, MESH_HOME: join(ctx.dir, 'home') };
  writeFileSync(join(ctx.dir, 'not-json'), '# not JSON\n');
  writeFileSync(join(ctx.dir, 'no-resources.json'), '{"name": "m"}\n');
  writeFileSync(join(ctx.dir, 'PG_VERSION'), '15\n');
  // Module files, each breaking one rule of the resource parser the host runs too.
  for (const [file, resources] of Object.entries(MODULES))
    writeFileSync(join(ctx.dir, file), JSON.stringify({ name: 'm', resources }));
});

const dir = { kind: 'directory', path: '/srv/m', mode: '0755' };
const MODULES: Record<string, unknown[]> = {
  'kind.json': [{ kind: 'cron', path: '/etc/cron.d/m' }],
  'composed.json': [{ kind: 'firewall', name: 'mesh', rules: [] }],
  'field.json': [{ ...dir, owner: 'root' }],
  'missing.json': [{ kind: 'directory', path: '/srv/m' }],
  'value.json': [{ ...dir, mode: 'rwxr-xr-x' }],
  'path.json': [{ ...dir, path: '/srv/../etc' }],
  'id.json': [{ ...dir, id: 'directory:/srv/other' }],
  'twice.json': [dir, dir],
  'unit.json': [{ kind: 'service', name: 'serve', exec: ['/bin/true'] }],
};
C.after(({ dir }) => {
  rmSync(dir, { recursive: true, force: true });
});

// [what is refused, argv (D is the suite's temp dir), its code]
const CASES: [string, string[], string][] = [
  ['a node name that could widen a permission pattern', ['token', 'issue', 'a.*'], 'MSHF2'],
  ['a --ttl that is not a duration', ['token', 'issue', 'x', '--ttl', '1w'], 'MSH15'],
  ['a --dialable that is not HOST:PORT', ['token', 'issue', 'x', '--dialable', 'hub1'], 'MSH16'],
  ['a drift threshold of 0', ['drift', 'fighting-after', '0'], 'MSH17'],
  ['a broker without --fingerprint', ['broker', 'add', 'mq2.example.net:5671'], 'MSH19'],
  ['--tls-cert without --tls-key', ['console', '--tls-cert', 'D/cert.pem'], 'MSHF0'],
  ['a --listen that is not ADDRESS:PORT', ['console', '--listen', 'localhost'], 'MSHF1'],
  ['declare with neither a node nor --all', ['declare'], 'MSHA0'],
  ['declare with both a node and --all', ['declare', 'a1', '--all'], 'MSHA0'],
  ['plan with both a node and --all', ['plan', 'a1', '--all'], 'MSHA0'],
  ['a source --git that starts with a dash', ['module', 'source', 'm', '--git=-x'], 'MSH32'],
  ['a source --path that climbs out', ['module', 'source', 'm', '--git', 'g', '--path', '../x'], 'MSH33'],
  ['a source --ref that starts with a dash', ['module', 'source', 'm', '--git', 'g', '--ref=-x'], 'MSH34'],
  ['a source --image without a repository', ['module', 'source', 'm', '--git', 'g', '--image', 'reg:5000'], 'MSHU7'],
  ['a build --ref that starts with a dash', ['build', 'm', '--ref=-x'], 'MSH34'],
  ['a build --timeout of 0s', ['build', 'm', '--timeout', '0s'], 'MSH35'],
  ['a module file that is not JSON', ['module', 'add', 'D/not-json'], 'MSH36'],
  ['a module file without resources', ['module', 'add', 'D/no-resources.json'], 'MSH37'],
  ['a module resource of a kind no module carries', ['module', 'add', 'D/kind.json'], 'MSHM0'],
  ['a module carrying a firewall the mesh composes', ['module', 'add', 'D/composed.json'], 'MSH31'],
  ['a module resource with a field its kind lacks', ['module', 'add', 'D/field.json'], 'MSHM1'],
  ['a module resource without its mode', ['module', 'add', 'D/missing.json'], 'MSHM2'],
  ['a module resource whose mode is not octal', ['module', 'add', 'D/value.json'], 'MSHM3'],
  ['a module resource whose path climbs with ".."', ['module', 'add', 'D/path.json'], 'MSHM7'],
  ["a module resource whose id is another path's", ['module', 'add', 'D/id.json'], 'MSHM4'],
  ['a module listing one directory twice', ['module', 'add', 'D/twice.json'], 'MSHM5'],
  ["a module service named as the bundle's own unit", ['module', 'add', 'D/unit.json'], 'MSHM6'],
  [
    'an accepted secret whose value is empty',
    ['secret', 'accept', 's', '--node', 'a1', '--path', '/etc/s', '--from', '/dev/null'],
    'MSH46',
  ],
  ['a secret made with no holder', ['secret', 'make', 's', '--path', '/etc/s'], 'MSH47'],
  ['a secret made with no --path', ['secret', 'make', 's', '--node', 'a1'], 'MSH48'],
  ['a secret accepted with no --path', ['secret', 'accept', 's', '--node', 'a1'], 'MSH48'],
  ['a provision offered without --kind', ['provision', 'offer', 'p', '--provider', 'm'], 'MSHB0'],
  [
    'a postgres provision without --host',
    ['provision', 'offer', 'p', '--kind', 'postgres', '--provider', 'm'],
    'MSHB1',
  ],
  ['an overlay address that is not IPv4', ['overlay', 'address', 'a1', '10.99.0'], 'MSH67'],
  ['an ssh port of 0', ['firewall', 'ssh-port', '0'], 'MSH65'],
  ['a history --limit of 0', ['log', '--limit', '0'], 'MSH73'],
  ['a promote of a folder with no cluster', ['store', 'promote', '--data', 'D/none'], 'MSHE0'],
  ['a promote of a cluster that is not a standby', ['store', 'promote', '--data', 'D'], 'MSHE1'],
];

for (const [what, argv, code] of CASES) {
  C(`${what} is refused with ${code}, naming the remedy`, async ({ dir, env }) => {
    const r = await runCli(
      MESH,
      argv.map((a) => a.replace(/^D\b/, dir).replace(/=D\b/, `=${dir}`)),
      env,
    );
    assert.is(r.code, 1, r.stderr);
    assert.ok(r.stderr.startsWith('mesh: '), r.stderr);
    // What was refused comes first: a module file's refusal once lost it to the remedy ("mesh: : write the field...").
    assert.match(r.stderr, /^mesh: [^:\s]/, `says what it refused: ${r.stderr}`);
    assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), `${code} ends: ${r.stderr}`);
    assert.ok(
      r.stderr.includes(`: ${r.stderr.split(': ').at(-1)!.replace(` (${code}).\n`, '')}`),
      'a remedy after the refusal',
    );
    assert.is(r.stdout, '', 'nothing printed as if it were done');
  });
}

// The control plane's home (MESH_HOME), read before the store or the broker is asked: [what, its files (mode 0600 unless given), argv, code].
const FP = Array(32).fill('AB').join(':');
const HOMES: [string, Record<string, [string, number?]>, string[], string][] = [
  ['a home without broker.json', {}, ['broker', 'add', 'mq2.example.net:5671', '--fingerprint', FP], 'MSHH6'],
  [
    'a broker.json others can read',
    { 'broker.json': ['{}', 0o644] },
    ['broker', 'add', 'mq2.example.net:5671', '--fingerprint', FP],
    'MSHH7',
  ],
  [
    'a broker.json that is not JSON',
    { 'broker.json': ['{"amqp": '] },
    ['broker', 'add', 'mq2.example.net:5671', '--fingerprint', FP],
    'MSHH8',
  ],
  ['a signing.key that is not a 32-byte key', { 'broker.json': ['{}'], 'signing.key': ['AAAA\n'] }, ['serve'], 'MSHH9'],
];

for (const [what, files, argv, code] of HOMES) {
  C(`${what} is refused with ${code}, before any store or broker is asked`, async ({ dir }) => {
    const home = join(dir, `home-${code}`);
    mkdirSync(home, { recursive: true, mode: 0o700 });
    for (const [name, [text, mode]] of Object.entries(files)) {
      writeFileSync(join(home, name), text);
      chmodSync(join(home, name), mode ?? 0o600);
    }
    const r = await runCli(MESH, argv, { PATH: process.env.PATH, MESH_HOME: home });
    assert.is(r.code, 1, r.stderr);
    assert.ok(r.stderr.startsWith(`mesh: ${home}/`), r.stderr);
    assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), r.stderr);
  });
}

// mesh-builder's settings, refused once it has its credential and before it connects (no broker here).
for (const [what, env, code] of [
  ['a registry that is a URL', { MESH_BUILDER_REGISTRY: 'http://127.0.0.1:5000/v2' }, 'MSHM8'],
  ['a pull policy podman has not', { MESH_BUILDER_PULL: 'sometimes' }, 'MSHM9'],
] as const) {
  C(`mesh-builder run with ${what} is refused with ${code}`, async ({ dir }) => {
    const builder = join(dir, `builder-${code}`);
    mkdirSync(builder, { recursive: true, mode: 0o700 });
    writeFileSync(
      join(builder, 'credential.json'),
      JSON.stringify({ v: 1, name: 'b1', broker: {}, password: 'p', requester: 'r' }),
      { mode: 0o600 },
    );
    // Bounded: with the setting taken, the builder would go on to dial a broker that is not there, for ever.
    const r = await runAny(process.execPath, [MESH_BUILDER, 'run'], {
      env: { PATH: process.env.PATH, MESH_BUILDER_DIR: builder, ...env },
      timeoutMs: 60_000,
    });
    assert.is(r.code, 1, r.stderr);
    assert.ok(r.stderr.startsWith('mesh-builder: MESH_BUILDER_'), r.stderr);
    assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), r.stderr);
  });
}

C('a store wait that is not seconds is refused with MSHE2', () => {
  assert.throws(
    () => waitLimit({ MESH_STORE_WAIT_SECONDS: 'long' }),
    (e: Error) => e.message.endsWith('(MSHE2).'),
  );
});

C('mesh-host refuses a command line with a code too: overlay take with no --tunnel is MSH80', async ({ dir }) => {
  const r = await runCli(MESH_HOST, ['overlay', 'take', '--json'], { PATH: process.env.PATH, MESH_HOST_DIR: dir });
  assert.is(r.code, 1, r.stderr);
  assert.is(r.stderr, 'mesh-host: no tunnel was named: name the tunnel to take over: --tunnel IFACE (MSH80).\n');
  assert.is((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'MSH80');
});

C('mesh-host overlay take on a machine not enrolled is not taken, with MSHG6', async ({ dir }) => {
  const r = await runCli(MESH_HOST, ['overlay', 'take', '--tunnel', 'wg0'], {
    PATH: process.env.PATH,
    MESH_HOST_DIR: join(dir, 'none'),
  });
  assert.is(r.code, 2, r.stderr);
  assert.is(
    r.stdout,
    'not taken: this machine is not enrolled: run echo TOKEN | mesh-host enrol first, then take wg0 over (MSHG6).\n',
  );
});

C(
  'mesh-host overlay take of a tunnel that is not up is not taken, with MSHK1, and nothing is written but its account',
  async ({ dir }) => {
    const host = join(dir, 'enrolled');
    mkdirSync(host, { recursive: true, mode: 0o700 });
    const k = () => randomBytes(32).toString('base64');
    const broker = { host: 'mq1.example.net', port: 5671, fingerprint: Array(32).fill('AB').join(':') };
    writeFileSync(
      join(host, 'identity.json'),
      JSON.stringify({
        v: 1,
        name: 'web1',
        mesh: '0123456789abcdef',
        signingKey: k(),
        broker: { ...broker, vhost: '/', user: 'node-web1' },
        brokers: [broker],
        password: 'p',
        keys: { identity: k(), overlay: k(), sealing: k() },
      }),
      { mode: 0o600 },
    );
    const r = await runCli(MESH_HOST, ['overlay', 'take', '--tunnel', 'wgnone9'], {
      PATH: process.env.PATH,
      MESH_HOST_DIR: host,
    });
    assert.is(r.code, 2, r.stderr);
    assert.match(r.stdout, /^not taken: no interface wgnone9 is up: start it \(wg-quick up wgnone9\).* \(MSHK1\)\.\n/);
    assert.equal(readdirSync(host).sort(), ['identity.json', 'overlay-take.json']);
  },
);

C('mesh-host enrol refuses what is not a mesh token with MSHF3, and writes no identity', async ({ dir }) => {
  const r = await runCli(
    MESH_HOST,
    ['enrol'],
    {
      PATH: process.env.PATH,
      MESH_HOST_DIR: join(dir, 'host'),
    },
    'mesh1.not-a-token',
  );
  assert.is(r.code, 1, r.stderr);
  assert.is(
    r.stderr,
    'mesh-host: this is not a mesh token: give the whole token `mesh token issue NAME` printed, on standard input (MSHF3).\n',
  );
});

C(
  'with --json a refusal is also one JSON document on stdout: its code, context, message and remedy',
  async ({ env }) => {
    const r = await runCli(MESH, ['token', 'issue', 'x', '--ttl', '1w', '--json'], env);
    assert.is(r.code, 1);
    const { error } = JSON.parse(r.stdout) as {
      error: { code: string; context: string; message: string; remedy: string };
    };
    assert.equal(error, {
      code: 'MSH15',
      context: codeEntry('MSH15')!.context,
      message: '--ttl "1w" is not a duration: use a number and s, m, h or d (e.g. 30m, 24h) (MSH15).',
      remedy: 'use a number and s, m, h or d (e.g. 30m, 24h)',
    });
    assert.is(r.stderr, `mesh: ${error.message}\n`, 'the person reads the same sentence');
  },
);

C.run();
