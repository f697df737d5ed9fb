// mesh serve's numbers in the Prometheus text format (prom-client): the
// control plane's own work, counted as it happens in this process, and the
// fleet, read from SQL at each scrape (inventory.fleet_metrics and
// assignment.fleet_metrics count it there, where a DBA reads the same numbers;
// this file only declares each series with its help and copies rows in).
// No series carries a node's name: the label sets stay the same size at
// 100,000 nodes as at three. prom-client's default process metrics are left
// out: three of its nodejs_* gauges end in _total, which promtool refuses as
// a counter's suffix on a gauge; node_exporter's systemd collector tells a
// unit's CPU and memory instead.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Stores } from './context.js';

/** Each fleet series fleet_metrics() may return, with its help and label names. */
const FLEET: { name: string; help: string; labels: string[] }[] = [
  {
    name: 'mesh_nodes',
    help: 'Nodes by state, as mesh node list says it: here, out_of_touch, never_spoken.',
    labels: ['state'],
  },
  { name: 'mesh_nodes_stale', help: 'Nodes whose held declaration has expired (they report stale).', labels: [] },
  { name: 'mesh_nodes_failing', help: 'Nodes whose last apply left resources failing.', labels: [] },
  {
    name: 'mesh_nodes_by_agent_version',
    help: 'Nodes by the mesh-host version their reports name; unknown for none named yet.',
    labels: ['version'],
  },
  {
    name: 'mesh_nodes_outdated',
    help: "Nodes whose agent is outside the skew rule or behind the control plane's version (mesh node list --outdated).",
    labels: [],
  },
  {
    name: 'mesh_drift_fighting_resources',
    help: 'Resources put back more often in the last hour than the drift setting allows (FIGHTING in mesh drift).',
    labels: [],
  },
  {
    name: 'mesh_outbox_owed_rows',
    help: 'Messages the control plane owes nodes and the broker has not confirmed.',
    labels: [],
  },
  {
    name: 'mesh_outbox_oldest_owed_seconds',
    help: 'Age of the oldest message still owed; 0 when nothing is owed.',
    labels: [],
  },
  { name: 'mesh_outbox_owed_attempts', help: 'Publish attempts, summed over the messages still owed.', labels: [] },
  {
    name: 'mesh_rollouts',
    help: 'Rollouts by state; halted means a wave failed and nothing more goes out.',
    labels: ['state'],
  },
  { name: 'mesh_rollout_wave', help: 'The wave the open rollout has out now; 0 when none is open.', labels: [] },
  {
    name: 'mesh_rollout_nodes',
    help: 'Nodes of the open rollout by state: applied, failing, waiting; 0 when none is open.',
    labels: ['state'],
  },
  {
    name: 'mesh_declarations_expired',
    help: 'Enrolled nodes whose newest declaration has passed its expiry.',
    labels: [],
  },
  {
    name: 'mesh_declaration_oldest_age_seconds',
    help: "Age of the oldest signing among enrolled nodes' newest declarations.",
    labels: [],
  },
];

export type Outcome = 'ok' | 'refused' | 'retried' | 'set_aside' | 'unhandled';

export class ServeMetrics {
  readonly registry = new Registry();
  /** Control messages by kind and what became of them: ok (committed), refused (acked, never recordable), retried (handed back), set_aside (inventory.dead_letters after a few tries), unhandled. */
  readonly handled: Counter<'kind' | 'outcome'>;
  readonly handlerSeconds: Histogram<'kind'>;
  readonly heards: Counter;
  readonly drainPublished: Counter;
  readonly drainFailed: Counter;
  readonly drainBatchSeconds: Histogram;
  readonly brokerReconnects: Counter;
  private readonly fleet = new Map<string, Gauge<string>>();

  constructor(private readonly stores: Pick<Stores, 'inventory' | 'assignment'>) {
    const registers = [this.registry];
    this.handled = new Counter({
      name: 'mesh_messages_handled_total',
      help: 'Control messages handled, by kind and outcome (ok, refused, retried, unhandled).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.handlerSeconds = new Histogram({
      name: 'mesh_handler_duration_seconds',
      help: "Time a control message's handler took, its transaction included, by kind.",
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.heards = new Counter({
      name: 'mesh_heards_total',
      help: 'Heard messages taken in (batched into last_seen).',
      registers,
    });
    this.drainPublished = new Counter({
      name: 'mesh_drain_published_total',
      help: 'Owed messages published to node queues and confirmed by the broker.',
      registers,
    });
    this.drainFailed = new Counter({
      name: 'mesh_drain_failed_total',
      help: 'Owed messages taken from the outbox and not confirmed (they stay owed).',
      registers,
    });
    this.drainBatchSeconds = new Histogram({
      name: 'mesh_drain_batch_seconds',
      help: "One drain batch: take from the outbox, publish, wait for the broker's confirms, mark.",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.brokerReconnects = new Counter({
      name: 'mesh_broker_reconnects_total',
      help: 'Times serve consumed the control queue again after losing its broker connection.',
      registers,
    });
    for (const f of FLEET)
      this.fleet.set(f.name, new Gauge({ name: f.name, help: f.help, labelNames: f.labels, registers }));
  }

  /** Read the fleet from SQL into its gauges: at each scrape, so the numbers are as fresh as the scrape. */
  async refreshFleet(): Promise<void> {
    const rows = (
      await Promise.all([
        this.stores.inventory<Row[]>`select metric, labels, value from inventory.fleet_metrics()`,
        this.stores.assignment<Row[]>`select metric, labels, value from assignment.fleet_metrics()`,
      ])
    ).flat();
    for (const g of this.fleet.values()) g.reset();
    for (const r of rows) {
      const g = this.fleet.get(r.metric);
      // A series SQL counts and this file does not declare would go unexported without a word.
      if (!g) throw new Error(`fleet_metrics() returned ${r.metric}, which /metrics does not declare`);
      g.set(r.labels as Record<string, string>, r.value);
    }
  }

  /** The whole exposition, the fleet read now. */
  async text(): Promise<string> {
    await this.refreshFleet();
    return this.registry.metrics();
  }
}

interface Row {
  metric: string;
  labels: Record<string, string>;
  value: number;
}
