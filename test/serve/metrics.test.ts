// mesh serve's /metrics, /healthz and /readyz, scraped by a real Prometheus
// (Debian's package, its own throwaway config, data and port): Prometheus's
// own query API must see the fleet's nodes here, and see one fall out of touch
// when its host stops; promtool must find the exposition clean; no series may
// name a node (one series a node is 100,000 series); the alert rules kept in
// bundle/prometheus load into that Prometheus and pass promtool's rule tests.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { freshMesh, spawnProc, MESH, type Mesh, type Proc } from '../harness/mesh.js';
import { freePort } from '../harness/ports.js';
import { runAny } from '../../src/sys/proc.js';
import { VERSION } from '../../src/sys/version.js';

const RULES = fileURLToPath(new URL('../../../bundle/prometheus/mesh.rules.yml', import.meta.url));
const NODES = ['pm-a', 'pm-b', 'pm-c'];

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  /** ADDRESS:PORT serve's endpoint answers on. */
  at: string;
  prom?: Proc;
  promUrl: string;
  dir: string;
  hosts: Map<string, Proc>;
}

const M = suite<Ctx>('serve metrics, scraped by Prometheus');

async function until<T>(what: string, f: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await f();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${last ? ` (last: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** One instant query to Prometheus's HTTP API: the value of the single series it returns, or undefined for none. */
async function query(ctx: Ctx, q: string): Promise<number | undefined> {
  const r = await fetch(`${ctx.promUrl}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await r.json()) as { status: string; data: { result: { value: [number, string] }[] } };
  if (body.status !== 'success') throw new Error(`query ${q}: ${JSON.stringify(body)}`);
  const [one] = body.data.result;
  return one ? Number(one.value[1]) : undefined;
}

M.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-prometheus-'));
  ctx.hosts = new Map();
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.at = (await ctx.serve.waitFor(/metrics, health and readiness on http:\/\/(\S+) /))[1]!;
  for (const n of NODES) ctx.hosts.set(n, (await ctx.mesh.joined(n)).proc);
  for (let i = 0; i < 3; i++) {
    const t0 = Date.now();
    const first = await fetch(`http://${ctx.at}/metrics`, { signal: AbortSignal.timeout(30_000) });
    if (first.status !== 200) throw new Error(`/metrics answered ${first.status}: ${await first.text()}`);
    console.log(`scrape ${i}: ${Date.now() - t0} ms`);
  }
  const port = await freePort();
  ctx.promUrl = `http://127.0.0.1:${port}`;
  // JSON is YAML: the config is written as the data it is.
  const config = join(ctx.dir, 'prometheus.yml');
  writeFileSync(
    config,
    JSON.stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [RULES],
      scrape_configs: [{ job_name: 'mesh', static_configs: [{ targets: [ctx.at] }] }],
    }),
  );
  ctx.prom = spawnProc(
    '/usr/bin/prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(ctx.dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--web.console.templates=/nonexistent',
      '--web.console.libraries=/nonexistent',
    ],
    process.env,
  );
  await until('Prometheus ready', async () => (await fetch(`${ctx.promUrl}/-/ready`)).ok);
});

M.after(async (ctx) => {
  await ctx.prom?.stop();
  await ctx.mesh?.stop();
  rmSync(ctx.dir, { recursive: true, force: true });
});

M('Prometheus sees every node here, then one fall out of touch when its host stops', async (ctx) => {
  await until('Prometheus to see 3 nodes here', async () => (await query(ctx, 'mesh_nodes{state="here"}')) === 3);
  assert.is(await query(ctx, 'mesh_nodes{state="out_of_touch"}'), 0);
  assert.is(await query(ctx, 'up{job="mesh"}'), 1, 'the scrape succeeds');

  await ctx.hosts.get('pm-c')!.stop();
  // Out of touch is 150 s of silence: the stopped host's last word is moved back instead of waited for.
  await ctx.mesh.store.admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'pm-c'`;
  await until('Prometheus to see 2 here', async () => (await query(ctx, 'mesh_nodes{state="here"}')) === 2);
  assert.is(await query(ctx, 'mesh_nodes{state="out_of_touch"}'), 1, 'the stopped node is out of touch');
  assert.is(await query(ctx, 'mesh_nodes{state="never_spoken"}'), 0);
});

M("serve's own work is counted: each enrolment handled, each owed declaration published", async (ctx) => {
  const enrolled = await until('enrolments counted', async () =>
    query(ctx, 'sum(mesh_messages_handled_total{kind="enrol",outcome="ok"})'),
  );
  assert.is(enrolled, NODES.length);
  assert.ok(((await query(ctx, 'sum(mesh_drain_published_total)')) ?? 0) >= NODES.length, 'declarations published');
  assert.ok(
    ((await query(ctx, 'sum(mesh_handler_duration_seconds_count{kind="enrol"})')) ?? 0) >= NODES.length,
    'handler latency observed',
  );
});

M('nodes by agent version: each host reports the version it runs, one series a version (V1)', async (ctx) => {
  await until(`Prometheus to see ${NODES.length} nodes on mesh-host ${VERSION}`, async () =>
    (await query(ctx, `sum(mesh_nodes_by_agent_version{version="${VERSION}"})`)) === NODES.length ? true : undefined,
  );
  assert.is(await query(ctx, 'count(mesh_nodes_by_agent_version)'), 1, 'one series for one version in the fleet');
  assert.is(await query(ctx, 'mesh_nodes_outdated'), 0, 'agents as new as the control plane are not outdated');
});

M('promtool finds the exposition clean, and no series names a node', async (ctx) => {
  const text = await (await fetch(`http://${ctx.at}/metrics`)).text();
  const r = await runAny('promtool', ['check', 'metrics'], { input: text });
  assert.is(r.code, 0, `promtool check metrics:\n${r.stdout}${r.stderr}`);
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#'))) {
    const labels = /\{(.*)\}/.exec(line)?.[1] ?? '';
    for (const n of NODES) assert.not.ok(labels.includes(`"${n}"`), `a series names node ${n}: ${line}`);
  }
  assert.match(text, /^mesh_outbox_owed_rows \d/m);
  assert.match(text, /^mesh_rollouts\{state="halted"\} 0$/m);
});

