// The web console in a real headless Chromium, against real
// servers, `mesh serve`, three enrolled `mesh-host` processes and `mesh
// console` as the operator runs it: nothing is shown without a session, a
// link signs in once, the fleet page says what `mesh node list` says and
// follows a stopped host to out of touch without a reload and a held
// declaration's expiry to stale, the node page lists what `mesh drift` and
// `mesh log --kind refused` list, the history page what `mesh log` lists, the
// overlay page draws what `mesh overlay show --json` lists, a live stream ends
// with its session, and text that holds markup is shown as text on every page,
// with no script of it run.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { MESH, spawnProc, type Proc } from '../harness/mesh.js';
import { liveNode, stopLiveNode, addModule, cli, b64, until, type LiveNode } from '../declare/helpers.js';
import { launch, shotsDir } from './browser.js';
import { openSession } from '../../src/inventory/console.js';
import { within } from '../harness/within.js';
import { VERSION } from '../../src/sys/version.js';

interface Ctx {
  live: LiveNode;
  hosts: Record<string, Proc>;
  console: Proc;
  base: string;
  browser: Browser;
  signed: BrowserContext;
  fleet: Page;
}
const C = suite<Ctx>('the web console, in a browser');

const HOSTILE = {
  failing: '<img src=x onerror="window.__pwned=1">',
  held: '<script>window.__pwned=2</script>',
  error: '</td><b onclick="window.__pwned=3">bold</b>',
  source: '<svg onload="window.__pwned=4"></svg>',
  drift: '<img src=y onerror="window.__pwned=5">',
  reason: '<script>window.__pwned=6</script><b>refused</b>',
  why: '<img src=z onerror="window.__pwned=7">',
};

/** A request to the console with a deadline; the signal holds its body to the same deadline. */
const get = (what: string, url: string, init: RequestInit = {}, ms = 20_000) =>
  within(what, ms, fetch(url, { ...init, signal: AbortSignal.timeout(ms) }));

