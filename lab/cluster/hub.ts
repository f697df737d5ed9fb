// The cluster scenario's hands on the first node, run inside its namespaces
// with the control plane's environment (MESH_HOME and MESH_STORE_* as paths,
// as the bundle's `mesh` wrapper sets them). What it is told arrives on stdin
// and what it answers is JSON on stdout: token secrets travel over a pipe,
// never argv or env.
//   tokens   {names, ttl}            -> [{name, token}]   one token per name, issued concurrently
//   check    {confirmed, nodes}      -> the counts the scenario asserts
//   retire   {names} or {prefix}     -> {retired}         the simulated nodes go, and one re-declare
//   connections {}                   -> [{node, user, peerHost, clientName}]  the broker's connections, each with its broker node
import { withStore } from '../../src/store/with_store.js';
import { issueToken } from '../../src/inventory/token.js';
import { nodeRetire } from '../../src/inventory/node.js';
import { redeclare } from '../../src/provision/redeclare.js';
import { ManagementApi } from '../../src/broker/management.js';
import { management } from '../../src/broker/admin.js';
import { readBroker } from '../../src/home/home.js';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text || '{}') as Record<string, any>;

async function pool<T, R>(items: T[], width: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await f(items[i]!);
    }),
  );
  return out;
}

async function tokens(): Promise<unknown> {
  return pool(input.names as string[], 8, async (name) => {
    const t = await issueToken(name, { site: input.site ?? 'b', ttl: input.ttl ?? '10m' });
    return { name, token: t.token };
  });
}

async function check(): Promise<unknown> {
  const confirmed = input.confirmed as string[];
  const nodes = input.nodes as string[];
  const recorded = await withStore('inventory', async (sql) => {
    const [r] = await sql<
      { n: number }[]
    >`select count(*)::int as n from inventory.report_received where message_id = any(${confirmed}::text[])`;
    return r!.n;
  });
  // Every enrolled node's newest declared serial against the serial it last reported.
  const behind = await withStore(
    'assignment',
    async (sql) => sql<{ node: string; newest: string }[]>`
    select node, max(serial)::text as newest from assignment.declaration_status group by node`,
  );
  const reported = await withStore(
    'inventory',
    async (sql) => sql<{ name: string; reported_serial: string | null }[]>`
    select name, reported_serial::text from inventory.node_status`,
  );
  const rep = new Map(reported.map((r) => [r.name, r.reported_serial === null ? null : Number(r.reported_serial)]));
  const notNewest = behind
    .filter((d) => rep.has(d.node) && rep.get(d.node) !== Number(d.newest))
    .map((d) => `${d.node} reported ${rep.get(d.node)}, newest ${d.newest}`);
  // E1: a token is one row, spent at most once; a node spends one token to enrol.
  const spent = await withStore(
    'inventory',
    async (sql) => sql<{ node: string; spent: number; by_other: number }[]>`
    select t.node, count(*) filter (where t.spent_at is not null)::int as spent,
           count(*) filter (where t.spent_at is not null and t.spent_by is distinct from n.identity_key)::int as by_other
      from inventory.token t join inventory.node n on n.name = t.node
     where t.node = any(${nodes}::text[]) group by t.node`,
  );
  // And as the audit history saw it: one token-spent event per token, ever.
  const hashes = await withStore('inventory', async (sql) =>
    (
      await sql<{ h: string }[]>`
    select encode(token_hash, 'hex') as h from inventory.token where node = any(${nodes}::text[])`
    ).map((r) => r.h),
  );
  const events = await withStore(
    'audit',
    async (sql) => sql<{ token: string; n: number }[]>`
    select detail->>'token' as token, count(*)::int as n from audit.event
     where kind = 'token-spent' and detail->>'token' = any(${hashes}::text[]) group by 1`,
  );
  const enrolled = await withStore(
    'inventory',
    async (sql) => sql<{ name: string }[]>`
    select name from inventory.node where name = any(${nodes}::text[]) and enrolled_at is not null`,
  );
  return {
    confirmed: confirmed.length,
    recorded,
    notNewest,
    nodesChecked: behind.filter((d) => rep.has(d.node)).length,
    enrolled: enrolled.length,
    spentTwice: spent
      .filter((s) => s.spent > 1 || s.by_other > 0)
      .map((s) => `${s.node}: ${s.spent} spent, ${s.by_other} by another identity`),
    spentTokens: spent.reduce((a, s) => a + s.spent, 0),
    spentEvents: events.reduce((a, e) => a + e.n, 0),
    spentTwiceAudited: events
      .filter((e) => e.n > 1)
      .map((e) => `token ${e.token.slice(0, 12)}: ${e.n} token-spent events`),
  };
}

async function retire(): Promise<unknown> {
  // By prefix: whatever simulated nodes an earlier run left.
  const names = input.prefix
    ? await withStore('inventory', async (sql) =>
        (
          await sql<
            { name: string }[]
          >`select name from inventory.node where starts_with(name, ${input.prefix as string})`
        ).map((r) => r.name),
      )
    : (input.names as string[]);
  await pool(names, 4, (n) =>
    nodeRetire(n).catch((err) => {
      if (!/no node named/.test((err as Error).message)) throw err;
    }),
  );
  const { redeclared } = await redeclare();
  return { retired: names.length, redeclared: redeclared.length };
}

async function connections(): Promise<unknown> {
  const m = management(readBroker());
  return new ManagementApi({ url: m.url, user: m.user, password: m.password }).connections(m.vhost);
}

const ops: Record<string, () => Promise<unknown>> = { tokens, check, retire, connections };
try {
  const op = ops[process.argv[2] ?? ''];
  if (!op) throw new Error(`say what: ${Object.keys(ops).join(', ')}`);
  process.stdout.write(JSON.stringify(await op()) + '\n');
  process.exit(0);
} catch (err) {
  process.stderr.write(`cluster hub: ${(err as Error).message}\n`);
  process.exit(1);
}
