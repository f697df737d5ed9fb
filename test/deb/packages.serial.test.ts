// The Debian packages (`npm run deb`, bundle/deb/build.sh): both built from
// one staged tree, lintian finds no error in either, and inside a real Debian
// 12 root (the booted suite's cached tree, copied, never booted: dpkg and apt
// run in it under systemd-nspawn, with no network, so the packages install
// from what Debian 12 already holds) mesh-host installs with its unit
// enabled; the unit's own command (mesh-host supervise) starts the version
// the mesh made current and takes back one that does not come up (V2); an
// upgrade keeps its identity and makes its own agent the one that runs;
// `remove` keeps the identity and `purge` takes it away. The identity is a stand-in file: enrolling needs a mesh, and the
// packages' scripts never read it.
// Serial: it copies a whole Debian tree and builds twice.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ensureRootfs } from '../../lab/machine/rootfs.js';
import { runAny, type Ran } from '../../src/sys/proc.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const test = suite('debian packages');
const work = mkdtempSync(join(tmpdir(), 'mesh-deb-'));
const out = join(work, 'deb');
const root = join(work, 'root');
const say = (l: string) => console.log(l);
const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
// Higher than `version` as dpkg compares them: the same tree, built again as a newer package.
const newer = `${version}+1`;
const arch = execFileSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).trim();
const hostDeb = (v: string) => `mesh-host_${v}_${arch}.deb`;
const meshDeb = (v: string) => `mesh_${v}_all.deb`;
const FAKE_IDENTITY = '{"v":1,"name":"stand-in","note":"the packages must keep this file as it is"}\n';

test.before(async () => {
  for (const tool of ['dpkg-deb', 'dpkg-shlibdeps', 'lintian', 'systemd-nspawn', 'mmdebstrap'])
    if ((await runAny('sh', ['-c', `command -v ${tool}`])).code !== 0)
      throw new Error(`${tool} is missing: run bash bundle/ensure-packages.sh test as root`);
  const stage = join(work, 'stage');
  // Twenty minutes each at most: a build on a busy machine.
  execFileSync('bash', [join(REPO, 'bundle/stage.sh'), stage], { stdio: 'pipe', timeout: 1_200_000 });
  for (const v of [version, newer])
    execFileSync('bash', [join(REPO, 'bundle/deb/build.sh'), '--tree', join(stage, 'mesh'), '--version', v, out], {
      stdio: 'pipe',
      timeout: 1_200_000,
    });
  const tree = await ensureRootfs(say);
  const cp = await runAny('cp', ['-a', '--reflink=auto', tree, root]);
  if (cp.code !== 0) throw new Error(`copying ${tree} failed: ${cp.stderr.trim()}`);
});

test.after(() => {
  if (!process.env.MESH_TEST_KEEP) rmSync(work, { recursive: true, force: true });
});

/** ARGV inside the Debian root, not booted and with no network; the packages are at /mnt/deb. Five minutes at most. */
function inRoot(argv: string[]): Promise<Ran> {
  const args = [
    '--register=no',
    '--keep-unit',
    '-q',
    '--private-network',
    '-D',
    root,
    `--bind-ro=${out}:/mnt/deb`,
    '--setenv=DEBIAN_FRONTEND=noninteractive',
    '--',
    ...argv,
  ];
  return runAny('systemd-nspawn', args, { timeoutMs: 300_000 });
}

