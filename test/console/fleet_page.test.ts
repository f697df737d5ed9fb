// The fleet page on a fleet made in SQL, larger than a page: the browser
// shows the first page in name order, the next page starts after the last name
// shown (keyset), and a filter by name prefix, site and state is answered by
// the server (inventory.fleet_page); each page holds exactly the rows
// `mesh node list --limit --after --prefix --site --state --json` prints, and
// a row that changes in SQL changes on the page with no reload. A filter SQL
// cannot read is refused with its own code.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { freshMesh } from '../harness/mesh.js';
import { signedConsole, stopConsole, type ConsoleCtx } from './browser.js';
import { within } from '../harness/within.js';
import { refusedWith } from '../sql/helpers.js';

/** More nodes than a page shows many times over: sites s0..s9, one in 7 out of touch, one in 11 never spoken. */
const FLEET = 3000;
const PAGE = 100;

interface Ctx extends ConsoleCtx {
  page: Page;
}
const F = suite<Ctx>('the fleet page, one page at a time, on a fleet made in SQL');

const shown = (p: Page) => p.$$eval('#nodes tr', (trs) => trs.map((tr) => tr.getAttribute('data-node')));

async function listed(ctx: Ctx, ...args: string[]): Promise<{ name: string; state: string }[]> {
  const r = await ctx.mesh.cli(['node', 'list', ...args, '--json']);
  if (r.code !== 0) throw new Error(`mesh node list ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Wait until the page's first row is FIRST and it holds COUNT rows: what a read that ended looks like. */
async function showing(p: Page, what: string, first: string, count: number): Promise<void> {
  await within(
    what,
    30_000,
    p.waitForFunction(
      ([f, c]) => {
        const trs = document.querySelectorAll('#nodes tr');
        return trs.length === c && trs[0]?.getAttribute('data-node') === f;
      },
      [first, count] as const,
      { timeout: 30_000 },
    ),
  );
}

F.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
    select 'b' || lpad(i::text, 6, '0'), 's' || (i % 10), k, k, k, now(),
           case when i % 11 = 0 then null when i % 7 = 0 then now() - interval '10 minutes' else now() + interval '1 day' end
      from generate_series(1, ${FLEET}::int) i,
           lateral (select decode(md5(i::text) || md5('k' || i), 'hex') as k) x`;
  ctx.page = await signedConsole(ctx, 'body[data-ready]');
});
F.after(stopConsole);

F(
  'the first page holds the first 100 names, as mesh node list --limit 100 prints them, and counts the whole fleet',
  async (ctx) => {
    const names = await shown(ctx.page);
    assert.is(names.length, PAGE);
    assert.equal(
      names,
      (await listed(ctx, '--limit', String(PAGE))).map((n) => n.name),
    );
    assert.is(names[0], 'b000001');
    const away = Math.floor(FLEET / 7) - Math.floor(FLEET / 77);
    const never = Math.floor(FLEET / 11);
    assert.match(
      await ctx.page.$eval('#count', (c) => c.textContent!),
      new RegExp(
        `^${FLEET} nodes: ${FLEET - away - never} here, 0 wedged, ${away} out of touch, ${never} never spoken, 0 stale; ${FLEET} match, ${PAGE} shown on page 1$`,
      ),
    );
    assert.ok(await ctx.page.$eval('#prev', (b) => (b as HTMLButtonElement).disabled), 'no page before the first');
  },
);

F('next starts after the last name shown (keyset), as --after does; previous comes back', async (ctx) => {
  await ctx.page.click('#next');
  await showing(ctx.page, 'the second page', 'b000101', PAGE);
  assert.equal(
    await shown(ctx.page),
    (await listed(ctx, '--limit', String(PAGE), '--after', 'b000100')).map((n) => n.name),
  );
  await ctx.page.click('#next');
  await showing(ctx.page, 'the third page', 'b000201', PAGE);
  await ctx.page.click('#prev');
  await showing(ctx.page, 'the second page again', 'b000101', PAGE);
  await ctx.page.click('#prev');
  await showing(ctx.page, 'the first page again', 'b000001', PAGE);
});