M('healthz says alive; readyz is ready, and not when a migration has not run', async (ctx) => {
  const h = await fetch(`http://${ctx.at}/healthz`);
  assert.is(h.status, 200);
  const ready = await fetch(`http://${ctx.at}/readyz`);
  const body = (await ready.json()) as { ready: boolean; checks: Record<string, string> };
  assert.is(ready.status, 200, JSON.stringify(body));
  assert.is(body.checks['store inventory'], 'ok');
  assert.is(
    body.checks['store audit'],
    undefined,
    'serve opens no audit store: it neither reads nor writes the history (C3)',
  );
  assert.is(body.checks.broker, 'ok');
  // As if the code were newer than the store: the newest inventory migration not on record.
  const [last] = await ctx.mesh.store
    .admin`delete from inventory.migration_digest where name = (select max(name) from inventory.migration_digest) returning *`;
  try {
    const behind = await fetch(`http://${ctx.at}/readyz`);
    const b = (await behind.json()) as { ready: boolean; checks: Record<string, string> };
    assert.is(behind.status, 503);
    assert.match(b.checks['store inventory']!, new RegExp(`migrations not run: ${last!.name}`));
  } finally {
    await ctx.mesh.store.admin`insert into inventory.migration_digest ${ctx.mesh.store.admin(last!)}`;
  }
});

M('an address that is not ADDRESS:PORT, or one already taken, is refused naming the setting', async (ctx) => {
  const bad = await runAny(process.execPath, [MESH, 'serve', '--metrics', 'localhost'], { env: ctx.mesh.env });
  assert.is.not(bad.code, 0);
  assert.match(bad.stderr, /the metrics address "localhost" is not ADDRESS:PORT.*MSHJ7/s);
  // A second serve on the first one's address: it must not run on without its endpoint.
  const second = await runAny(process.execPath, [MESH, 'serve'], {
    env: { ...ctx.mesh.env, MESH_SERVE_METRICS: ctx.at },
    timeoutMs: 60_000,
  });
  assert.is.not(second.code, 0);
  assert.match(second.stderr, new RegExp(`cannot serve metrics on ${ctx.at.replace(/\./g, '\\.')}.*MSHJ8`, 's'));
});

M("the alert rules are loaded into Prometheus and pass promtool's tests", async (ctx) => {
  const check = await runAny('promtool', ['check', 'rules', RULES]);
  assert.is(check.code, 0, `${check.stdout}${check.stderr}`);
  const rules = (await (await fetch(`${ctx.promUrl}/api/v1/rules`)).json()) as {
    data: { groups: { rules: { name: string; health: string }[] }[] };
  };
  const loaded = rules.data.groups.flatMap((g) => g.rules);
  assert.equal(loaded.map((r) => r.name).sort(), ['MeshNodeOutOfTouch', 'MeshOutboxOwedTooLong', 'MeshRolloutHalted']);
  assert.ok(
    loaded.every((r) => r.health !== 'err'),
    JSON.stringify(loaded),
  );
  // Each alert fires when its condition has held long enough, and not before; two serves count one fleet.
  const series = (name: string, labels: string, values: string) =>
    ['a', 'b'].map((i) => ({ series: `${name}{${labels}instance="${i}",job="mesh"}`, values }));
  const tests = {
    rule_files: [RULES],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [
          ...series('mesh_nodes', 'state="out_of_touch",', '0 0 1x20'),
          ...series('mesh_outbox_oldest_owed_seconds', '', '0+60x30'),
          ...series('mesh_rollouts', 'state="halted",', '0x5 1x10'),
        ],
        alert_rule_test: [
          { eval_time: '8m', alertname: 'MeshNodeOutOfTouch', exp_alerts: [] },
          {
            eval_time: '14m',
            alertname: 'MeshNodeOutOfTouch',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning' },
                exp_annotations: {
                  summary: '1 mesh node(s) out of touch for 10 minutes',
                  description: 'mesh node list names them; a node out of touch applies nothing new until it is back.',
                },
              },
            ],
          },
          { eval_time: '16m', alertname: 'MeshOutboxOwedTooLong', exp_alerts: [] },
          {
            eval_time: '23m',
            alertname: 'MeshOutboxOwedTooLong',
            exp_alerts: [
              {
                exp_labels: { severity: 'warning' },
                exp_annotations: {
                  summary: 'the oldest message mesh owes a node is 23m 0s old',
                  description: 'mesh outbox lists what is owed, to whom, and the last error.',
                },
              },
            ],
          },
          { eval_time: '5m', alertname: 'MeshRolloutHalted', exp_alerts: [] },
          {
            eval_time: '8m',
            alertname: 'MeshRolloutHalted',
            exp_alerts: [
              {
                exp_labels: { severity: 'critical' },
                exp_annotations: {
                  summary: 'a mesh rollout halted',
                  description:
                    'mesh rollout status names the nodes and why; mesh rollout resume or mesh rollout abort.',
                },
              },
            ],
          },
        ],
      },
    ],
  };
  const file = join(ctx.dir, 'rules.test.yml');
  writeFileSync(file, JSON.stringify(tests));
  const r = await runAny('promtool', ['test', 'rules', file]);
  assert.is(r.code, 0, `promtool test rules:\n${r.stdout}${r.stderr}`);
});

M.run();
