// 6. The console's fleet page at 100,000 nodes (MESH_BENCH_CONSOLE_NODES).
// Nodes, reports and declarations are inserted in SQL (most here, some out of
// touch, some never spoken, some failing); `mesh console` runs as the
// operator runs it; Debian's chromium loads the fleet page until it is
// interactive: its first page (100 rows, filtered and paged in SQL by
// inventory.fleet_page) drawn with the fleet's counts, timed by the page from
// navigation start. Beside it, in the same run: the SQL read of the same
// page (readFleetPage, the function the console answers with), and the
// page's answer to a site typed in its filter.
import { freshMesh, spawnProc, MESH, type Proc } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { readFleetPage, PAGE_SIZE } from '../../src/console/fleet.js';
import { launch } from '../console/browser.js';
import { bench, figure, now, envInt, insertNodes } from './lib.js';

const FLEET = envInt('MESH_BENCH_CONSOLE_NODES', 100_000);
const LOADS = envInt('MESH_BENCH_CONSOLE_LOADS', 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

await bench('6 console fleet page', async (figs) => {
  const mesh = await freshMesh();
  let console_: Proc | undefined;
  const browser = await launch();
  try {
    await insertNodes(mesh, FLEET, { sites: 20, hubs: 0 });
    const a = mesh.store.admin;
    // A fleet as it looks: 9 in 10 here, some silent for minutes, some never spoken;
    // every node declared and reported, 1 in 100 failing a resource.
    await a`update inventory.node set last_seen = case when right(name, 2) = '07' then now() - interval '10 minutes'
                                                   when right(name, 2) = '13' then null else now() end`;
    await a`insert into inventory.report (node, serial, held, failed)
            select name, 2, jsonb_build_array(jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'target', 'mesh', 'origin', 'declared', 'digest', 'x'),
                                              jsonb_build_object('id', 'service:web', 'kind', 'service', 'target', 'web', 'origin', 'declared', 'digest', 'y')),
                   case when right(name, 2) = '21' then '[{"id": "service:web", "error": "exited 1"}]'::jsonb else '[]'::jsonb end
              from inventory.node where last_seen is not null`;
    await a`insert into assignment.declaration (node, serial, digest, resources_hash, envelope, acknowledged_at)
            select name, s, sha256(convert_to(name || s, 'utf8')), sha256(convert_to(name, 'utf8')), '\\x00'::bytea, case when s = 2 then now() end
              from inventory.node, generate_series(1, 3) s`;
    await a`analyze`;

    // The SQL read of the same page, as the console makes it.
    const stores = {
      inventory: await connect('inventory', { env: mesh.env }),
      assignment: await connect('assignment', { env: mesh.env }),
    };
    const reads: number[] = [];
    let counted = 0;
    for (let i = 0; i < LOADS; i++) {
      const t0 = now();
      const page = await readFleetPage(stores, {});
      reads.push(now() - t0);
      if (page.rows.length !== PAGE_SIZE) throw new Error(`read ${page.rows.length} rows, not a page of ${PAGE_SIZE}`);
      counted = page.counts.nodes;
    }
    await Promise.all(Object.values(stores).map((s) => s.end()));
    if (counted !== FLEET) throw new Error(`counted ${counted} nodes, not ${FLEET}`);

    // The console reads the whole fleet once as it starts (its live stream's first read): timed, not charged to the page.
    const s0 = now();
    console_ = spawnProc(process.execPath, [MESH, 'console', '--listen', '127.0.0.1:0'], mesh.env);
    const base = (await console_.waitFor(/serving (http:\/\/\S+)/, 180_000))[1]!;
    const consoleStart = (now() - s0) / 1000;
    const tok = await mesh.cli(['console', 'token', '--listen', `127.0.0.1:${new URL(base).port}`, '--json']);
    if (tok.code !== 0) throw new Error(tok.stderr);
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const signin = await ctx.newPage();
    await signin.goto(JSON.parse(tok.stdout).link);
    // The link's page signs in with its button (the link's GET spends nothing); the fleet page follows.
    await signin.click('#signin-form button', { timeout: 60_000 });
    await signin.waitForSelector('body[data-ready]', { timeout: 180_000 });
    await signin.close();

    const probe = await ctx.newPage();
    await probe.goto(base + '/catalogue');
    const pageBytes = await probe.evaluate(() =>
      fetch('/api/fleet')
        .then((r) => r.text())
        .then((t) => t.length),
    );
    await probe.close();

    const loads: number[] = [];
    const filters: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const p = await ctx.newPage();
      await p.goto(base + '/');
      await p.waitForSelector('body[data-ready]', { timeout: 60_000 });
      loads.push(Number(await p.getAttribute('body', 'data-ready')));
      const shown = await p.$$eval('#nodes tr', (x) => x.length);
      if (shown !== PAGE_SIZE) throw new Error(`the page shows ${shown} rows, not a page of ${PAGE_SIZE}`);
      const said = await p.$eval('#count', (c) => c.textContent!);
      if (!said.startsWith(`${FLEET} nodes:`)) throw new Error(`the page counts ${said}, not ${FLEET} nodes`);
      // Interactive: a site typed in the filter narrows the fleet to that site's first page (after the page's 150 ms pause for typing).
      const ms = await p.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const input = document.getElementById('site') as HTMLInputElement;
            const count = document.getElementById('count')!;
            const t0 = performance.now();
            new MutationObserver(() => resolve(performance.now() - t0)).observe(count, {
              childList: true,
              characterData: true,
              subtree: true,
            });
            input.value = 's7';
            input.dispatchEvent(new Event('input'));
          }),
      );
      filters.push(ms);
      await p.close();
    }
    const sqlMs = median(reads);
    const loadMs = median(loads);
    figs.push(
      figure({
        id: 'console.fleet.interactive',
        what: `fleet page of ${FLEET} nodes (a page of ${PAGE_SIZE} and the counts), navigation to interactive (median of ${LOADS})`,
        value: loadMs,
        unit: 'ms',
        limit: { what: 'SQL read of the same page and counts (readFleetPage)', value: sqlMs, unit: 'ms' },
        target: { text: '< 2 s', met: loadMs < 2000 },
        bound: `the counts by state read every node_status row (inventory.fleet_counts); the page itself is ${PAGE_SIZE} rows by name (keyset). The console's own start, which reads the whole fleet once for its live stream, took ${consoleStart.toFixed(1)} s`,
        detail: { loads, reads, pageBytes, consoleStart },
      }),
    );
    figs.push(
      figure({
        id: 'console.fleet.filter',
        what: `fleet page of ${FLEET} nodes, a site typed in the filter to its page drawn, 150 ms typing pause included (median of ${LOADS})`,
        value: median(filters),
        unit: 'ms',
        limit: { what: 'navigation to interactive', value: loadMs, unit: 'ms' },
        detail: { filters },
      }),
    );
  } finally {
    await browser.close();
    await console_?.stop();
    await mesh.stop();
  }
});