F(
  'a filter by state, site and name prefix is answered by the server, and starts at its own first page',
  async (ctx) => {
    const p = ctx.page;
    await p.click('#next');
    await showing(p, 'the second page', 'b000101', PAGE);
    // Out of touch at site s3: i % 10 = 3, i % 7 = 0, i % 11 != 0 (b000063, b000133, ...): fewer than a page.
    const want = (await listed(ctx, '--state', 'away', '--site', 's3')).map((n) => n.name);
    assert.ok(want.length > 10 && want.length < PAGE, `a filter that fits a page (${want.length})`);
    await p.selectOption('#state', 'away');
    await p.fill('#site', 's3');
    await showing(p, 'the nodes out of touch at s3', want[0]!, want.length);
    assert.equal(await shown(p), want);
    assert.ok(
      (await p.$$eval('#nodes tr td.state', (tds) => tds.map((td) => td.textContent!))).every((s) =>
        s.startsWith('out of touch'),
      ),
    );
    assert.match(await p.$eval('#count', (c) => c.textContent!), new RegExp(`; ${want.length} match, `));
    assert.ok(await p.$eval('#next', (b) => (b as HTMLButtonElement).disabled), 'no page after the last');
    await p.selectOption('#state', 'all');
    await p.fill('#site', '');
    await p.fill('#filter', 'b00123');
    await showing(p, 'the ten names starting b00123', 'b001230', 10);
    assert.equal(
      await shown(p),
      Array.from({ length: 10 }, (_, i) => `b00123${i}`),
    );
    await p.fill('#filter', '');
    await showing(p, 'the unfiltered first page', 'b000001', PAGE);
  },
);

F('a row that changes in SQL changes on the page, with no reload', async (ctx) => {
  const p = ctx.page;
  await p.evaluate(() => {
    (window as unknown as { mark: number }).mark = 1;
  });
  assert.is(await p.$eval('#nodes tr[data-node="b000002"] td.state', (td) => td.textContent), 'here');
  await ctx.mesh.store.admin`update inventory.node set last_seen = null where name = 'b000002'`;
  await within(
    'b000002 shown as never spoken',
    60_000,
    p.waitForFunction(
      () => document.querySelector('#nodes tr[data-node="b000002"] td.state')?.textContent === 'never spoken',
      undefined,
      { timeout: 60_000 },
    ),
  );
  assert.is(await p.evaluate(() => (window as unknown as { mark?: number }).mark), 1, 'the same page, not reloaded');
});

F(
  'a filter SQL cannot read is refused with its code, in the API and in mesh node list (MSHT2, MSHT3, MSHT4, MSHT5)',
  async (ctx) => {
    const api = (q: string) =>
      ctx.page.evaluate(
        (u) => fetch(u).then(async (r) => ({ status: r.status, body: await r.json() })),
        `/api/fleet?${q}`,
      );
    for (const [q, code] of [
      ['state=gone', 'MSHT2'],
      ['limit=0', 'MSHT3'],
      ['limit=1001', 'MSHT3'],
      ['limit=ten', 'MSHT5'],
    ] as const) {
      const r = await api(q);
      assert.is(r.status, 400, q);
      assert.is(r.body.code, code, q);
    }
    const ok = await api('limit=2&after=b000010&site=s1');
    assert.is(ok.status, 200);
    assert.equal(
      ok.body.rows.map((r: { name: string }) => r.name),
      ['b000011', 'b000021'],
    );
    assert.is(ok.body.next, 'b000021');
    const cli = await ctx.mesh.cli(['node', 'list', '--state', 'gone']);
    assert.is(cli.code, 1);
    assert.match(cli.stderr, /\(MSHT2\)/);
    await refusedWith(ctx.mesh.store.admin`select * from inventory.fleet_page(name_prefix => '')`, 'MSHT4');
    await refusedWith(ctx.mesh.store.admin`select * from inventory.fleet_counts(site_name => '')`, 'MSHT4');
  },
);

F.run();
