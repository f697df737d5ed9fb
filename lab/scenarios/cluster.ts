// Issue 19: nothing lost when a control plane and a broker node die
// mid-burst. Broker nodes on b1 and b2 are joined to the hub's with the
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

export const cluster: Scenario = {
  name: 'cluster',
  proves:
    'with three broker nodes and two serves, 50 enrolments at once, a declare --all and 1,000 reports, one serve and the broker node that simulated hosts, enrolments in flight (request sent, welcome not read) and the other serve are on killed mid-burst lose nothing: they move to other nodes by themselves, every confirmed report is a row, every node at its newest serial, every enrolment done (those in flight on the killed node too) or refused clearly and retried, no token spent twice; the broker node rejoins every quorum queue, caught up',
  async run(h, say) {
    // A run before this one may have left its simulated nodes: they go first.
    await hubTool(h, 'retire', { prefix: PREFIX });
    // Names of this run's own: a name retired and enrolled again with the
    // composition it was last declared is not declared again (see the report
    // of this scenario's branch), and that is not what is tested here.
    const run = randomBytes(2).toString('hex');
    const names = Array.from({ length: HOSTS }, (_, i) => `${PREFIX}${run}-${String(i).padStart(2, '0')}`);
    const EXPIRED = names[0]!;
    /** Two identities race for this one's token (E1): exactly one may enrol. */
    const RACED = names[1]!;
    await ensureBrokerNodes(h, say);
    // b1's serve starts on b2's broker node (its TLS listener, pinned), so the kill takes it there.
    const killedHop = await brokerHop(h, KILLED_BROKER);
    const killedAt = `${killedHop.host}:${killedHop.port}`;
    await ensureSecondServe(h, say, killedHop);
    const b1Addr = (await overlayNodes(h))?.nodes.find((n) => n.name === SERVE_MACHINE)?.address;
    for (const q of QUORUM)
      say(`${q}: members ${(await quorumStatus(h, q)).map((m) => `${m.node} ${m.state}`).join(', ')}`);

    const t0 = Date.now();
    // One token already expired: its enrolment is refused, and retried with a fresh token.
    const expired = await hubTool<Tok[]>(h, 'tokens', { names: [EXPIRED], ttl: '1s' });
    const tokens = [...expired, ...(await hubTool<Tok[]>(h, 'tokens', { names: names.slice(1), ttl: '10m' }))];
    await sleep(1100);
    say(`issued ${tokens.length} tokens (${EXPIRED}'s lives 1 s and has expired)`);
    // The group held in flight: hosts whose first broker (by name, as host/enrol.ts is given it here) is the node to be killed.
    const firstBroker = (t: Tok) => {
      const bs = readToken(t.token).brokers;
      return bs[startOf(t.name, bs.length)]!.address;
    };
    // Half of those at most: the rest are there enrolled, holding the host's link, when the node dies.
    const startThere = tokens
      .filter((t) => t.name !== EXPIRED && t.name !== RACED && firstBroker(t) === killedAt)
      .map((t) => t.name);
    const inFlight = startThere.slice(0, Math.min(IN_FLIGHT, Math.floor(startThere.length / 2)));
    if (inFlight.length === 0)
      throw new Error(
        `fewer than two simulated hosts' first broker is ${killedAt}: ${tokens.map((t) => firstBroker(t)).join(', ')}`,
      );
    const early = tokens.filter((t) => !inFlight.includes(t.name));

    const b1Mark = h.mark(serveLogPath(h));
    const hubMark = h.mark(h.serviceLogPath('mesh-serve'));
    const sims = startSims(h);
    const enrolled = new Set<string>();
    const burstDone = new Set<string>();
    const refusals: { name: string; reason: string }[] = [];
    const retried = new Set<string>();
    const lostRace: string[] = [];
    const enrolments = new Map<string, number>();
    /** Each host's enrolment steps (host/enrol.ts): sent through which broker, lost, the chosen password. */
    const steps = new Map<string, { kind: string; at?: string }[]>();
    /** Each simulated host's connections, in order, as its link said them: the broker and when. */
    const onBroker = new Map<string, { at: string; t: number }[]>();
    const linkSaid: string[] = [];
    let progress = { published: 0, confirmed: 0, unconfirmed: 0, errors: [] as string[] };
    let stopped: {
      confirmed: string[];
      unconfirmed: number;
      errors: string[];
      serials: Record<string, number>;
    } | null = null;
    let failure: string | null = null;
    const ready = new Promise<void>((ok) =>
      sims.on('message', function first(m: any) {
        if (m.type === 'ready') {
          sims.off('message', first);
          ok();
        }
      }),
    );
    sims.on('message', (m: any) => {
      if (m.type === 'enrolled') {
        enrolled.add(m.name);
        enrolments.set(m.name, (enrolments.get(m.name) ?? 0) + 1);
      } else if (m.type === 'contender-refused') lostRace.push(m.reason);
      else if (m.type === 'enrol-step' && !m.contender)
        steps.set(m.name, [...(steps.get(m.name) ?? []), { kind: m.kind, at: m.at }]);
      else if (m.type === 'connected')
        onBroker.set(m.name, [...(onBroker.get(m.name) ?? []), { at: m.at, t: Date.now() }]);
      else if (m.type === 'link') linkSaid.push(`${m.name}: ${m.line}`);
      else if (m.type === 'burst-done') burstDone.add(m.name);
      else if (m.type === 'progress') progress = m;
      else if (m.type === 'stopped') stopped = m;
      else if (m.type === 'error') failure = m.message;
      else if (m.type === 'refused') {
        refusals.push({ name: m.name, reason: m.reason });
        // Retry: a fresh token for that name (an unspent one is replaced), the same simulated host.
        if (retried.has(m.name)) {
          failure = `${m.name} was refused again after its retry: ${m.reason}`;
          return;
        }
        retried.add(m.name);
        void hubTool<Tok[]>(h, 'tokens', { names: [m.name], ttl: '10m' }).then(
          (t) => sims.send({ type: 'enrol', hosts: t, reports: REPORTS_PER_HOST }),
          (err) => {
            failure = (err as Error).message;
          },
        );
      }
    });
    sims.on('exit', (code) => {
      if (!stopped) failure = `the simulated hosts exited (${code})`;
    });
    /** The serves held (SIGSTOP) until the kill: let go whatever happens. */
    const holdPids: number[] = [];
    try {
      await ready;
      sims.send({
        type: 'enrol',
        hosts: early.map((t) => (t.name === RACED ? { ...t, contenders: 2 } : t)),
        reports: REPORTS_PER_HOST,
      });
      say(
        `${early.length} simulated hosts on ${SIM_MACHINE} enrol at once, each then sending ${REPORTS_PER_HOST} reports; ${inFlight.length} more (${inFlight.map((n) => n.slice(-2)).join(' ')}), whose first broker is ${killedAt}, wait to enrol while both serves are held`,
      );

      // Mid-burst: SIGKILL the first node's serve (its mesh-host starts it again; b1's carries on), and declare --all.
      const hubLog = h.mark(h.hostLogPath(h.hub));
      const killedNode = erlNodeOf(h, KILLED_BROKER)!;
      let killed = false;
      let killedAtMs = 0;
      let b1AfterKill = 0;
      /** At the kill: the simulated hosts on the killed node, as the management API said. */
      let simsOnKilled: string[] = [];
      /** The enrolments held in flight on the killed node at the kill. */
      const inFlightOnKilled: string[] = [];
      let declared: Promise<void> | null = null;
      /** Both serves held (SIGSTOP) and the in-flight group sent to enrol. */
      let heldAt = 0;
      const sentOn = (n: string) =>
        steps
          .get(n)
          ?.filter((x) => x.kind === 'sent')
          .at(-1)?.at;
      await until(
        async () => {
          if (failure) throw new Error(failure);
          sims.send({ type: 'progress' });
          // Once the first hosts are enrolled and connected and their reports flow: hold both serves, and the group enrols.
          // The management API lists connections from its statistics, some seconds behind: it must list every one of them
          // first, or the kill below would find no simulated host on the node.
          const listed =
            !heldAt &&
            progress.confirmed >= 150 &&
            early.every((t) => enrolled.has(t.name) && onBroker.has(t.name)) &&
            (await hubTool<Conn[]>(h, 'connections', {}).then(
              (cs) => early.every((t) => cs.some((c) => c.clientName === `mesh-host ${t.name}`)),
              () => false,
            ));
          if (listed) {
            holdPids.push(serveRecord(h).pid, secondServePid(h));
            for (const pid of holdPids) process.kill(pid, 'SIGSTOP');
            heldAt = Date.now();
            say(
              `held both serves (SIGSTOP, pids ${holdPids.join(', ')}) with ${enrolled.size} enrolled and ${progress.confirmed} reports confirmed; the ${inFlight.length} enrol now`,
            );
            sims.send({
              type: 'enrol',
              hosts: tokens.filter((t) => inFlight.includes(t.name)),
              reports: REPORTS_PER_HOST,
            });
          }
          // Every one of the group sent its request and none can be answered: kill one serve and a broker node, and declare --all beside it.
          if (!killed && heldAt && inFlight.every((n) => sentOn(n))) {
            const pending = inFlight.filter((n) => sentOn(n) === killedAt && !enrolled.has(n));
            say(
              `in flight (request sent, no welcome read): ${inFlight.map((n) => `${n.slice(-2)} through ${sentOn(n)}`).join(', ')}`,
            );
            if (pending.length === 0)
              throw new Error(
                `no enrolment is in flight on ${killedAt}: ${inFlight.map((n) => `${n} sent through ${sentOn(n)}`).join('; ')}`,
              );
            inFlightOnKilled.push(...pending);
            // Who is on the node about to die: the broker's own word (each connection's node).
            const conns = await hubTool<Conn[]>(h, 'connections', {});
            const there = conns.filter((c) => c.node === killedNode);
            simsOnKilled = there
              .map((c) => SIM_CONN.exec(c.clientName)?.[1])
              .filter((n): n is string => !!n && names.includes(n));
            const b1Serve = there.filter((c) => c.clientName.startsWith('mesh serve') && c.peerHost === b1Addr);
            say(
              `on ${killedNode} at the kill (management API): ${there.length} connection(s); ${simsOnKilled.length} of the ${HOSTS} simulated hosts (${simsOnKilled.length ? simsOnKilled.map((n) => n.slice(-2)).join(' ') : 'none'}), ${b1Serve.length} of ${SERVE_MACHINE}'s serve (${b1Serve.map((c) => c.clientName).join(', ') || 'none'})`,
            );
            if (simsOnKilled.length === 0) {
              const nodes = new Map<string, number>();
              for (const c of conns) if (SIM_CONN.test(c.clientName)) nodes.set(c.node, (nodes.get(c.node) ?? 0) + 1);
              throw new Error(
                `no simulated host is on ${killedNode}, the node to be killed; they are on ${[...nodes].map(([n, k]) => `${n} (${k})`).join(', ') || 'no node'}`,
              );
            }
            if (!b1Serve.some((c) => c.clientName === 'mesh serve'))
              throw new Error(
                `${SERVE_MACHINE}'s serve is not on ${killedNode}, the node to be killed: ${JSON.stringify(conns.filter((c) => c.clientName.startsWith('mesh serve')))}`,
              );
            const rec = serveRecord(h);
            const beam = beamPid(h, KILLED_BROKER);
            if (!beam) throw new Error(`${KILLED_BROKER}'s broker node is not running`);
            b1AfterKill = h.mark(serveLogPath(h));
            killedAtMs = Date.now();
            process.kill(rec.pid, 'SIGKILL');
            process.kill(beam, 'SIGKILL');
            killed = true;
            // b1's serve goes on: its connection died with the node while it was held.
            process.kill(secondServePid(h), 'SIGCONT');
            say(
              `SIGKILLed ${h.hub}'s mesh serve (pid ${rec.pid}, held) and ${KILLED_BROKER}'s broker node (${killedNode}, pid ${beam}) with ${enrolled.size} of ${HOSTS} enrolled, ${inFlightOnKilled.length} enrolment(s) in flight on it, ${progress.published} reports sent and ${progress.confirmed} confirmed; ${SERVE_MACHINE}'s serve let go (SIGCONT) after ${((Date.now() - heldAt) / 1000).toFixed(1)} s held`,
            );
            const at = { enrolled: enrolled.size, confirmed: progress.confirmed };
            declared = h.meshOk(['declare', '--all', '--json']).then((out) => {
              const rows = JSON.parse(out) as unknown[];
              say(
                `mesh declare --all (begun with ${at.enrolled} enrolled, ${at.confirmed} reports confirmed): ${rows.length} declarations owed`,
              );
            });
          }
          return enrolled.size === HOSTS && burstDone.size === HOSTS && killed && declared !== null;
        },
        240,
        () =>
          `the bursts did not finish: ${enrolled.size}/${HOSTS} enrolled, ${burstDone.size} sent their reports, ${progress.confirmed} confirmed; refused ${JSON.stringify(refusals)}; errors ${progress.errors.join('; ')}`,
      );
      await declared;
      const lostCount = [...steps.values()].filter((st) => st.some((x) => x.kind === 'lost')).length;
      say(
        `all ${HOSTS} enrolled in ${Math.round((Date.now() - t0) / 1000)}s (${lostCount} host(s) lost a broker while waiting and sent again); ${progress.confirmed} reports confirmed so far`,
      );
      // The enrolments in flight on the killed node: each lost its connection before a welcome, dialled on, and ended enrolled.
      const lostThere = inFlightOnKilled.filter((n) =>
        steps.get(n)!.some((x) => x.kind === 'lost' && x.at === killedAt),
      );
      const chose = inFlightOnKilled.filter((n) => steps.get(n)!.some((x) => x.kind === 'chosen-password'));
      const sentAfter = (n: string) =>
        steps
          .get(n)!
          .filter((x) => x.kind === 'sent')
          .map((x) => x.at)
          .filter((a) => a !== killedAt);
      say(
        `enrolments in flight on ${killedNode} at the kill: ${inFlightOnKilled.length}; lost their connection there before a welcome: ${lostThere.length}; sent again through ${[...new Set(inFlightOnKilled.flatMap(sentAfter))].join(', ') || 'no other node'}; dialled with the password they chose (the token already spent for them): ${chose.length}; enrolled: ${inFlightOnKilled.filter((n) => enrolled.has(n)).length} of ${inFlightOnKilled.length}`,
      );
      if (lostThere.length !== inFlightOnKilled.length)
        throw new Error(
          `not every enrolment in flight on ${killedNode} lost its connection there: ${inFlightOnKilled.filter((n) => !lostThere.includes(n)).join(', ')}`,
        );
      if (inFlightOnKilled.some((n) => !enrolled.has(n) || sentAfter(n).length === 0))
        throw new Error(
          `an enrolment in flight on ${killedNode} did not end enrolled through another node: ${inFlightOnKilled.filter((n) => !enrolled.has(n) || sentAfter(n).length === 0).join(', ')}`,
        );
      await h.waitLog(
        h.hostLogPath(h.hub),
        /service mesh-serve had died; started it again/,
        hubLog,
        60,
        `${h.hub}'s host did not start its killed serve again`,
      );
      say(`${h.hub}'s mesh-host started its killed serve again`);

      // The failover: b1's serve and every host that was on the killed node are on another node, by themselves.
      const moved = await h.waitLog(
        serveLogPath(h),
        /serve: consuming mesh\.control on (\S+:\d+)/,
        b1AfterKill,
        60,
        `${SERVE_MACHINE}'s serve did not consume mesh.control again after ${killedNode} died`,
      );
      const serveAt = moved[1]!;
      say(
        `${SERVE_MACHINE}'s serve, its broker node killed under it, consumes mesh.control again on ${serveAt} (its log)`,
      );
      if (serveAt === killedAt) throw new Error(`${SERVE_MACHINE}'s serve came back on ${killedAt}, the killed node`);
      const after = (n: string) => (onBroker.get(n) ?? []).filter((c) => c.t >= killedAtMs);
      await until(
        () => simsOnKilled.every((n) => after(n).some((c) => c.at !== killedAt)),
        120,
        () =>
          `not every simulated host on ${killedNode} connected to another node: ${simsOnKilled.filter((n) => !after(n).some((c) => c.at !== killedAt)).join(', ')}; their links said: ${linkSaid.slice(-5).join('; ')}`,
      );
      const where = new Map<string, number>();
      for (const n of simsOnKilled) {
        const a = after(n).find((c) => c.at !== killedAt)!.at;
        where.set(a, (where.get(a) ?? 0) + 1);
      }
      say(
        `the ${simsOnKilled.length} simulated hosts on ${killedNode} each connected to another node by themselves (their links): ${[...where].map(([a, k]) => `${k} to ${a}`).join(', ')}`,
      );
      let conns: Conn[] = [];
      await until(
        async () => {
          conns = await hubTool<Conn[]>(h, 'connections', {}).catch(() => []);
          return simsOnKilled.every((n) =>
            conns.some((c) => c.clientName === `mesh-host ${n}` && c.node !== killedNode),
          );
        },
        60,
        () =>
          `the management API does not show every simulated host that was on ${killedNode} on another node: ${simsOnKilled.filter((n) => !conns.some((c) => c.clientName === `mesh-host ${n}` && c.node !== killedNode)).join(', ')}`,
      );
      const byNode = new Map<string, number>();
      for (const n of simsOnKilled)
        for (const c of conns.filter((x) => x.clientName === `mesh-host ${n}`))
          byNode.set(c.node, (byNode.get(c.node) ?? 0) + 1);
      say(`the management API agrees: they are on ${[...byNode].map(([node, k]) => `${node} (${k})`).join(', ')}`);

      // Settled: nothing owed, and every node (the 50 among them) reported its newest serial.
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
      let c: Check | null = null;
      await until(
        async () => {
          if (failure) throw new Error(failure);
          sims.send({ type: 'progress' });
          await waitSettled(h, 120);
          c = await hubTool<Check>(h, 'check', { confirmed: [], nodes: names });
          return c.notNewest.length === 0;
        },
        120,
        () =>
          `not every node reported its newest serial: ${c?.notNewest.slice(0, 10).join('; ')}; the simulated hosts said: ${progress.errors.join('; ') || 'nothing amiss'}`,
      );
      sims.send({ type: 'stop' });
      await until(() => stopped, 30, 'the simulated hosts did not hand over what was confirmed');
      const got = stopped!;
      c = await hubTool<Check>(h, 'check', { confirmed: got.confirmed, nodes: names });
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
      const clear = refusals.filter((r) => r.reason === REFUSAL.reason);
      say(
        `enrolments: ${c.enrolled} of ${HOSTS} enrolled; refused ${refusals.length} (${refusals.map((r) => `${r.name}: "${r.reason}"`).join('; ') || 'none'}), each retried with a fresh token: ${[...retried].filter((n) => enrolled.has(n)).length} of ${retried.size} then enrolled`,
      );
      if (c.enrolled !== HOSTS) throw new Error(`${HOSTS - c.enrolled} simulated node(s) are not enrolled in SQL`);
      if (!refusals.some((r) => r.name === EXPIRED)) throw new Error(`${EXPIRED}'s expired token was not refused`);
      if (clear.length !== refusals.length)
        throw new Error(`a refusal was not the one clear refusal: ${JSON.stringify(refusals)}`);
      if ([...retried].some((n) => !enrolled.has(n)))
        throw new Error(
          `a refused enrolment did not succeed on retry: ${[...retried].filter((n) => !enrolled.has(n)).join(', ')}`,
        );
      say(`tokens spent: ${c.spentTokens} for ${HOSTS} nodes; spent twice: ${c.spentTwice.length}`);
      if (c.spentTwice.length || c.spentTokens !== HOSTS)
        throw new Error(
          `tokens spent wrongly: ${c.spentTwice.join('; ') || `${c.spentTokens} spent for ${HOSTS} nodes`}`,
        );
      say(
        `the audit history: ${c.spentEvents} token-spent events for these tokens, ${c.spentTwiceAudited.length} token(s) with more than one`,
      );
      if (c.spentTwiceAudited.length || c.spentEvents !== HOSTS)
        throw new Error(
          `the audit history says tokens were spent wrongly: ${c.spentTwiceAudited.join('; ') || `${c.spentEvents} spent for ${HOSTS} nodes`}`,
        );
      say(
        `two identities raced for ${RACED}'s token: ${enrolments.get(RACED) ?? 0} enrolled, ${lostRace.length} refused (${lostRace.map((r) => `"${r}"`).join(', ')})`,
      );
      if (enrolments.get(RACED) !== 1 || lostRace.length !== 1 || lostRace[0] !== REFUSAL.reason)
        throw new Error(
          `the race for one token was not won exactly once: ${enrolments.get(RACED) ?? 0} enrolled, ${lostRace.length} refused`,
        );
      if (got.errors.length) say(`the simulated hosts said: ${got.errors.slice(0, 5).join('; ')}`);
      const onB1 = (
        h.readLog(serveLogPath(h), b1Mark).match(/enrol: lab-sim-[0-9a-f]+-\d+ (enrolled|asked again)/g) ?? []
      ).length;
      const again =
        (h.readLog(serveLogPath(h), b1Mark) + h.readLog(h.serviceLogPath('mesh-serve'), hubMark)).match(
          /enrol: lab-sim-[0-9a-f]+-\d+ asked again and was answered again/g,
        )?.length ?? 0;
      say(
        `the serve on ${SERVE_MACHINE} answered ${onB1} enrolment request(s); ${again} redelivered request(s) were answered again (the first node's log may miss what its killed serve did)`,
      );

      // The killed broker node: its mesh-host starts it again; it rejoins and its quorum queues catch up.
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
    } finally {
      for (const pid of holdPids) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          /* gone */
        }
      }
      if (sims.exitCode === null) sims.kill('SIGKILL');
    }
    // Leave the lab as it was: the simulated nodes retired, one serve.
    await hubTool(h, 'retire', { names });
    await removeSecondServe(h);
    await waitSettled(h);
  },
};
