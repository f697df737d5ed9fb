// Nothing lost when a control plane and a broker node die mid-burst. Broker nodes on b1 and b2 are joined to the hub's with the
// README's commands (lab/cluster/brokers.ts). Two `mesh serve` (the first
// node's, and a second on b1 whose list of broker nodes starts at b2's, over
// TLS pinned to the fingerprint the mesh recorded) compete for mesh.control
// while 50 simulated hosts enrol at once over TLS through the lab's NAT and
// overlay (each its own token and account, dialling every broker of its token
// with the host's own link, so they spread over the three nodes; one token has
// expired, and is refused and retried with a fresh one), a `declare --all`
// runs, and 1,000 reports are sent. Mid-burst the first node's serve and b2's
// broker node are SIGKILLed at once. At that moment the management API says
// which connections are on b2's node: simulated hosts (how many is said) and
// b1's serve must be; afterwards each of those hosts connected to another
// node by itself (its link's word and the management API), and b1's serve
// consumes mesh.control on another node (its log). Then, counted: every report
// the broker confirmed to a sender is a row in SQL (by its message id), every
// node reported its newest serial, every enrolment succeeded or was refused
// with the one clear refusal and then succeeded on retry, and no token was
// spent twice; b2's mesh-host starts its broker node again and every quorum
// queue (mesh.control, mesh.build) lists it as a member, online, caught up to
// the leader's commit index.
//
// Enrolments in flight at the kill, made certain: the simulated hosts enrol
// with mesh-host's own enrolment (host/enrol.ts), and a group of them whose
// first broker is b2's node by their name (up to 8) enrols only once both
// serves are held (SIGSTOP). Each sends its request through b2's node (its
// 'sent' step says where) and waits; no welcome can come. Then b2's broker
// node and the first node's serve are SIGKILLed and b1's serve let go
// (SIGCONT). Each of those hosts lost its connection before it read a welcome;
// it dials the next broker, with the password it chose where a serve already
// spent its token and set it, sends the same request again ('again' in SQL)
// and must end enrolled, its token spent once. The count is said.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { Scenario } from './scenario.js';
import { DIST, NODE, until, sleep, type LabHandle } from '../handle.js';
import { waitSettled } from '../mesh_ops.js';
import { ensureSecondServe, removeSecondServe, serveLogPath, servePidPath, SERVE_MACHINE } from '../cluster/serve2.js';
import {
  ensureBrokerNodes,
  brokerHop,
  beamPid,
  erlNodeOf,
  quorumStatus,
  online,
  type Member,
} from '../cluster/brokers.js';
import { overlayNodes } from '../mesh_ops.js';
import { CONTEXTS, storeVariable } from '../../src/store/contexts.js';
import { REFUSAL } from '../../src/wire/enrol.js';
import { readToken } from '../../src/wire/token.js';
import { startOf } from '../../host/link/link.js';

const HOSTS = 50;
const REPORTS_PER_HOST = 20;
const SIM_MACHINE = 'b2';
const PREFIX = 'lab-sim-';
/** The broker node killed with the serve: b1's serve starts on it, and the simulated hosts whose names start there. */
const KILLED_BROKER = 'b2';
const QUORUM = ['mesh.control', 'mesh.build'];
/** At most this many enrolments are held in flight on the killed node. */
const IN_FLIGHT = 8;

/** The cluster scenario's tool on the first node, with the control plane's environment (paths only). */
async function hubTool<T>(h: LabHandle, op: string, input: unknown): Promise<T> {
  const env = [
    `MESH_HOME=${join(h.hubState(), 'home')}`,
    ...CONTEXTS.map((c) => `${storeVariable(c)}=${join(h.hubState(), 'store', `${c}.url`)}`),
  ];
  const out = await h.ok(h.hub, ['/usr/bin/env', ...env, NODE, join(DIST, 'lab/cluster/hub.js'), op], {
    input: JSON.stringify(input),
  });
  return JSON.parse(out) as T;
}

interface Tok {
  name: string;
  token: string;
}
interface Conn {
  node: string;
  user: string;
  peerHost: string;
  clientName: string;
}
const SIM_CONN = /^mesh-host (lab-sim-\S+)$/;