async function cliJson(ctx: Ctx, ...args: string[]) {
  const r = await ctx.live.mesh.cli([...args, '--json']);
  if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function link(ctx: Ctx): Promise<string> {
  const port = new URL(ctx.base).port;
  return (await cliJson(ctx, 'console', 'token', '--listen', `127.0.0.1:${port}`)).link as string;
}

/** Open a sign-in link and press its button, as a person does. */
async function signInAt(p: Page, l: string): Promise<void> {
  await p.goto(l);
  await within('the sign-in button', 30_000, p.waitForSelector('#signin-form button'));
  await p.click('#signin-form button');
}

async function signedIn(ctx: Ctx): Promise<BrowserContext> {
  const c = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await c.newPage();
  await signInAt(p, await link(ctx));
  await within('the fleet page after signing in', 30_000, p.waitForSelector('#fleet'));
  await p.close();
  return c;
}

async function open(ctx: Ctx, path: string): Promise<Page> {
  const p = await ctx.signed.newPage();
  await p.goto(ctx.base + path);
  await within(`${path} to be ready`, 30_000, p.waitForSelector('body[data-ready]'));
  return p;
}

/** What each row of the fleet table says a node's state is. */
const states = (p: Page) =>
  p.$$eval('#nodes tr', (trs) =>
    Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-node'), tr.querySelector('td.state')!.textContent])),
  );

C.before(async (ctx) => {
  ctx.live = await liveNode();
  ctx.hosts = { web1: ctx.live.proc };
  for (const n of ['web2', 'web3']) {
    const j = await ctx.live.mesh.joined(n, { MESH_HOST_ROOTS: ctx.live.root, MESH_HOST_RECONCILE_SECONDS: '3600' });
    await j.proc.waitFor(/applied declaration 1\b/, 30_000);
    ctx.hosts[n] = j.proc;
  }
  // The console as it runs on a first node: each context as its reader (P1), so every page here is shown read-only.
  ctx.console = spawnProc(process.execPath, [MESH, 'console', '--listen', '127.0.0.1:0'], {
    ...ctx.live.mesh.env,
    ...ctx.live.mesh.store.consoleEnv,
  });
  ctx.base = (await ctx.console.waitFor(/serving (http:\/\/\S+)/))[1]!;
  ctx.browser = await launch();
});
C.after(async (ctx) => {
  await ctx.browser?.close();
  await ctx.console?.stop();
  if (ctx.live) await stopLiveNode(ctx.live);
});

C('an unsigned request gets the sign-in page, every JSON endpoint a 401, in the browser too', async (ctx) => {
  for (const path of ['/', '/node?name=web1', '/overlay', '/catalogue', '/history', '/rollouts']) {
    const r = await get(`GET ${path} unsigned`, ctx.base + path);
    assert.is(r.status, 401, path);
    assert.match(await within(`the body of ${path}`, 20_000, r.text()), /mesh console token/, path);
  }
  for (const path of [
    '/api/fleet',
    '/api/fleet/events',
    '/api/node?name=web1',
    '/api/overlay',
    '/api/catalogue',
    '/api/history',
    '/api/rollouts',
  ]) {
    const r = await get(`GET ${path} with an unknown cookie`, ctx.base + path, {
      headers: { cookie: `mesh_console=${randomBytes(32).toString('base64url')}` },
    });
    assert.is(r.status, 401, path);
    assert.match((await within(`the body of ${path}`, 20_000, r.json())).error, /sign in/);
  }
  const c = await ctx.browser.newContext();
  const p = await c.newPage();
  await p.goto(ctx.base + '/overlay');
  assert.ok(await p.$('#signin'), 'the sign-in page');
  assert.is(await p.$('#graph'), null, 'no graph');
  await c.close();
});

C('a link signs in once: HttpOnly, SameSite=Strict cookie; spent again, it is refused (MSH09)', async (ctx) => {
  const l = await link(ctx);
  // A link preview fetches the link: that GET spends nothing, sets nothing.
  const preview = await get('GET of a sign-in link', l);
  assert.is(preview.status, 200);
  assert.is(preview.headers.get('set-cookie'), null, 'a GET opens no session');
  const c = await ctx.browser.newContext();
  const p = await c.newPage();
  await signInAt(p, l);
  await within('the fleet page after signing in', 30_000, p.waitForSelector('#fleet'));
  const [cookie] = await c.cookies();
  assert.is(cookie!.name, 'mesh_console');
  assert.is(cookie!.httpOnly, true);
  assert.is(cookie!.sameSite, 'Strict');
  assert.is(cookie!.secure, false, 'served over plain HTTP on loopback');
  const other = await ctx.browser.newContext();
  const q = await other.newPage();
  const from = ctx.console.output().length;
  await signInAt(q, l);
  await within('the sign-in page again', 30_000, q.waitForSelector('#signin'));
  await ctx.console.waitFor(/sign-in was refused: .*\(MSH09\)/, 5_000, from);
  assert.is((await other.cookies()).length, 0);
  await c.close();
  await other.close();
  const r2 = await get('POST /', ctx.base + '/', { method: 'POST' });
  assert.is(r2.status, 405, 'nothing but GET');
  // A form of another site cannot sign in, nor can a body no link makes.
  const token = new URL(await link(ctx)).search.slice(1);
  const cross = await get('POST /signin from another origin', ctx.base + '/signin', {
    method: 'POST',
    headers: { origin: 'https://elsewhere.example', 'content-type': 'application/x-www-form-urlencoded' },
    body: token,
  });
  assert.is(cross.status, 403);
  const mark = ctx.console.output().length;
  const big = await get('POST /signin with 2 KiB', ctx.base + '/signin', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `${token}&pad=${'x'.repeat(2048)}`,
  });
  assert.is(big.status, 401);
  await ctx.console.waitFor(/sign-in was refused: .*\(MSHX1\)/, 5_000, mark);
});

C('signing out closes the session in the store: the same cookie is refused afterwards', async (ctx) => {
  const c = await signedIn(ctx);
  const [cookie] = await c.cookies();
  const p = await c.newPage();
  await p.goto(ctx.base + '/');
  await within('the sign-out button', 30_000, p.waitForSelector('#signout button'));
  await p.click('#signout button');
  await within('the sign-in page after signing out', 30_000, p.waitForSelector('#signin'));
  assert.is((await c.cookies()).length, 0, 'the browser forgot the cookie');
  const copied = await get('GET /api/fleet with the signed-out cookie', ctx.base + '/api/fleet', {
    headers: { cookie: `mesh_console=${cookie!.value}` },
  });
  assert.is(copied.status, 401, 'a copy of the cookie opens nothing');
  await c.close();
});