async function ok(argv: string[]): Promise<string> {
  const r = await inRoot(argv);
  if (r.code !== 0)
    throw new Error(`${argv.join(' ')} in the Debian root exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
  return r.stdout;
}

const installed = async (pkg: string) =>
  (await inRoot(['dpkg-query', '-W', '-f', '${Status} ${Version}', pkg])).stdout.trim();
const enabled = async () => (await inRoot(['systemctl', 'is-enabled', 'mesh-host.service'])).stdout.trim();
const identity = join(root, 'var/lib/mesh-host/identity.json');
const agentRoot = join(root, 'var/lib/mesh-host/agent');
/** The package's unit file, as the package holds it. */
let unitText = '';

/** A mesh upgrade to VERSION as the host's agent resource leaves it: unpacked, made current, not yet proven. */
function meshUpgraded(v: string, deadline: number): void {
  const dir = join(agentRoot, 'versions', v);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  execFileSync('dpkg-deb', ['-x', join(out, hostDeb(v)), dir]);
  rmSync(join(agentRoot, 'current'), { force: true });
  symlinkSync(join('versions', v), join(agentRoot, 'current'));
  const pending = { version: v, sha256: 'a'.repeat(64), previous: null, deadline, starts: 0 };
  writeFileSync(join(agentRoot, 'pending.json'), JSON.stringify(pending), { mode: 0o600 });
}

/** The unit's ExecStart, with its Environment, as one argv for env(1). */
function unitCommand(): string[] {
  const words = (line: string) => [...line.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const env = unitText.split('\n').filter((l) => l.startsWith('Environment='));
  const exec = unitText.split('\n').find((l) => l.startsWith('ExecStart='))!;
  return ['/usr/bin/env', ...env.flatMap(words), ...words(exec)];
}

test('both packages are built, named as Debian names them, from one tree split in two', () => {
  const debs = readdirSync(out).sort();
  assert.equal(debs, [hostDeb(newer), hostDeb(version), meshDeb(newer), meshDeb(version)].sort());
  const list = (deb: string) => execFileSync('dpkg-deb', ['-c', join(out, deb)], { encoding: 'utf8' });
  const host = list(hostDeb(version));
  const mesh = list(meshDeb(version));
  for (const f of ['./usr/lib/mesh/node/bin/node', './usr/lib/mesh/dist/host/cli.js', './usr/bin/mesh-host'])
    assert.ok(host.includes(f), `mesh-host has ${f}`);
  assert.ok(host.includes('./lib/systemd/system/mesh-host.service'), 'mesh-host has its unit');
  for (const f of [
    './usr/lib/mesh/bundle/install.sh',
    './usr/lib/mesh/sql/',
    './usr/lib/mesh/BUNDLE',
    './usr/bin/mesh',
  ])
    assert.ok(mesh.includes(f), `mesh has ${f}`);
  const files = (l: string) =>
    new Set(
      l
        .split('\n')
        .filter((x) => x && !x.startsWith('d'))
        .map((x) => x.split(/\s+/)[5]),
    );
  const both = [...files(host)].filter((f) => files(mesh).has(f) && !f!.startsWith('./usr/share/'));
  assert.equal(both, [], 'no file is in both packages');
  const control = execFileSync('dpkg-deb', ['-f', join(out, meshDeb(version)), 'Depends'], { encoding: 'utf8' });
  assert.ok(control.includes(`mesh-host (= ${version})`), control);
});

test("mesh-host's unit is the first node's agent unit, hardened the same way, on the packaged runtime", () => {
  const unit = execFileSync('dpkg-deb', ['--fsys-tarfile', join(out, hostDeb(version))], { maxBuffer: 1 << 30 });
  const text = execFileSync('tar', ['-xO', './lib/systemd/system/mesh-host.service'], {
    input: unit,
    encoding: 'utf8',
  });
  // V2: the supervised path, as on every node: the guard before each start, the agent from the package root.
  assert.match(text, 'ExecStart="/usr/lib/mesh/node/bin/node" "/usr/lib/mesh/dist/host/cli.js" "supervise"');
  assert.match(text, 'Environment="MESH_HOST_DIR=/var/lib/mesh-host"');
  for (const line of [
    'ProtectHome=read-only',
    'PrivateTmp=yes',
    'Type=notify',
    'NotifyAccess=all',
    'KillMode=mixed',
    'WantedBy=multi-user.target',
  ])
    assert.ok(text.includes(`\n${line}\n`), line);
  unitText = text;
  assert.match(text, /\nCapabilityBoundingSet=CAP_NET_ADMIN /);
});

test('lintian reports no error on either package', async () => {
  for (const deb of [hostDeb(version), meshDeb(version)]) {
    const r = await runAny('lintian', ['--no-tag-display-limit', '--fail-on', 'error', join(out, deb)], {
      timeoutMs: 600_000,
    });
    const errors = r.stdout.split('\n').filter((l) => l.startsWith('E:'));
    assert.equal(errors, [], `${deb}: ${r.stdout}${r.stderr}`);
    assert.is(r.code, 0, `${deb}: lintian exited ${r.code}: ${r.stdout}${r.stderr}`);
  }
});

test('mesh-host installs with apt from the file alone, its unit enabled, /var/lib/mesh-host 0700', async () => {
  await ok(['apt-get', 'install', '-y', '--no-install-recommends', `/mnt/deb/${hostDeb(version)}`]);
  assert.is(await installed('mesh-host'), `install ok installed ${version}`);
  assert.is(await enabled(), 'enabled');
  assert.ok(lstatSync(join(root, 'etc/systemd/system/multi-user.target.wants/mesh-host.service')).isSymbolicLink());
  assert.is(statSync(join(root, 'var/lib/mesh-host')).mode & 0o777, 0o700);
  // The packaged runtime runs on Debian 12's own libraries, and the command on PATH reaches it.
  const help = await ok(['mesh-host', '--help']);
  assert.match(help, 'mesh-host enrol');
  // What enrolment would have written.
  writeFileSync(identity, FAKE_IDENTITY, { mode: 0o600 });
});

test("V2: the unit's own command starts the version the mesh made current, and takes back one that does not come up", async () => {
  // The stand-in identity makes every agent end at once (it is no identity): the new one ends three times.
  meshUpgraded(newer, Date.now() + 3_600_000);
  const log = '/var/lib/mesh-host/supervise.log';
  const cmd = unitCommand()
    .map((w) => `'${w}'`)
    .join(' ');
  // Run as systemd would, until the installed agent starts again after the guard's switch back (a minute at most).
  const r = await inRoot([
    '/bin/sh',
    '-c',
    `${cmd} >${log} 2>&1 & p=$!; i=0; until grep -q 'starting the agent from /usr/lib/mesh/' ${log} || [ $i -ge 600 ]; do sleep 0.1; i=$((i+1)); done; kill $p; wait $p; cat ${log}`,
  ]);
  const said = r.stdout;
  const fromNew = `supervise: starting the agent from /var/lib/mesh-host/agent/versions/${newer}/usr/lib/mesh/dist/host/cli.js`;
  assert.ok(said.includes(fromNew), `the current version was not started:\n${said}${r.stderr}`);
  assert.match(said, `guard: mesh-host ${newer} it did not stay up: started 3 times without reporting: switched back`);
  assert.ok(
    said.indexOf('supervise: starting the agent from /usr/lib/mesh/dist/host/cli.js') > said.lastIndexOf(fromNew),
    `the installed agent was not started after the switch back:\n${said}`,
  );
  assert.not.ok(existsSync(join(agentRoot, 'current')), 'current still names the version that did not come up');
  assert.is((JSON.parse(readFileSync(join(agentRoot, 'failed.json'), 'utf8')) as { version: string }).version, newer);
});

test('an upgrade to a newer package keeps the identity and the unit enabled, and its agent is the one that runs', async () => {
  // A version the mesh made current and has not yet proven: the operator's package takes its place.
  meshUpgraded(version, Date.now() + 3_600_000);
  await ok(['apt-get', 'install', '-y', '--no-install-recommends', `/mnt/deb/${hostDeb(newer)}`]);
  assert.is(await installed('mesh-host'), `install ok installed ${newer}`);
  assert.is(readFileSync(identity, 'utf8'), FAKE_IDENTITY);
  assert.is(await enabled(), 'enabled');
  assert.not.ok(existsSync(join(agentRoot, 'current')), 'a version the mesh unpacked would start instead');
  assert.not.ok(
    existsSync(join(agentRoot, 'pending.json')),
    "the mesh's unproven upgrade would be switched back over it",
  );
  assert.ok(existsSync(join(agentRoot, 'versions', version)), 'what the mesh unpacked stays');
});

test('the control plane installs beside it, from the file alone, with its installer and mesh on PATH', async () => {
  await ok(['apt-get', 'install', '-y', '--no-install-recommends', `/mnt/deb/${meshDeb(newer)}`]);
  assert.is(await installed('mesh'), `install ok installed ${newer}`);
  assert.match(await ok(['bash', '/usr/lib/mesh/bundle/install.sh', '--help']), '--public HOST');
  assert.match(await ok(['mesh', '--help']), 'mesh <command>');
  await ok(['apt-get', 'purge', '-y', 'mesh']);
  assert.is(await installed('mesh-host'), `install ok installed ${newer}`);
  assert.is(readFileSync(identity, 'utf8'), FAKE_IDENTITY);
});

test('remove takes the program away and keeps the identity', async () => {
  await ok(['apt-get', 'remove', '-y', 'mesh-host']);
  // Removed, its maintainer scripts kept for the purge: dpkg's "config-files".
  assert.match(await installed('mesh-host'), /^deinstall ok config-files /);
  assert.not.ok(existsSync(join(root, 'usr/lib/mesh/node/bin/node')), 'the runtime went with the package');
  assert.not.ok(existsSync(join(root, 'usr/bin/mesh-host')));
  assert.is(readFileSync(identity, 'utf8'), FAKE_IDENTITY);
});

test('purge removes /var/lib/mesh-host and every trace of the unit', async () => {
  await ok(['apt-get', 'purge', '-y', 'mesh-host']);
  // Purged: dpkg knows it no more (dpkg-query fails), or knows it as not installed.
  const q = await inRoot(['dpkg-query', '-W', '-f', '${Status}', 'mesh-host']);
  assert.ok(q.code !== 0 || q.stdout.includes('not-installed'), `mesh-host is ${q.stdout}`);
  assert.not.ok(existsSync(join(root, 'var/lib/mesh-host')), '/var/lib/mesh-host is gone');
  assert.not.ok(existsSync(join(root, 'etc/systemd/system/multi-user.target.wants/mesh-host.service')));
  let masked = false;
  try {
    masked = lstatSync(join(root, 'etc/systemd/system/mesh-host.service')).isSymbolicLink();
  } catch {
    /* absent: as it should be */
  }
  assert.not.ok(masked, 'no mask of mesh-host.service is left');
});

test.run();