/** The simulated hosts, in SIM_MACHINE's namespaces, driven over IPC (tokens never in argv). */
function startSims(h: LabHandle): ChildProcess {
  const s = h.state.machines[SIM_MACHINE]!;
  return spawn('nsenter', ['-t', String(s.pid), '-m', '-n', '--', NODE, join(DIST, 'lab/cluster/burst.js')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function serveRecord(h: LabHandle): { pid: number } {
  return JSON.parse(readFileSync(join(h.hostDir(h.hub), 'services', 'mesh-serve.pid'), 'utf8')) as { pid: number };
}

function secondServePid(h: LabHandle): number {
  return (JSON.parse(readFileSync(servePidPath(h, SERVE_MACHINE)!, 'utf8')) as { pid: number }).pid;
}

/** What the simulated hosts said over IPC, as it came. */
class Said {
  readonly enrolled = new Set<string>();
  readonly burstDone = new Set<string>();
  readonly refusals: { name: string; reason: string }[] = [];
  readonly retried = new Set<string>();
  readonly lostRace: string[] = [];
  readonly enrolments = new Map<string, number>();
  /** Each host's enrolment steps (host/enrol.ts): sent through which broker, lost, the chosen password. */
  readonly steps = new Map<string, { kind: string; at?: string }[]>();
  /** Each simulated host's connections, in order, as its link said them: the broker and when. */
  readonly onBroker = new Map<string, { at: string; t: number }[]>();
  readonly linkSaid: string[] = [];
  progress = { published: 0, confirmed: 0, unconfirmed: 0, errors: [] as string[] };
  stopped: { confirmed: string[]; unconfirmed: number; errors: string[]; serials: Record<string, number> } | null =
    null;
  failure: string | null = null;
  readonly ready: Promise<void>;

  constructor(
    readonly h: LabHandle,
    readonly sims: ChildProcess,
  ) {
    this.ready = new Promise<void>((ok) =>
      sims.on('message', function first(m: any) {
        if (m.type === 'ready') {
          sims.off('message', first);
          ok();
        }
      }),
    );
    sims.on('message', (m: any) => this.take(m));
    sims.on('exit', (code) => {
      if (!this.stopped) this.failure = `the simulated hosts exited (${code})`;
    });
  }

  private take(m: any): void {
    if (m.type === 'enrolled') {
      this.enrolled.add(m.name);
      this.enrolments.set(m.name, (this.enrolments.get(m.name) ?? 0) + 1);
    } else if (m.type === 'contender-refused') this.lostRace.push(m.reason);
    else if (m.type === 'enrol-step' && !m.contender)
      this.steps.set(m.name, [...(this.steps.get(m.name) ?? []), { kind: m.kind, at: m.at }]);
    else if (m.type === 'connected')
      this.onBroker.set(m.name, [...(this.onBroker.get(m.name) ?? []), { at: m.at, t: Date.now() }]);
    else if (m.type === 'link') this.linkSaid.push(`${m.name}: ${m.line}`);
    else if (m.type === 'burst-done') this.burstDone.add(m.name);
    else if (m.type === 'progress') this.progress = m;
    else if (m.type === 'stopped') this.stopped = m;
    else if (m.type === 'error') this.failure = m.message;
    else if (m.type === 'refused') this.refused(m.name, m.reason);
  }

  /** Retry: a fresh token for that name (an unspent one is replaced), the same simulated host; once only. */
  private refused(name: string, reason: string): void {
    this.refusals.push({ name, reason });
    if (this.retried.has(name)) {
      this.failure = `${name} was refused again after its retry: ${reason}`;
      return;
    }
    this.retried.add(name);
    void hubTool<Tok[]>(this.h, 'tokens', { names: [name], ttl: '10m' }).then(
      (t) => this.sims.send({ type: 'enrol', hosts: t, reports: REPORTS_PER_HOST }),
      (err) => {
        this.failure = (err as Error).message;
      },
    );
  }

  /** The broker each of the host's requests was last sent through. */
  sentOn(n: string): string | undefined {
    return this.steps
      .get(n)
      ?.filter((x) => x.kind === 'sent')
      .at(-1)?.at;
  }

  /** The brokers a host sent its request through other than the one given. */
  sentElsewhere(n: string, not: string): (string | undefined)[] {
    return this.steps
      .get(n)!
      .filter((x) => x.kind === 'sent')
      .map((x) => x.at)
      .filter((a) => a !== not);
  }
}

type Say = (line: string) => void;

/** The fleet of this run: names, tokens, and which enrolments are held in flight on the node to be killed. */
interface Plan {
  names: string[];
  expired: string;
  /** Two identities race for this one's token (E1): exactly one may enrol. */
  raced: string;
  tokens: Tok[];
  inFlight: string[];
  early: Tok[];
  killedAt: string;
  b1Addr: string | undefined;
}

async function plan(h: LabHandle, say: Say): Promise<Plan> {
  // Names of this run's own: a name retired and enrolled again with the composition it was last declared is not
  // declared again, and that is not what is tested here.
  const run = randomBytes(2).toString('hex');
  const names = Array.from({ length: HOSTS }, (_, i) => `${PREFIX}${run}-${String(i).padStart(2, '0')}`);
  const expiredName = names[0]!;
  const raced = names[1]!;
  await ensureBrokerNodes(h, say);
  // b1's serve starts on b2's broker node (its TLS listener, pinned), so the kill takes it there.
  const killedHop = await brokerHop(h, KILLED_BROKER);
  const killedAt = `${killedHop.host}:${killedHop.port}`;
  await ensureSecondServe(h, say, killedHop);
  const b1Addr = (await overlayNodes(h))?.nodes.find((n) => n.name === SERVE_MACHINE)?.address;
  for (const q of QUORUM)
    say(`${q}: members ${(await quorumStatus(h, q)).map((m) => `${m.node} ${m.state}`).join(', ')}`);

  // One token already expired: its enrolment is refused, and retried with a fresh token.
  const expired = await hubTool<Tok[]>(h, 'tokens', { names: [expiredName], ttl: '1s' });
  const tokens = [...expired, ...(await hubTool<Tok[]>(h, 'tokens', { names: names.slice(1), ttl: '10m' }))];
  await sleep(1100);
  say(`issued ${tokens.length} tokens (${expiredName}'s lives 1 s and has expired)`);
  // The group held in flight: hosts whose first broker (by name, as host/enrol.ts is given it here) is the node to be killed.
  const firstBroker = (t: Tok) => {
    const bs = readToken(t.token).brokers;
    return bs[startOf(t.name, bs.length)]!.address;
  };
  // Half of those at most: the rest are there enrolled, holding the host's link, when the node dies.
  const startThere = tokens
    .filter((t) => t.name !== expiredName && t.name !== raced && firstBroker(t) === killedAt)
    .map((t) => t.name);
  const inFlight = startThere.slice(0, Math.min(IN_FLIGHT, Math.floor(startThere.length / 2)));
  if (inFlight.length === 0)
    throw new Error(
      `fewer than two simulated hosts' first broker is ${killedAt}: ${tokens.map((t) => firstBroker(t)).join(', ')}`,
    );
  const early = tokens.filter((t) => !inFlight.includes(t.name));
  return { names, expired: expiredName, raced, tokens, inFlight, early, killedAt, b1Addr };
}

/** What the kill left to check: who was on the killed node, and the log marks after it. */
interface Kill {
  atMs: number;
  b1Mark: number;
  simsOnKilled: string[];
  inFlightOnKilled: string[];
}

/** The burst: enrolments and reports, both serves held while the group enrols, then the kill and a declare --all. */
class Burst {
  heldAt = 0;
  kill: Kill | null = null;
  declared: Promise<void> | null = null;
  readonly holdPids: number[] = [];
  private readonly killedNode: string;

  constructor(
    readonly h: LabHandle,
    readonly say: Say,
    readonly p: Plan,
    readonly s: Said,
  ) {
    this.killedNode = erlNodeOf(h, KILLED_BROKER)!;
  }

  async run(t0: number): Promise<Kill> {
    const { h, p, s } = this;
    await s.ready;
    s.sims.send({
      type: 'enrol',
      hosts: p.early.map((t) => (t.name === p.raced ? { ...t, contenders: 2 } : t)),
      reports: REPORTS_PER_HOST,
    });
    this.say(
      `${p.early.length} simulated hosts on ${SIM_MACHINE} enrol at once, each then sending ${REPORTS_PER_HOST} reports; ${p.inFlight.length} more (${p.inFlight.map((n) => n.slice(-2)).join(' ')}), whose first broker is ${p.killedAt}, wait to enrol while both serves are held`,
    );
    await until(
      async () => {
        if (s.failure) throw new Error(s.failure);
        s.sims.send({ type: 'progress' });
        if (!this.heldAt && (await this.allListed())) this.hold();
        if (!this.kill && this.heldAt && p.inFlight.every((n) => s.sentOn(n))) await this.killMidBurst();
        return s.enrolled.size === HOSTS && s.burstDone.size === HOSTS && this.declared !== null;
      },
      240,
      () =>
        `the bursts did not finish: ${s.enrolled.size}/${HOSTS} enrolled, ${s.burstDone.size} sent their reports, ${s.progress.confirmed} confirmed; refused ${JSON.stringify(s.refusals)}; errors ${s.progress.errors.join('; ')}`,
    );
    await this.declared;
    const lostCount = [...s.steps.values()].filter((st) => st.some((x) => x.kind === 'lost')).length;
    this.say(
      `all ${HOSTS} enrolled in ${Math.round((Date.now() - t0) / 1000)}s (${lostCount} host(s) lost a broker while waiting and sent again); ${s.progress.confirmed} reports confirmed so far`,
    );
    return this.kill!;
  }

  /**
   * The first hosts enrolled and connected and their reports flow. The management API lists connections from its
   * statistics, some seconds behind: it must list every one of them first, or the kill would find no simulated
   * host on the node.
   */
  private async allListed(): Promise<boolean> {
    const { p, s } = this;
    return (
      s.progress.confirmed >= 150 &&
      p.early.every((t) => s.enrolled.has(t.name) && s.onBroker.has(t.name)) &&
      (await hubTool<Conn[]>(this.h, 'connections', {}).then(
        (cs) => p.early.every((t) => cs.some((c) => c.clientName === `mesh-host ${t.name}`)),
        () => false,
      ))
    );
  }

  /** Both serves held (SIGSTOP), and the in-flight group sent to enrol: no welcome can come. */
  private hold(): void {
    const { p, s } = this;
    this.holdPids.push(serveRecord(this.h).pid, secondServePid(this.h));
    for (const pid of this.holdPids) process.kill(pid, 'SIGSTOP');
    this.heldAt = Date.now();
    this.say(
      `held both serves (SIGSTOP, pids ${this.holdPids.join(', ')}) with ${s.enrolled.size} enrolled and ${s.progress.confirmed} reports confirmed; the ${p.inFlight.length} enrol now`,
    );
    s.sims.send({
      type: 'enrol',
      hosts: p.tokens.filter((t) => p.inFlight.includes(t.name)),
      reports: REPORTS_PER_HOST,
    });
  }

  /** Every one of the group sent its request: kill one serve and a broker node, and declare --all beside it. */
  private async killMidBurst(): Promise<void> {
    const { h, p, s } = this;
    const pending = p.inFlight.filter((n) => s.sentOn(n) === p.killedAt && !s.enrolled.has(n));
    this.say(
      `in flight (request sent, no welcome read): ${p.inFlight.map((n) => `${n.slice(-2)} through ${s.sentOn(n)}`).join(', ')}`,
    );
    if (pending.length === 0)
      throw new Error(
        `no enrolment is in flight on ${p.killedAt}: ${p.inFlight.map((n) => `${n} sent through ${s.sentOn(n)}`).join('; ')}`,
      );
    const simsOnKilled = await this.whoIsOnKilled();
    const rec = serveRecord(h);
    const beam = beamPid(h, KILLED_BROKER);
    if (!beam) throw new Error(`${KILLED_BROKER}'s broker node is not running`);
    const b1Mark = h.mark(serveLogPath(h));
    const atMs = Date.now();
    process.kill(rec.pid, 'SIGKILL');
    process.kill(beam, 'SIGKILL');
    this.kill = { atMs, b1Mark, simsOnKilled, inFlightOnKilled: pending };
    // b1's serve goes on: its connection died with the node while it was held.
    process.kill(secondServePid(h), 'SIGCONT');
    this.say(
      `SIGKILLed ${h.hub}'s mesh serve (pid ${rec.pid}, held) and ${KILLED_BROKER}'s broker node (${this.killedNode}, pid ${beam}) with ${s.enrolled.size} of ${HOSTS} enrolled, ${pending.length} enrolment(s) in flight on it, ${s.progress.published} reports sent and ${s.progress.confirmed} confirmed; ${SERVE_MACHINE}'s serve let go (SIGCONT) after ${((Date.now() - this.heldAt) / 1000).toFixed(1)} s held`,
    );
    const at = { enrolled: s.enrolled.size, confirmed: s.progress.confirmed };
    this.declared = h.meshOk(['declare', '--all', '--json']).then((out) => {
      const rows = JSON.parse(out) as unknown[];
      this.say(
        `mesh declare --all (begun with ${at.enrolled} enrolled, ${at.confirmed} reports confirmed): ${rows.length} declarations owed`,
      );
    });
  }

  /** Who is on the node about to die, by the broker's own word (each connection's node); b1's serve must be. */
  private async whoIsOnKilled(): Promise<string[]> {
    const { p } = this;
    const conns = await hubTool<Conn[]>(this.h, 'connections', {});
    const there = conns.filter((c) => c.node === this.killedNode);
    const simsOnKilled = there
      .map((c) => SIM_CONN.exec(c.clientName)?.[1])
      .filter((n): n is string => !!n && p.names.includes(n));
    const b1Serve = there.filter((c) => c.clientName.startsWith('mesh serve') && c.peerHost === p.b1Addr);
    this.say(
      `on ${this.killedNode} at the kill (management API): ${there.length} connection(s); ${simsOnKilled.length} of the ${HOSTS} simulated hosts (${simsOnKilled.length ? simsOnKilled.map((n) => n.slice(-2)).join(' ') : 'none'}), ${b1Serve.length} of ${SERVE_MACHINE}'s serve (${b1Serve.map((c) => c.clientName).join(', ') || 'none'})`,
    );
    if (simsOnKilled.length === 0) {
      const nodes = new Map<string, number>();
      for (const c of conns) if (SIM_CONN.test(c.clientName)) nodes.set(c.node, (nodes.get(c.node) ?? 0) + 1);
      throw new Error(
        `no simulated host is on ${this.killedNode}, the node to be killed; they are on ${[...nodes].map(([n, k]) => `${n} (${k})`).join(', ') || 'no node'}`,
      );
    }
    if (!b1Serve.some((c) => c.clientName === 'mesh serve'))
      throw new Error(
        `${SERVE_MACHINE}'s serve is not on ${this.killedNode}, the node to be killed: ${JSON.stringify(conns.filter((c) => c.clientName.startsWith('mesh serve')))}`,
      );
    return simsOnKilled;
  }

  /** Let the held serves go, whatever happened. */
  release(): void {
    for (const pid of this.holdPids) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
  }
}

/** The enrolments in flight on the killed node: each lost its connection before a welcome, dialled on, and ended enrolled. */
function checkInFlight(say: Say, p: Plan, s: Said, k: Kill, killedNode: string): void {
  const lostThere = k.inFlightOnKilled.filter((n) =>
    s.steps.get(n)!.some((x) => x.kind === 'lost' && x.at === p.killedAt),
  );
  const chose = k.inFlightOnKilled.filter((n) => s.steps.get(n)!.some((x) => x.kind === 'chosen-password'));
  say(
    `enrolments in flight on ${killedNode} at the kill: ${k.inFlightOnKilled.length}; lost their connection there before a welcome: ${lostThere.length}; sent again through ${[...new Set(k.inFlightOnKilled.flatMap((n) => s.sentElsewhere(n, p.killedAt)))].join(', ') || 'no other node'}; dialled with the password they chose (the token already spent for them): ${chose.length}; enrolled: ${k.inFlightOnKilled.filter((n) => s.enrolled.has(n)).length} of ${k.inFlightOnKilled.length}`,
  );
  if (lostThere.length !== k.inFlightOnKilled.length)
    throw new Error(
      `not every enrolment in flight on ${killedNode} lost its connection there: ${k.inFlightOnKilled.filter((n) => !lostThere.includes(n)).join(', ')}`,
    );
  const notMoved = k.inFlightOnKilled.filter((n) => !s.enrolled.has(n) || s.sentElsewhere(n, p.killedAt).length === 0);
  if (notMoved.length)
    throw new Error(
      `an enrolment in flight on ${killedNode} did not end enrolled through another node: ${notMoved.join(', ')}`,
    );
}

/** The failover: b1's serve and every host that was on the killed node are on another node, by themselves. */
async function checkFailover(h: LabHandle, say: Say, p: Plan, s: Said, k: Kill, killedNode: string): Promise<void> {
  const moved = await h.waitLog(
    serveLogPath(h),
    /serve: consuming mesh\.control on (\S+:\d+)/,
    k.b1Mark,
    60,
    `${SERVE_MACHINE}'s serve did not consume mesh.control again after ${killedNode} died`,
  );
  const serveAt = moved[1]!;
  say(`${SERVE_MACHINE}'s serve, its broker node killed under it, consumes mesh.control again on ${serveAt} (its log)`);
  if (serveAt === p.killedAt) throw new Error(`${SERVE_MACHINE}'s serve came back on ${p.killedAt}, the killed node`);
  const after = (n: string) => (s.onBroker.get(n) ?? []).filter((c) => c.t >= k.atMs);
  await until(
    () => k.simsOnKilled.every((n) => after(n).some((c) => c.at !== p.killedAt)),
    120,
    () =>
      `not every simulated host on ${killedNode} connected to another node: ${k.simsOnKilled.filter((n) => !after(n).some((c) => c.at !== p.killedAt)).join(', ')}; their links said: ${s.linkSaid.slice(-5).join('; ')}`,
  );
  const where = new Map<string, number>();
  for (const n of k.simsOnKilled) {
    const a = after(n).find((c) => c.at !== p.killedAt)!.at;
    where.set(a, (where.get(a) ?? 0) + 1);
  }
  say(
    `the ${k.simsOnKilled.length} simulated hosts on ${killedNode} each connected to another node by themselves (their links): ${[...where].map(([a, n]) => `${n} to ${a}`).join(', ')}`,
  );
  let conns: Conn[] = [];
  const elsewhere = (n: string) => conns.some((c) => c.clientName === `mesh-host ${n}` && c.node !== killedNode);
  await until(
    async () => {
      conns = await hubTool<Conn[]>(h, 'connections', {}).catch(() => []);
      return k.simsOnKilled.every(elsewhere);
    },
    60,
    () =>
      `the management API does not show every simulated host that was on ${killedNode} on another node: ${k.simsOnKilled.filter((n) => !elsewhere(n)).join(', ')}`,
  );
  const byNode = new Map<string, number>();
  for (const n of k.simsOnKilled)
    for (const c of conns.filter((x) => x.clientName === `mesh-host ${n}`))
      byNode.set(c.node, (byNode.get(c.node) ?? 0) + 1);
  say(`the management API agrees: they are on ${[...byNode].map(([node, n]) => `${node} (${n})`).join(', ')}`);
}

type Check = {
  confirmed: number;
  recorded: number;
  notNewest: string[];
  nodesChecked: number;
  enrolled: number;
  spentTwice: string[];
  spentTokens: number;
  spentEvents: number;
  spentTwiceAudited: string[];
};

/** Settled: nothing owed, every node at its newest serial, every confirmed report a row, every token spent once. */
async function checkCounts(h: LabHandle, say: Say, p: Plan, s: Said): Promise<void> {
  let c: Check | null = null;
  await until(
    async () => {
      if (s.failure) throw new Error(s.failure);
      s.sims.send({ type: 'progress' });
      await waitSettled(h, 120);
      c = await hubTool<Check>(h, 'check', { confirmed: [], nodes: p.names });
      return c.notNewest.length === 0;
    },
    120,
    () =>
      `not every node reported its newest serial: ${c?.notNewest.slice(0, 10).join('; ')}; the simulated hosts said: ${s.progress.errors.join('; ') || 'nothing amiss'}`,
  );
  s.sims.send({ type: 'stop' });
  await until(() => s.stopped, 30, 'the simulated hosts did not hand over what was confirmed');
  const got = s.stopped!;
  c = await hubTool<Check>(h, 'check', { confirmed: got.confirmed, nodes: p.names });
  const burst = got.confirmed.filter((id) => id.includes('-burst')).length;
  say(
    `reports the broker confirmed to their senders: ${c.confirmed} (${burst} of the burst, ${c.confirmed - burst} answering declarations); recorded in SQL by message id: ${c.recorded}; unconfirmed (said, not dropped): ${got.unconfirmed}`,
  );
  if (burst + got.unconfirmed < HOSTS * REPORTS_PER_HOST)
    throw new Error(
      `${burst} of ${HOSTS * REPORTS_PER_HOST} burst reports were confirmed and ${got.unconfirmed} said unconfirmed: some were neither`,
    );
  if (c.recorded !== c.confirmed)
    throw new Error(
      `${c.confirmed - c.recorded} report(s) the broker confirmed are not a row in inventory.report_received`,
    );
  say(`every node at its newest serial: ${c.nodesChecked} nodes checked, none behind`);
  checkEnrolments(say, p, s, c);
  if (got.errors.length) say(`the simulated hosts said: ${got.errors.slice(0, 5).join('; ')}`);
}

/** Every enrolment done or refused with the one clear refusal and retried; no token spent twice; the race won once. */
function checkEnrolments(say: Say, p: Plan, s: Said, c: Check): void {
  const clear = s.refusals.filter((r) => r.reason === REFUSAL.reason);
  say(
    `enrolments: ${c.enrolled} of ${HOSTS} enrolled; refused ${s.refusals.length} (${s.refusals.map((r) => `${r.name}: "${r.reason}"`).join('; ') || 'none'}), each retried with a fresh token: ${[...s.retried].filter((n) => s.enrolled.has(n)).length} of ${s.retried.size} then enrolled`,
  );
  if (c.enrolled !== HOSTS) throw new Error(`${HOSTS - c.enrolled} simulated node(s) are not enrolled in SQL`);
  if (!s.refusals.some((r) => r.name === p.expired)) throw new Error(`${p.expired}'s expired token was not refused`);
  if (clear.length !== s.refusals.length)
    throw new Error(`a refusal was not the one clear refusal: ${JSON.stringify(s.refusals)}`);
  if ([...s.retried].some((n) => !s.enrolled.has(n)))
    throw new Error(
      `a refused enrolment did not succeed on retry: ${[...s.retried].filter((n) => !s.enrolled.has(n)).join(', ')}`,
    );
  say(`tokens spent: ${c.spentTokens} for ${HOSTS} nodes; spent twice: ${c.spentTwice.length}`);
  if (c.spentTwice.length || c.spentTokens !== HOSTS)
    throw new Error(`tokens spent wrongly: ${c.spentTwice.join('; ') || `${c.spentTokens} spent for ${HOSTS} nodes`}`);
  say(
    `the audit history: ${c.spentEvents} token-spent events for these tokens, ${c.spentTwiceAudited.length} token(s) with more than one`,
  );
  if (c.spentTwiceAudited.length || c.spentEvents !== HOSTS)
    throw new Error(
      `the audit history says tokens were spent wrongly: ${c.spentTwiceAudited.join('; ') || `${c.spentEvents} spent for ${HOSTS} nodes`}`,
    );
  say(
    `two identities raced for ${p.raced}'s token: ${s.enrolments.get(p.raced) ?? 0} enrolled, ${s.lostRace.length} refused (${s.lostRace.map((r) => `"${r}"`).join(', ')})`,
  );
  if (s.enrolments.get(p.raced) !== 1 || s.lostRace.length !== 1 || s.lostRace[0] !== REFUSAL.reason)
    throw new Error(
      `the race for one token was not won exactly once: ${s.enrolments.get(p.raced) ?? 0} enrolled, ${s.lostRace.length} refused`,
    );
}

/** The killed broker node: its mesh-host starts it again; it rejoins and its quorum queues catch up. */
async function checkQuorum(h: LabHandle, say: Say, killedNode: string): Promise<void> {
  const status: Record<string, Member[]> = {};
  await until(
    async () => {
      for (const q of QUORUM) status[q] = await quorumStatus(h, q).catch(() => []);
      return QUORUM.every((q) => {
        const ms = status[q]!;
        const leader = ms.find((m) => m.state === 'leader');
        const back = ms.find((m) => m.node === killedNode);
        return !!leader && !!back && online(back) && back.commit === leader.commit && ms.every(online);
      });
    },
    180,
    () => `${killedNode} did not come back into every quorum queue: ${JSON.stringify(status)}`,
  );
  for (const q of QUORUM)
    say(
      `${q}: members ${status[q]!.map((m) => m.node).join(', ')}; online ${status[q]!.filter(online)
        .map((m) => `${m.node} (${m.state}, commit ${m.commit})`)
        .join(', ')}`,
    );
}

export const cluster: Scenario = {
  name: 'cluster',
  proves:
    'with three broker nodes and two serves, 50 enrolments at once, a declare --all and 1,000 reports, one serve and the broker node that simulated hosts, enrolments in flight (request sent, welcome not read) and the other serve are on killed mid-burst lose nothing: they move to other nodes by themselves, every confirmed report is a row, every node at its newest serial, every enrolment done (those in flight on the killed node too) or refused clearly and retried, no token spent twice; the broker node rejoins every quorum queue, caught up',
  async run(h, say) {
    // A run before this one may have left its simulated nodes: they go first.
    await hubTool(h, 'retire', { prefix: PREFIX });
    const p = await plan(h, say);
    const t0 = Date.now();
    const b1Mark = h.mark(serveLogPath(h));
    const hubMark = h.mark(h.serviceLogPath('mesh-serve'));
    const hubLog = h.mark(h.hostLogPath(h.hub));
    const killedNode = erlNodeOf(h, KILLED_BROKER)!;
    const s = new Said(h, startSims(h));
    const burst = new Burst(h, say, p, s);
    try {
      const k = await burst.run(t0);
      checkInFlight(say, p, s, k, killedNode);
      await h.waitLog(
        h.hostLogPath(h.hub),
        /service mesh-serve had died; started it again/,
        hubLog,
        60,
        `${h.hub}'s host did not start its killed serve again`,
      );
      say(`${h.hub}'s mesh-host started its killed serve again`);
      await checkFailover(h, say, p, s, k, killedNode);
      await checkCounts(h, say, p, s);
      const log = h.readLog(serveLogPath(h), b1Mark);
      const onB1 = (log.match(/enrol: lab-sim-[0-9a-f]+-\d+ (enrolled|asked again)/g) ?? []).length;
      const again =
        (log + h.readLog(h.serviceLogPath('mesh-serve'), hubMark)).match(
          /enrol: lab-sim-[0-9a-f]+-\d+ asked again and was answered again/g,
        )?.length ?? 0;
      say(
        `the serve on ${SERVE_MACHINE} answered ${onB1} enrolment request(s); ${again} redelivered request(s) were answered again (the first node's log may miss what its killed serve did)`,
      );
      await checkQuorum(h, say, killedNode);
    } finally {
      burst.release();
      if (s.sims.exitCode === null) s.sims.kill('SIGKILL');
    }
    // Leave the lab as it was: the simulated nodes retired, one serve.
    await hubTool(h, 'retire', { names: p.names });
    await removeSecondServe(h);
    await waitSettled(h);
  },
};
