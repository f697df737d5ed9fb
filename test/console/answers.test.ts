// The console's read-only views of what only mesh answers, in a real headless
// Chromium, with `mesh console` as the operator runs it (each context as its
// reader, P1): the promises page lists each promise with its state as `mesh
// promise list` does (Q1), the freezes page each change-freeze window as
// `mesh freeze list` does, and the declared page what a node was declared at a
// time and what changed between two, in the lines `mesh node show --at` and
// `mesh diff` print. Nodes are rows (nothing here crosses the broker), as in
// test/assignment/history.test.ts: a node "applies" when its declaration is
// marked acknowledged, as serve does on its report.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { addModule, cli } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';
import { join } from 'node:path';
import { signedConsole, stopConsole, shotsDir, type ConsoleCtx } from './browser.js';
import { within } from '../harness/within.js';

interface Ctx extends ConsoleCtx {
  /** Two times the test recorded: app v1 declared to both nodes, then app v2. */
  t1: string;
  t2: string;
}
const A = suite<Ctx>('the console shows promises, freeze windows and what a node was declared at a time');

/** An override's reason is the operator's own text: shown as the characters it is. */
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
const CONF = '/srv/answers/app.conf';
const app = (v: string) => [
  { kind: 'file', path: CONF, content: b64(Buffer.from(v)), mode: '0644' },
  { kind: 'service', name: 'app', exec: ['/bin/sleep', '1000'], restartOn: [`file:${CONF}`] },
];

const cliJson = async (ctx: Ctx, ...args: string[]) => JSON.parse(await cli(ctx.mesh, ...args, '--json'));
const clock = async (mesh: Mesh, seconds = 0) =>
  (await mesh.store.admin`select (clock_timestamp() + make_interval(secs => ${seconds}))::text as t`)[0]!.t as string;

async function open(ctx: Ctx, path: string): Promise<Page> {
  const p = await ctx.signed.newPage();
  await p.goto(ctx.base + path);
  await within(`${path} to be ready`, 30_000, p.waitForSelector('body[data-ready]'));
  return p;
}

/** Each row of a table, cell by cell, as the page shows it. */
const cells = (p: Page, table: string) =>
  p.$$eval(`${table} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));

A.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, identity_key, overlay_key, sealing_key, enrolled_at)
    select n, s, k, k, k, now() from (values ('n1', 'dmz'), ('n2', 'default')) v(n, s),
           lateral (select decode(md5(n) || md5('k' || n), 'hex') as k) x`;
  await addModule(ctx.mesh, 'app', app('v1'));
  await cli(ctx.mesh, 'assign', 'app', 'n1');
  await cli(ctx.mesh, 'assign', 'app', 'n2');
  await cli(ctx.mesh, 'declare', '--all', '--changed');
  await ctx.mesh.store.admin`update assignment.declaration set acknowledged_at = now() where node = 'n1'`;
  ctx.t1 = await clock(ctx.mesh);
  await addModule(ctx.mesh, 'app', app('v2'));
  await cli(ctx.mesh, 'declare', '--all', '--changed');
  ctx.t2 = await clock(ctx.mesh);

  // Two promises kept, and one broken by nothing a checked change did: a row a DBA wrote.
  await cli(ctx.mesh, 'promise', 'add', 'app-runs', '--module', 'app', '--runs', 'app');
  await cli(ctx.mesh, 'promise', 'add', 'no-dmz-postgres', '--site', 'dmz', '--closed', '5432');
  await ctx.mesh.store.admin`insert into assignment.promise (name, kind, at_least) values ('three-hubs', 'hubs', 3)`;

  // A window holding site dmz now, one waiting, and one ended early with a reason.
  await cli(
    ctx.mesh,
    'freeze',
    'add',
    '--from',
    await clock(ctx.mesh, -60),
    '--until',
    await clock(ctx.mesh, 3600),
    '--site',
    'dmz',
  );
  await cli(
    ctx.mesh,
    'freeze',
    'add',
    '--from',
    await clock(ctx.mesh, 86_400),
    '--until',
    await clock(ctx.mesh, 90_000),
    '--module',
    'app',
  );
  const f = await cliJson(ctx, 'freeze', 'add', '--until', await clock(ctx.mesh, 7200));
  await cli(ctx.mesh, 'freeze', 'override', String(f.id), '--reason', HOSTILE);

  const p = await signedConsole(ctx, '#fleet');
  await p.close();
});
A.after(stopConsole);

A('Q1: the promises page lists each promise, kept or broken and why, as mesh promise list does', async (ctx) => {
  const p = await open(ctx, '/promises');
  const listed = (await cliJson(ctx, 'promise', 'list')) as {
    name: string;
    state: string;
    promise: string;
    why: string | null;
  }[];
  assert.equal(
    listed.map((r) => [r.name, r.state]),
    [
      ['app-runs', 'kept'],
      ['no-dmz-postgres', 'kept'],
      ['three-hubs', 'broken'],
    ],
  );
  const shown = await cells(p, '#promises');
  assert.equal(
    shown.map((r) => r.slice(0, 4)),
    listed.map((r) => [r.name, r.state, r.promise, r.why ?? '-']),
  );
  assert.equal(shown[2]!.slice(1, 4), ['broken', 'at least 3 hubs', '0 hubs (none), fewer than 3']);
  assert.is(await p.textContent('#count'), '3 promises, 1 broken');
  await p.screenshot({ path: join(shotsDir(), 'promises.png') });
  await p.close();
});