C('the fleet page lists the three hosts as here, as mesh node list does', async (ctx) => {
  ctx.signed = await signedIn(ctx);
  ctx.fleet = await open(ctx, '/');
  const list = (await cliJson(ctx, 'node', 'list')) as { name: string; state: string }[];
  assert.equal(
    list.map((n) => [n.name, n.state]),
    [
      ['web1', 'here'],
      ['web2', 'here'],
      ['web3', 'here'],
    ],
  );
  assert.equal(await states(ctx.fleet), { web1: 'here', web2: 'here', web3: 'here' });
  const csp = (await get('GET /static/fleet.js', ctx.base + '/static/fleet.js')).headers.get('content-security-policy');
  assert.match(csp!, /script-src 'self'/);
});

C('the fleet page shows the agent version each node reports, as mesh node list does (V1)', async (ctx) => {
  const versions = () =>
    ctx.fleet.$$eval('#nodes tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-node'), tr.querySelector('td.agent')!.textContent])),
    );
  await within(
    `the fleet page to show mesh-host ${VERSION} on every node`,
    60_000,
    ctx.fleet.waitForFunction(
      (v) => {
        const tds = [...document.querySelectorAll('#nodes tr td.agent')];
        return tds.length > 0 && tds.every((td) => td.textContent === v);
      },
      VERSION,
      { timeout: 60_000 },
    ),
  );
  const list = (await cliJson(ctx, 'node', 'list')) as { name: string; agent_version: string }[];
  assert.equal(await versions(), Object.fromEntries(list.map((n) => [n.name, n.agent_version])));
  assert.equal(new Set(list.map((n) => n.agent_version)), new Set([VERSION]));
});

C('the overlay page draws one node a member and one line a pair mesh overlay show --json lists', async (ctx) => {
  const a = ctx.live.mesh.store.admin;
  // Two more sites of machines that never ran a host: dialable ones give pairs.
  const node = (
    name: string,
    site: string,
    dialable: string | null,
  ) => a`insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at, last_seen)
    values (${name}, ${site}, ${dialable}, ${randomBytes(32)}, ${randomBytes(32)}, ${randomBytes(32)}, now(), now())`;
  await node('b1', 'b', 'b1.example:51820');
  await node('b2', 'b', null);
  await node('b3', 'b', null);
  await node('c1', 'c', 'c1.example:51820');
  await node('c2', 'c', 'c2.example:51820');
  const g = (await cliJson(ctx, 'overlay', 'show')) as { nodes: { name: string; peers: { peer: string }[] }[] };
  const pairs = new Set(g.nodes.flatMap((n) => n.peers.map((p) => [n.name, p.peer].sort().join(' '))));
  assert.is(g.nodes.length, 8);
  assert.is(pairs.size, 3, 'b1-b2, b1-b3, c1-c2');
  const p = await open(ctx, '/overlay');
  assert.is(await p.$$eval('#graph g.node', (x) => x.length), g.nodes.length);
  assert.is(await p.$$eval('#graph line.edge', (x) => x.length), pairs.size);
  const drawn = await p.$$eval('#graph line.edge', (x) => x.map((l) => l.getAttribute('data-pair')));
  assert.equal(drawn.sort(), [...pairs].sort());
  assert.equal(await p.$$eval('#graph g.site', (x) => x.map((s) => s.getAttribute('data-site'))), [
    'b',
    'c',
    'default',
  ]);
  await p.close();
});

C('Q2: the overlay page asks what-if and why of the same SQL as mesh overlay what-if and why', async (ctx) => {
  // The nodes the test above added: b1 dialable at site b, b2 behind NAT there; c1 at site c; no hub.
  const p = await open(ctx, '/overlay');
  await p.selectOption('#why select[name=from]', 'b2');
  await p.selectOption('#why select[name=to]', 'c1');
  await p.click('#why button');
  await within('the why answer', 20_000, p.waitForSelector('#why-answer strong', { timeout: 20_000 }));
  const cli = (await cliJson(ctx, 'overlay', 'why', 'b2', 'c1')) as { fact: string; detail: string };
  assert.is(cli.fact, 'no edge');
  assert.is(await p.textContent('#why-answer strong'), cli.fact);
  assert.match((await p.textContent('#why-answer p'))!, cli.detail);
  await p.selectOption('#why select[name=to]', 'b1');
  await p.click('#why button');
  await within('path open', 20_000, p.waitForSelector('#why-answer p.open', { timeout: 20_000 }));
  // A port that is no number is refused by the console before SQL casts it; one out of range, by explain_path.
  const asked = (port: string) =>
    p.evaluate(async (q) => {
      const r = await fetch(`/api/overlay/why?from=b2&to=b1&port=${q}`);
      return [r.status, ((await r.json()) as { code?: string }).code];
    }, port);
  assert.equal(await asked('https'), [400, 'MSHY3']);
  assert.equal(await asked('70000'), [400, 'MSHY3']);
  assert.equal(await asked('4294967296'), [400, 'MSHY3']);
  await p.selectOption('#what-if select[name=down]', 'b1');
  await p.click('#what-if button');
  await within('the what-if answer', 20_000, p.waitForSelector('#what-if-answer p.count', { timeout: 20_000 }));
  const w = (await cliJson(ctx, 'overlay', 'what-if', '--down', 'b1')) as { stranded: unknown[]; pairsTotal: number };
  assert.match(
    (await p.textContent('#what-if-answer p.count'))!,
    `${w.stranded.length} spoke(s) stranded, ${w.pairsTotal} pair(s) lose every path`,
  );
  await p.close();
});

