// Refusals made in TypeScript once the store has answered: a node the mesh
// has not enrolled, and a declaration over its size limit, each with its
// code, and nothing changed. Nodes are rows (nothing here crosses the broker).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { run } from '../../src/sys/proc.js';
import { join } from 'node:path';
import { freshMesh, type Mesh, type CliResult } from '../harness/mesh.js';
import { insertNodes } from '../bench/lib.js';
import { addModule } from '../declare/helpers.js';
import { LIMITS } from '../../src/wire/envelope.js';

const S = suite<{ mesh: Mesh }>('refusals after the store answered');
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, `expected ${code}, got exit ${r.code}: ${r.stdout}`);
  assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), r.stderr);
  return r.stderr;
};

S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await insertNodes(ctx.mesh, 1);
});
S.after(async (ctx) => {
  await ctx.mesh?.stop();
});

S('a node that is not enrolled is refused with MSH18 by every command that names one', async ({ mesh }) => {
  assert.match(
    refused(await mesh.cli(['firewall', 'show', 'ghost']), 'MSH18'),
    /no enrolled node named ghost: see mesh node list/,
  );
  assert.match(refused(await mesh.cli(['plan', 'ghost']), 'MSH18'), /no enrolled node named ghost/);
  // Only unknown names: nothing to declare is no excuse to succeed in silence.
  assert.match(refused(await mesh.cli(['declare', 'ghost']), 'MSH18'), /no enrolled node named ghost/);
  assert.match(refused(await mesh.cli(['declare', 'ghost', 'b000001']), 'MSH18'), /no enrolled node named ghost/);
  assert.match(refused(await mesh.cli(['node', 'retire', 'ghost']), 'MSH18'), /no node named ghost/);
  const from = join(mesh.home, 'value');
  writeFileSync(from, 'v\n', { mode: 0o600 });
  assert.match(
    refused(await mesh.cli(['secret', 'accept', 's', '--node', 'ghost', '--path', '/etc/s', '--from', from]), 'MSH18'),
    /nothing was stored/,
  );
  const [row] = await mesh.store.admin`select (select count(*) from secret.secret)::int as secrets`;
  assert.is(row!.secrets, 0, 'nothing was stored');
});

S(
  'a secret placed on a node with no queue on the broker is refused with MSH49, and nothing is stored',
  async ({ mesh }) => {
    // b000001 is a row only: enrolled, with a sealing key, and no queue to be told on.
    const from = join(mesh.home, 'value');
    writeFileSync(from, 'v\n', { mode: 0o600 });
    for (const argv of [
      ['secret', 'accept', 's', '--from', from],
      ['secret', 'make', 's'],
    ]) {
      assert.match(
        refused(await mesh.cli([...argv, '--node', 'b000001', '--path', '/etc/s']), 'MSH49'),
        /b000001 has no queue on the broker: nothing was stored/,
      );
    }
    const [row] = await mesh.store.admin`select (select count(*) from secret.secret)::int as secrets`;
    assert.is(row!.secrets, 0, 'nothing was stored');
  },
);

S(
  'a secret remade for a holder with no queue on the broker is refused with MSHQ0, and its generation stays',
  async ({ mesh }) => {
    // Sealed to a key b000001 no longer has (S3): stale, so remake takes it up, and finds no queue to tell.
    await mesh.store.admin`insert into secret.secret (name, origin, path) values ('q', 'made', '/etc/q')`;
    await mesh.store
      .admin`insert into secret.sealed (secret, holder, sealed_to, blob, generation) values ('q', 'b000001', ${Buffer.alloc(32)}, 'AAAA', 1)`;
    try {
      const r = await mesh.cli(['secret', 'remake', '--json']);
      assert.is(r.code, 4, r.stderr);
      const refusedOne = (JSON.parse(r.stdout) as { refused: { secret: string; reason: string }[] }).refused;
      assert.is(refusedOne.length, 1, r.stdout);
      assert.is(refusedOne[0]!.secret, 'q');
      assert.match(
        refusedOne[0]!.reason,
        /^cannot resolve b000001: no queue on the broker: nothing was changed.* \(MSHQ0\)\.$/,
      );
      const [row] = await mesh.store.admin`select generation from secret.secret where name = 'q'`;
      assert.is(row!.generation, 1, 'nothing was made again');
    } finally {
      await mesh.store.admin`delete from secret.secret where name = 'q'`;
    }
  },
);

S(
  'a source whose ref its repository does not have is refused with MSHP7 when mesh module list --refresh looks, and nothing is recorded',
  async ({ mesh }) => {
    // A real repository, one commit on main, looked at with git ls-remote as any other.
    const repo = join(mesh.home, 'repo');
    const git = (...a: string[]) =>
      run('git', ['-C', repo, ...a], {
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 't',
          GIT_AUTHOR_EMAIL: 't@t',
          GIT_COMMITTER_NAME: 't',
          GIT_COMMITTER_EMAIL: 't@t',
        },
      });
    mkdirSync(repo);
    await git('init', '-q', '-b', 'main');
    await git('commit', '-q', '--allow-empty', '-m', 'one');
    await addModule(mesh, 'src', []);
    const set = await mesh.cli(['module', 'source', 'src', '--git', repo, '--ref', 'nosuch']);
    assert.is(set.code, 0, set.stderr);
    const r = await mesh.cli(['module', 'list', '--refresh']);
    assert.is(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `could not look at the source of src \\(${repo}/? has no branch or tag nosuch: give a ref the repository has.* \\(MSHP7\\)\\.\\)`,
      ),
    );
    const [row] = await mesh.store
      .admin`select count(*)::int as n from catalogue.source where module = 'src' and head_commit is not null`;
    assert.is(row!.n, 0, 'no head was recorded');
  },
);

S(
  'a declaration over the size limit is refused with MSHA1, naming the node, and nothing is recorded',
  async ({ mesh }) => {
    // Base64 grows a file by a third: this one file alone puts the declaration over the limit.
    const big = Buffer.alloc(Math.ceil(LIMITS.declaration * 0.8), 0x61).toString('base64');
    await addModule(mesh, 'big', [{ kind: 'file', path: '/srv/big', content: big, mode: '0644' }]);
    // The assignment declares at once, so it is refused there; so is any later declare.
    for (const argv of [
      ['assign', 'big', 'b000001'],
      ['declare', 'b000001'],
    ]) {
      assert.match(
        refused(await mesh.cli(argv), 'MSHA1'),
        /the declaration for b000001 is \d+ bytes, over the limit of \d+: move large content out of modules/,
      );
    }
    const [row] = await mesh.store
      .admin`select count(*)::int as n from assignment.declaration where length(envelope) > ${LIMITS.declaration}`;
    assert.is(row!.n, 0, 'no declaration over the limit was recorded');
  },
);

S.run();