A('the freezes page lists each window, its state and the nodes it holds, as mesh freeze list does', async (ctx) => {
  const p = await open(ctx, '/freezes');
  const listed = (await cliJson(ctx, 'freeze', 'list')) as {
    id: number;
    site: string | null;
    module: string | null;
    state: string;
    holds: number;
    override_reason: string | null;
  }[];
  assert.equal(
    listed.map((r) => [r.state, r.holds]),
    [
      ['holding', 1],
      ['overridden', 0],
      ['waiting', 0],
    ],
    'by opening time: the holding window a minute ago, the overridden one now, the waiting one tomorrow',
  );
  const byId = await p.$$eval('#freezes tbody tr', (trs) =>
    trs.map((tr) => ({
      id: Number(tr.getAttribute('data-key')),
      site: tr.querySelector('.c-site')!.textContent,
      module: tr.querySelector('.c-module')!.textContent,
      state: tr.querySelector('.c-state')!.textContent,
      holds: Number(tr.querySelector('.c-holds')!.textContent),
      override: tr.querySelector('.c-override')!.textContent,
    })),
  );
  assert.equal(
    byId.map((r) => [r.id, r.site, r.module, r.state, r.holds]).sort(),
    listed.map((r) => [r.id, r.site ?? 'every site', r.module ?? 'every module', r.state, r.holds]).sort(),
  );
  const overridden = byId.find((r) => r.state === 'overridden')!;
  assert.ok(overridden.override.endsWith(`: ${HOSTILE}`), `the reason shown as text: ${overridden.override}`);
  assert.is(await p.$$eval('#freezes img', (x) => x.length), 0, 'no markup of the reason made an element');
  assert.is(await p.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
  assert.is(await p.textContent('#count'), '3 windows, 1 holding 1 node now');
  await p.screenshot({ path: join(shotsDir(), 'freezes.png') });
  await p.close();
});

A('the declared page says what n1 was declared at a time as mesh node show --at does', async (ctx) => {
  const p = await open(ctx, `/declared?node=n1&at=${encodeURIComponent(ctx.t1)}`);
  const said = (await cli(ctx.mesh, 'node', 'show', 'n1', '--at', ctx.t1)).trim().split('\n');
  const shown = (await cliJson(ctx, 'node', 'show', 'n1', '--at', ctx.t1)) as {
    declared: { serial: number; resources: { id: string; kind: string }[] };
  };
  assert.is(await p.textContent('#at-headline'), said[0]);
  assert.match(said[0]!, `n1 at `);
  assert.equal(
    await cells(p, '#at-resources'),
    shown.declared.resources.map((r) => [r.id, r.kind]),
  );
  assert.ok(shown.declared.resources.some((r) => r.id === `file:${CONF}`));
  assert.is(await p.textContent('#at-applied'), said[said.length - 1]);
  assert.match(said[said.length - 1]!, /^reported applied: the same declaration/);
  assert.not.match((await p.textContent('#answer'))!, /null|undefined/, 'nothing shown but the answer');
  await p.close();
});

A('the declared page says what changed between two times as mesh diff does, for n1 and for the fleet', async (ctx) => {
  const range = `from=${encodeURIComponent(ctx.t1)}&to=${encodeURIComponent(ctx.t2)}`;
  for (const node of ['n1', '']) {
    const p = await open(ctx, `/declared?node=${node}&${range}`);
    const said = (await cli(ctx.mesh, 'diff', ...(node ? [node] : []), '--from', ctx.t1, '--to', ctx.t2)).trim();
    assert.is(
      (await p.$$eval('#diff-groups li', (li) => li.map((x) => x.textContent))).join('\n'),
      said,
      node || 'the fleet',
    );
    assert.match(
      said,
      node ? /^1 node: file:\/srv\/answers\/app.conf changed, service:app restarts \(n1\)$/ : /^2 nodes: /,
    );
    assert.equal(
      (await cells(p, '#diff-changes')).filter((r) => r[0] === 'n1'),
      [
        ['n1', `file:${CONF}`, 'changed'],
        ['n1', 'service:app', 'restarts'],
      ],
    );
    assert.not.match((await p.textContent('#answer'))!, /null|undefined/, 'nothing shown but the answer');
    if (!node) await p.screenshot({ path: join(shotsDir(), 'declared.png') });
    await p.close();
  }
  // A time the CLI refuses is refused here too, in the CLI's words.
  const p = await open(ctx, '/declared?node=n1&at=whenever');
  assert.match((await p.textContent('#problem'))!, /'whenever' is not a time/);
  await p.close();
});

A.run();