C(
  'C2: the fleet page says stale as mesh node list does, the moment what a node holds expires, with no reload',
  async (ctx) => {
    await ctx.fleet.evaluate(() => {
      (window as unknown as { mark: number }).mark = 2;
    });
    // c1 never ran a host: its report, as serve records one, holds a declaration that expires in a moment.
    await ctx.live.mesh.store
      .admin`select inventory.record_report(node_name => 'c1', report_serial => 1, held_now => '[]'::jsonb,
    failed_now => '[]'::jsonb, holds_until_now => now() + interval '3 seconds')`;
    await within(
      'the fleet page to mark c1 stale',
      60_000,
      ctx.fleet.waitForSelector('#nodes tr[data-node="c1"][data-stale] td.stale', { timeout: 60_000 }),
    );
    assert.is(
      await ctx.fleet.evaluate(() => (window as unknown as { mark?: number }).mark),
      2,
      'the same page, not reloaded',
    );
    const list = (await cliJson(ctx, 'node', 'list')) as { name: string; stale: boolean }[];
    const shown = await ctx.fleet.$$eval('#nodes tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.getAttribute('data-node'), tr.querySelector('td.stale') !== null])),
    );
    assert.equal(shown, Object.fromEntries(list.map((n) => [n.name, n.stale])), 'the same stale as mesh node list');
    assert.equal(
      list.filter((n) => n.stale).map((n) => n.name),
      ['c1'],
    );
    // Filtered like the other states, on a page of its own (the shared one stays unfiltered).
    const p = await open(ctx, '/');
    await p.selectOption('#state', 'stale');
    await within(
      'the fleet table filtered to one row',
      30_000,
      p.waitForFunction(() => document.querySelectorAll('#nodes tr').length === 1),
    );
    assert.equal(await p.$$eval('#nodes tr', (trs) => trs.map((tr) => tr.getAttribute('data-node'))), ['c1']);
    await p.selectOption('#state', 'all');
    await within(
      'the fleet table unfiltered',
      30_000,
      p.waitForFunction(() => document.querySelectorAll('#nodes tr').length > 1),
    );
    assert.match(await p.$eval('#count', (c) => c.textContent!), /\b1 stale\b/);
    await p.close();
    const n = await open(ctx, '/node?name=c1');
    assert.match(await n.$eval('#status dd.stale', (d) => d.textContent!), /^stale: what it holds expired at /);
    await n.close();
  },
);

