// W2 has one step (src/provision/redeclare.ts): make again what a change left
// stale, then declare every node whose composition changed. A caller that
// declares what changed by itself skips the first half, and a holder is left
// with a secret it cannot open. Shown on the lab's retire (a path that once
// declared alone), and checked over every file: only the step declares what
// changed.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { insertNodes } from '../bench/lib.js';
import { runAny } from '../../src/sys/proc.js';
import { queueOf } from '../../src/wire/names.js';

const top = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const S = suite<{ mesh: Mesh; node: string }>('one W2 step');

S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  [ctx.node] = await insertNodes(ctx.mesh, 1);
  // A queue to be told on, so the secret can be made again (all-or-nothing includes the broker: S5).
  const r = await ctx.mesh.mgmt('PUT', `/queues/${ctx.mesh.vhost}/${queueOf(ctx.node!)}`, { durable: true });
  assert.ok(r.ok, `queue: ${r.status}`);
});
S.after(async (ctx) => {
  await ctx.mesh?.stop();
});

S('W2, S3: the lab retire makes again a secret its holder has no current copy of, and declares it', async (ctx) => {
  const { mesh, node } = ctx;
  // Sealed to a key the node no longer has: stale.
  await mesh.store.admin`insert into secret.secret (name, origin, path) values ('q', 'made', '/etc/q')`;
  await mesh.store
    .admin`insert into secret.sealed (secret, holder, sealed_to, blob, generation) values ('q', ${node}, ${Buffer.alloc(32)}, 'AAAA', 1)`;
  const r = await runAny(process.execPath, [join(top, 'dist/lab/cluster/hub.js'), 'retire'], {
    env: mesh.env,
    input: '{"names":[]}',
  });
  assert.is(r.code, 0, r.stderr);
  const [s] = await mesh.store.admin`select generation from secret.secret where name = 'q'`;
  assert.is(s!.generation, 2, 'made again');
  const stale = await mesh.store.admin`select secret from secret.stale`;
  assert.equal(
    stale.map((x) => x.secret),
    [],
    'no holder left without a current copy',
  );
  const owed = await mesh.store.admin`select node from assignment.outbox`;
  assert.equal(
    owed.map((o) => o.node),
    [node],
    'the holder declared once, carrying it',
  );
});

/** The project's TypeScript outside test/, path -> text. */
function tree(dir: string, out = new Map<string, string>()): Map<string, string> {
  for (const name of readdirSync(join(top, dir))) {
    const p = join(dir, name);
    if (statSync(join(top, p)).isDirectory()) tree(p, out);
    else if (name.endsWith('.ts')) out.set(p, readFileSync(join(top, p), 'utf8'));
  }
  return out;
}

// declare.ts defines the query; a rollout releasing or advancing its hold declares what it held.
const OWN = ['src/provision/redeclare.ts', 'src/assignment/declare.ts', 'src/assignment/rollout.ts'];

S('W2: no file but the one step declares what changed', () => {
  const files = new Map<string, string>();
  for (const d of ['src', 'host', 'bundle', 'lab']) tree(d, files);
  const by = [...files]
    .filter(([f, t]) => !OWN.includes(f) && /declareChanged\(|changedOnly:\s*true/.test(t))
    .map(([f]) => f);
  assert.equal(by, [], 'these declare what changed without making again what is stale: call redeclare()');
});

S.run();