C(
  'the node page lists what the node put back and its last refusals, as mesh drift and mesh log --kind refused list them',
  async (ctx) => {
    const a = ctx.live.mesh.store.admin;
    // What serve records of web1's reports (D6's corrected) and refusals (R3), through the functions it calls.
    for (let i = 0; i < 4; i++)
      await a`select inventory.record_corrections(node_name => 'web1', resources => ${['file:/etc/motd']}::text[])`;
    await a`select inventory.record_corrections(node_name => 'web1', resources => ${['service:cron', 'file:/etc/motd']}::text[])`;
    await a`select inventory.record_corrections(node_name => 'web2', resources => ${['file:/etc/other']}::text[])`;
    await a`select inventory.record_refusal(node_name => 'web1', refused_serial => 9, refusal_fault => 'forged', refusal_reason => 'the signature does not verify')`;
    // Said three times in a row: one row of the history, counted on the node's refusal.
    for (let i = 0; i < 3; i++)
      await a`select inventory.record_refusal(node_name => 'web1', refused_serial => 2, refusal_fault => 'replayed', refusal_reason => 'serial 2 is not newer than 3')`;
    const drift = (
      (await cliJson(ctx, 'drift')) as {
        node: string;
        resource: string;
        last_hour: number;
        times: number;
        fighting: boolean;
      }[]
    ).filter((r) => r.node === 'web1');
    assert.equal(
      drift.map((r) => [r.resource, r.times, r.fighting]),
      [
        ['file:/etc/motd', 5, true],
        ['service:cron', 1, false],
      ],
    );
    const refused = (await cliJson(ctx, 'log', '--node', 'web1', '--kind', 'refused')) as {
      seq: number;
      detail: { serial: number; fault: string; reason: string };
    }[];
    assert.is(refused.length, 2);
    assert.equal(
      refused.map((r) => r.detail.fault),
      ['forged', 'replayed'],
    );
    const forged = (await cliJson(ctx, 'log', '--node', 'web1', '--kind', 'refused-forged')) as { seq: number }[];
    assert.equal(
      forged.map((r) => r.seq),
      [refused[0]!.seq],
      'mesh log --kind refused-forged lists the forgery and not the replay',
    );
    const p = await open(ctx, '/node?name=web1');
    const cells = (id: string) =>
      p.$$eval(`#${id} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    assert.equal(
      (await cells('drift')).map((r) => [r[0], r[1], r[2], r[4]]),
      drift.map((r) => [r.resource, String(r.last_hour), String(r.times), r.fighting ? 'FIGHTING' : '']),
    );
    // Newest first on the page; mesh log prints oldest first.
    assert.equal(
      (await cells('refusals')).map((r) => [r[0], r[2], r[3], r[4]]),
      refused.reverse().map((r) => [String(r.seq), String(r.detail.serial), r.detail.fault, r.detail.reason]),
    );
    assert.equal(
      await p.$$eval('#refusals tbody tr.forged td:nth-child(4)', (tds) => tds.map((td) => td.textContent)),
      ['forged'],
      'the forgery marked apart, the replay not',
    );
    assert.match(
      await p.$eval('#last-refusal', (e) => e.textContent!),
      /^replayed serial 2: serial 2 is not newer than 3; said 3 times in a row, first at .+, last at .+$/,
    );
    await p.close();
  },
);

/** The history table's rows as [seq, kind, node, who, what]. */
const historyRows = (p: Page) =>
  p.$$eval('#history tbody tr', (trs) =>
    trs.map((tr) => {
      const td = [...tr.querySelectorAll('td')].map((x) => x.textContent);
      return [td[0], td[2], td[3], td[4], td[5]];
    }),
  );
const logRows = (rows: { seq: number; kind: string; node: string | null; actor: string; what: string }[]) =>
  rows.map((r) => [String(r.seq), r.kind, r.node ?? '-', r.actor, r.what]);

C('C3: the history page lists the rows mesh log --json lists, with its filters node, kind and since', async (ctx) => {
  const p = await open(ctx, '/history');
  const all = await cliJson(ctx, 'log');
  assert.ok(all.length > 10, 'tokens, enrolments, declarations, refusals');
  assert.equal(await historyRows(p), logRows(all));
  const loads = () => p.$eval('body', (b) => Number(b.dataset.loads));
  const apply = async (sel: string, value: string) => {
    const n = await loads();
    if (sel === '#kind') await p.selectOption(sel, value);
    else {
      await p.fill(sel, value);
      await p.press(sel, 'Enter');
    }
    await within(
      `the history reloaded for ${sel} ${value}`,
      30_000,
      p.waitForFunction((k) => Number(document.body.dataset.loads) > k, n),
    );
  };
  await apply('#node', 'web2');
  assert.equal(await historyRows(p), logRows(await cliJson(ctx, 'log', '--node', 'web2')));
  await apply('#kind', 'token');
  const tokens = await cliJson(ctx, 'log', '--node', 'web2', '--kind', 'token');
  assert.equal(
    tokens.map((r: { kind: string }) => r.kind),
    ['token-issued', 'token-spent'],
  );
  assert.equal(await historyRows(p), logRows(tokens));
  await apply('#since', '1h');
  assert.equal(
    await historyRows(p),
    logRows(await cliJson(ctx, 'log', '--node', 'web2', '--kind', 'token', '--since', '1h')),
  );
  assert.match(p.url(), /\/history\?node=web2&kind=token&since=1h$/, 'the filters are in the address');
  // A filter mesh log refuses is refused here with its sentence.
  await apply('#since', 'yesterday');
  const said = (await ctx.live.mesh.cli(['log', '--since', 'yesterday'])).stderr.trim().replace(/^mesh: /, '');
  assert.is(await p.$eval('#problem', (e) => e.textContent), said);
  assert.is(await p.$$eval('#history tbody tr', (x) => x.length), 0);
  // The linked address gives the same view.
  const q = await open(ctx, '/history?node=web1&kind=refused');
  assert.equal(await historyRows(q), logRows(await cliJson(ctx, 'log', '--node', 'web1', '--kind', 'refused')));
  await q.close();
  await p.close();
});

C('screenshots of every page at 1280x800', async (ctx) => {
  // Something to look at: two modules, one followed from a source, running on the hosts.
  await addModule(ctx.live.mesh, 'web', [
    { kind: 'file', path: join(ctx.live.root, 'web.conf'), content: b64('listen 8080\n'), mode: '0644' },
  ]);
  await addModule(ctx.live.mesh, 'metrics', [
    { kind: 'file', path: join(ctx.live.root, 'metrics.conf'), content: b64('interval 15s\n'), mode: '0644' },
  ]);
  for (const n of ['web1', 'web2']) await cli(ctx.live.mesh, 'assign', 'web', n);
  for (const n of ['web1', 'web2', 'web3']) await cli(ctx.live.mesh, 'assign', 'metrics', n);
  for (const [n, serial] of [
    ['web1', 3],
    ['web2', 3],
    ['web3', 2],
  ] as const)
    await ctx.hosts[n]!.waitFor(new RegExp(`applied declaration ${serial}\\b`), 30_000);
  await ctx.live.mesh.store
    .admin`insert into catalogue.source (module, git_url, ref, image) values ('web', 'https://git.example/web.git', 'main', '127.0.0.1:5000/web')`;
  await within(
    'the fleet page to show web3 at serial 2',
    30_000,
    ctx.fleet.waitForFunction(
      () => document.querySelector('#nodes tr[data-node="web3"] td:nth-child(6)')?.textContent === '2',
    ),
  );
  const dir = shotsDir();
  for (const [name, path] of [
    ['fleet', '/'],
    ['node', '/node?name=web1'],
    ['overlay', '/overlay'],
    ['catalogue', '/catalogue'],
    ['history', '/history'],
  ]) {
    const p = await open(ctx, path!);
    await p.screenshot({ path: join(dir, `${name}.png`) });
    await p.close();
  }
});

C('C1: the rollouts page shows what mesh rollout status --json shows, every rollout listed', async (ctx) => {
  // web3 (a host) in wave 1, b3 (no host: it never applies) in wave 2, so the rollout stands still at wave 2.
  await cli(ctx.live.mesh, 'rollout', 'hold');
  for (const n of ['web3', 'b3']) await cli(ctx.live.mesh, 'assign', 'web', n);
  await cli(ctx.live.mesh, 'rollout', 'start', '--waves', '1,100%', '--first', 'web3', '--wait-healthy', '1h');
  type Status = {
    id: number;
    state: string;
    wave: number;
    waves: number;
    released: number;
    nodes: { node: string; wave: number; state: string; why: string | null }[];
  };
  // Until b3 is declared too: "released, not yet declared" is a moment (serve declares it next), and
  // the page read after it would rightly show the state it moved on to.
  const s = await until(
    'wave 2 out and declared, web3 applied',
    async () => {
      const r = (await cliJson(ctx, 'rollout', 'status')) as Status;
      const b3 = r.nodes.find((n) => n.node === 'b3');
      return (
        r.state === 'rolling' &&
        r.wave === 2 &&
        r.nodes.find((n) => n.node === 'web3')?.state === 'applied' &&
        b3?.state === 'waiting' &&
        /not yet reported applied/.test(b3.why ?? '') &&
        r
      );
    },
    120_000,
  );
  const p = await open(ctx, '/rollouts');
  assert.is(await p.$eval('#headline', (h) => h.textContent), `rollout ${s.id}: rolling at wave 2 of 2 (1,100%)`);
  assert.is(
    await p.$eval('#progress', (h) => h.textContent),
    `${s.released} of ${s.nodes.length} released: 1 applied, 0 failing, 1 waiting`,
  );
  const nodes = await p.$$eval('#rollout-nodes tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  assert.equal(
    nodes,
    s.nodes.map((n) => [n.node, String(n.wave), n.state, n.why ?? '-']),
  );
  assert.equal(await p.$$eval('#rollouts tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-key'))), [
    String(s.id),
  ]);
  await p.screenshot({ path: join(shotsDir(), 'rollouts.png') });
  await p.close();
  // Aborted with a reason an operator typed: shown as text (the hostile test reads it), then the hold is lifted.
  await cli(ctx.live.mesh, 'rollout', 'abort', '--why', HOSTILE.why);
  await cli(ctx.live.mesh, 'rollout', 'release');
  const list = await open(ctx, `/rollouts?id=${s.id}`);
  assert.is(
    await list.$eval('#headline', (h) => h.textContent!.split(' (')[0]),
    `rollout ${s.id}: aborted at wave 2 of 2`,
  );
  assert.is(await list.$eval('#reason', (h) => h.textContent), `why: ${HOSTILE.why}`);
  const status = (await cliJson(ctx, 'rollout', 'status', '--rollout', String(s.id))) as Status;
  assert.is(status.state, 'aborted');
  assert.is(await list.$$eval('#rollouts tbody tr', (x) => x.length), 2, 'the aborted one and the hold after it');
  await list.close();
});

C('text holding markup shows as text on every page, and none of it runs', async (ctx) => {
  const a = ctx.live.mesh.store.admin;
  // Names cannot hold markup (they are checked); the text a node reports and a source URL can.
  await a`insert into inventory.report (node, serial, held, failed) values ('b2', 1,
    ${a.json([{ id: HOSTILE.held, kind: 'file', target: HOSTILE.held, origin: 'declared', digest: 'x' }])}, '[]')`;
  // A partly failed apply, as serve records one (inventory 0008): the fleet and node pages read it, as node list counts it.
  await a`select inventory.record_failure(node_name => 'b2', failed_serial => 1, failed_now => ${a.json([{ id: HOSTILE.failing, error: HOSTILE.error }])})`;
  await a`insert into catalogue.source (module, git_url, image) values ('evil', ${HOSTILE.source}, '127.0.0.1:5000/evil')`;
  // What a host reports put back and why it refused are its own text too.
  await a`select inventory.record_corrections(node_name => 'b2', resources => ${[HOSTILE.drift]}::text[])`;
  await a`select inventory.record_refusal(node_name => 'b2', refused_serial => 1, refusal_fault => 'malformed', refusal_reason => ${HOSTILE.reason})`;
  // The fleet page already open receives the failing id pushed.
  await within(
    "the fleet page to show b2's failing resource",
    30_000,
    ctx.fleet.waitForFunction(
      (t) => document.querySelector('#nodes tr[data-node="b2"] td.failing')?.textContent === t,
      HOSTILE.failing,
    ),
  );
  const listed = ((await cliJson(ctx, 'node', 'list')) as { name: string; failing: number | null }[]).find(
    (n) => n.name === 'b2',
  )!;
  assert.is(listed.failing, 1, 'mesh node list counts the one failing resource the pages show');
  const pages: [string, string[]][] = [
    ['/', [HOSTILE.failing]],
    ['/node?name=b2', [HOSTILE.held, HOSTILE.failing, HOSTILE.error, HOSTILE.drift, HOSTILE.reason]],
    ['/history', [HOSTILE.reason]],
    ['/history?node=b2&kind=refused', [HOSTILE.reason]],
    ['/catalogue', [HOSTILE.source]],
    ['/rollouts', [HOSTILE.why]],
    ['/overlay', []],
  ];
  for (const [path, texts] of pages) {
    const p = await open(ctx, path);
    const body = await p.$eval('main', (m) => m.textContent);
    for (const t of texts) assert.ok(body!.includes(t), `${path} shows ${t} as text`);
    assert.is(
      await p.$$eval('main img, main script, main b, main svg[onload]', (x) => x.length),
      0,
      `${path}: no element made of the text`,
    );
    assert.is(
      await p.evaluate(() => (window as unknown as { __pwned?: number }).__pwned),
      undefined,
      `${path}: nothing ran`,
    );
    await p.close();
  }
  assert.is(await ctx.fleet.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
});

C('a live stream ends when its session expires, and the page shows the sign-in page', async (ctx) => {
  // The browser's page first: making one is slow on a loaded machine, and must not eat into the session.
  const c = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await c.newPage();
  // A session of a few seconds, opened as the console opens one, by spending a link.
  const secret = new URL(await link(ctx)).searchParams.get('token')!;
  const inv = postgres(ctx.live.mesh.store.url('inventory'), { max: 1, onnotice: () => {} });
  const { cookie } = await openSession(inv as never, secret, '10s').finally(() => inv.end());
  await c.addCookies([{ name: 'mesh_console', value: cookie, url: ctx.base }]);
  await p.goto(ctx.base + '/');
  await within('the fleet page of a short session', 30_000, p.waitForSelector('#fleet'));
  await within('the fleet page of a short session to be ready', 30_000, p.waitForSelector('body[data-ready]'));
  const r = await get(
    'the live stream of a short session',
    ctx.base + '/api/fleet/events',
    {
      headers: { cookie: `mesh_console=${cookie}` },
    },
    60_000,
  );
  assert.is(r.status, 200);
  // Read to its end: the server must end it (a stream left open past expiry keeps this waiting until the suite is killed).
  const text = await within("the server to end the live stream at the session's expiry", 60_000, r.text());
  assert.match(text, /^event: snapshot\n/);
  assert.match(text, /event: expired\ndata: \{\}\n\n$/);
  await within(
    'the page to show the sign-in page once its session expired',
    30_000,
    p.waitForSelector('#signin', { timeout: 30_000 }),
  );
  assert.is(await p.$('#fleet'), null);
  assert.is(
    (
      await get('GET /api/fleet after the session expired', ctx.base + '/api/fleet', {
        headers: { cookie: `mesh_console=${cookie}` },
      })
    ).status,
    401,
    'the session is over',
  );
  await c.close();
});

C('R4 live: a stopped host turns out of touch on the open fleet and overlay pages, with no reload', async (ctx) => {
  const overlay = await open(ctx, '/overlay');
  // A mark on each window: a reload would wipe it.
  for (const p of [ctx.fleet, overlay])
    await p.evaluate(() => {
      (window as unknown as { mark: number }).mark = 21;
    });
  await ctx.hosts.web3!.stop();
  await within(
    'the fleet page to show the stopped web3 out of touch',
    240_000,
    ctx.fleet.waitForFunction(
      () => /^out of touch/.test(document.querySelector('#nodes tr[data-node="web3"] td.state')?.textContent ?? ''),
      undefined,
      { timeout: 240_000 },
    ),
  );
  await within(
    'the overlay page to draw web3 away',
    30_000,
    overlay.waitForSelector('#graph g.node.away[data-node="web3"]', { timeout: 30_000 }),
  );
  for (const p of [ctx.fleet, overlay])
    assert.is(await p.evaluate(() => (window as unknown as { mark?: number }).mark), 21, 'the same page, not reloaded');
  const s = await states(ctx.fleet);
  assert.match(s.web3!, /^out of touch/);
  assert.is(s.web1, 'here');
  const list = (await cliJson(ctx, 'node', 'list')) as { name: string; state: string }[];
  assert.match(list.find((n) => n.name === 'web3')!.state, /^out of touch/, 'mesh node list says so too');
  await overlay.close();
});

C("with a hub: every node peers with it, and each spoke's route to it is drawn as such", async (ctx) => {
  // The hosts stop first: a hub peers with every node, and no test host may raise an overlay on this machine.
  for (const p of Object.values(ctx.hosts)) await p.stop();
  await ctx.live.mesh.store.admin`insert into overlay.hub (node) values ('b1')`;
  const g = (await cliJson(ctx, 'overlay', 'show')) as {
    nodes: { name: string; peers: { peer: string; route: boolean }[] }[];
  };
  const pairs = new Set(g.nodes.flatMap((n) => n.peers.map((p) => [n.name, p.peer].sort().join(' '))));
  const routes = new Set(
    g.nodes.flatMap((n) => n.peers.filter((p) => p.route).map((p) => [n.name, p.peer].sort().join(' '))),
  );
  assert.ok(routes.size >= 7, 'every spoke routes through b1');
  const p = await open(ctx, '/overlay');
  assert.is(await p.$$eval('#graph g.node', (x) => x.length), g.nodes.length);
  assert.equal(
    (await p.$$eval('#graph line.edge', (x) => x.map((l) => l.getAttribute('data-pair')))).sort(),
    [...pairs].sort(),
  );
  assert.equal(
    (await p.$$eval('#graph line.edge.route', (x) => x.map((l) => l.getAttribute('data-pair')))).sort(),
    [...routes].sort(),
  );
  assert.equal(await p.$$eval('#graph g.node.hub', (x) => x.map((n) => n.getAttribute('data-node'))), ['b1']);
  await p.screenshot({ path: join(shotsDir(), 'overlay.png') });
  await p.close();
});

C.run();
