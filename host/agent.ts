// The agent: verify every declaration before reading a byte of it as an
// instruction (D1), apply only a newer serial (D2), keep it signed, apply it,
// keep it applied (D6), and report what the machine holds (R1). A refusal is
// reported as its kind: forged and malformed (D1) apart, and a genuine older
// declaration as replayed, never forged (delivery is at least once: a
// redelivery or a broker restart brings the mesh's own back).
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { readDeclaration } from '../src/wire/declaration.js';
import { WireError, type WireFault } from '../src/wire/envelope.js';
import { writeReport, type Report, type HeldEntry, type RefusalFault } from '../src/wire/report.js';
import { readLastReport, type Floor } from '../src/wire/last_report.js';
import { writeRecover } from '../src/wire/recover.js';
import type { Declaration } from '../src/wire/resources.js';
import { EXCHANGE } from '../src/broker/topology.js';
import { publish, Unroutable } from '../src/broker/publish.js';
import { key32 } from '../src/crypto/keys.js';
import { open } from '../src/crypto/seal.js';
import { reconcile, removeOrphans, holdings, type ApplyOptions } from './apply/engine.js';
import { statePath } from './apply/state.js';
import { superviseServices } from './apply/service_process.js';
import { takeDeclaration, readKept } from './keep.js';
import { readMark, raiseMark, declarationDigest, type Mark } from './serial.js';
import { overlayKeyPath, type Identity } from './identity.js';
import type { LogFields } from '../src/sys/log.js';
import { VERSION } from '../src/sys/version.js';
import { driverSettings, type HostConfig } from './config.js';
import { PackageFetch, type ChunkHeaders } from './upgrade/fetch.js';
import { writePackageAsk } from '../src/wire/agent_package.js';
import { packageRoot, readPending, confirm } from './upgrade/package_root.js';
import { UPGRADE_WAIT_MS } from './apply/agent.js';
import { readInstalled, statusPath } from './packages.js';
import { packageChange, packagesDigest, type Package, type PackageChange } from '../src/wire/packages.js';

/** The exit code that asks whoever runs mesh-host (systemd, mesh-host supervise) to start it again, from the current package. */
export const RESTART_CODE = 75;

/** A declaration read from the queue: what it says, its bytes as sent, and their digest. */
interface Candidate {
  decl: Declaration;
  bytes: Buffer;
  digest: string;
}

/** The mesh's last record of this node (its answer to recover): what it held, its floor, its package list. */
type LastRecord = { held: HeldEntry[] | null; floor: Floor | null; packages?: string | null };

export class Agent {
  private ch: ConfirmChannel | undefined;
  private inbox: ConsumeMessage[] = [];
  private work: Promise<void> = Promise.resolve();
  private drainTimer: NodeJS.Timeout | undefined;
  private reconcileTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private supervisor: { stop(): void } | undefined;
  private watchdogTimer: NodeJS.Timeout | undefined;
  /** Each report keeps the message id it was first sent under: a resend after a lost confirm is the same message to serve (recorded once). */
  private outbox: { r: Report; mid: string }[] = [];
  private kept: Declaration | null = null;
  /** D2: the highest serial ever taken, and its digest (the mark in applied.json): survives the kept file. */
  private mark: Mark = { serial: 0, digest: '' };
  /** D2: the mesh's signed floor, from the last report recover hands back. */
  private floor: Floor | null = null;
  /**
   * No valid kept declaration: declarations wait, unacked, until the mesh's
   * floor arrives. Judged without it, a replay already sitting in the queue
   * would be applied before the answer to recover came back.
   */
  private awaitingFloor = false;
  private held: ConsumeMessage[] = [];
  /** The package list the mesh was last sent or said it holds; null: unknown, and the next report carries it whole. */
  private packagesSent: Package[] | null = null;
  /**
   * Whether the mesh has said which list it holds (the recover answer). Until
   * then no package change is sent: a restart would otherwise send the whole
   * list every time, though the mesh most likely holds it already.
   */
  private packagesHeard = false;
  /** No state file at start: the host was rebuilt and must learn what it owned (R2). */
  private rebuilt = false;
  /** Published, confirm not yet in: not sent again until the broker answers. */
  private inflight = new Set<string>();
  private readonly signingKey: Uint8Array;
  readonly opts: ApplyOptions;

  private readonly dir: string;
  /** V2: a package being fetched over the broker, its chunks taken as they come. */
  private fetching: PackageFetch | undefined;
  /** V2: this agent is an upgrade not yet proven: its first confirmed report proves it. */
  private proving = false;
  private provingTimer: NodeJS.Timeout | undefined;
  private restartWanted = false;
  private exit: (code: number) => void = () => {};

  constructor(
    private readonly id: Identity,
    private readonly config: HostConfig,
    private readonly log: (l: string, f?: LogFields) => void,
  ) {
    this.dir = config.dir;
    this.signingKey = key32(id.signingKey, 'signingKey');
    const sealing = key32(id.keys.sealing, 'keys.sealing');
    this.opts = {
      stateDir: config.dir,
      roots: config.roots,
      openSealed: (b) => open(b, sealing),
      overlayKeyPath: overlayKeyPath(config.dir),
      ...driverSettings(config),
      log,
      agent: {
        fetch: (sha256, size) => this.fetchPackage(sha256, size),
        restart: () => {
          this.restartWanted = true;
        },
      },
    };
  }

  /** Read back the kept declaration (verified again) and roll forward whatever a crash left half done. */
  async start(): Promise<void> {
    this.rebuilt = !existsSync(statePath(this.dir));
    this.mark = readMark(this.dir);
    try {
      const k = readKept(this.dir, this.id);
      if (k) {
        const digest = declarationDigest(k.bytes);
        // Genuine but older than what was applied: an old signed file put back on the disk.
        if (k.decl.serial < this.mark.serial || (k.decl.serial === this.mark.serial && digest !== this.mark.digest)) {
          throw new WireError(
            'replayed',
            `the kept declaration is serial ${k.decl.serial}, and serial ${this.mark.serial} was applied.`,
            'MSHN5',
          );
        }
        this.kept = k.decl;
        // A kept declaration above the mark: a host from before the mark, or one whose
        // power was cut before the state record beside it reached the disk (D7).
        if (k.decl.serial > this.mark.serial) this.mark = await raiseMark(this.dir, { serial: k.decl.serial, digest });
      }
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      const fault = reported(err.fault);
      this.log(`refusing the kept declaration: ${fault}: ${err.message}`);
      this.queueReport({ refused: { fault, reason: `kept declaration: ${err.message}` } });
    }
    this.awaitingFloor = !this.kept;
    if (this.kept) this.enqueue(() => this.reconcileNow());
    this.proveUpgrade();
    this.watchExpiry();
    const every = this.config.reconcileSeconds;
    // D6: connected or not. Not polling for changes (they are pushed): putting back drift.
    this.reconcileTimer = setInterval(() => this.enqueue(() => this.reconcileNow()), every * 1000);
    // Where there is no systemd, a service this host raised (carried or declared) that died is started
    // again at once, with backoff, and the mesh is told (service_process.ts).
    if (!existsSync('/run/systemd/system')) {
      this.supervisor = superviseServices(this.dir, {
        log: this.log,
        restarted: (r) =>
          this.enqueue(async () =>
            this.queueReport({
              serial: this.kept?.serial ?? 0,
              held: await holdings(this.dir),
              failed: [],
              corrected: [`service:${r.name}`],
            }),
          ),
      });
    }
  }

  /** How this agent ends itself: to restart into a new package (RESTART_CODE), or give a failed one back to the guard. */
  onExit(exit: (code: number) => void): void {
    this.exit = exit;
  }

  /**
   * V2: started as a pending upgrade of this very version. It reports at once
   * (its version with it); the broker's confirm of that report proves it. Not
   * proven by the deadline (it cannot reach the broker, or serve), it ends
   * itself, and the guard before the next start takes the machine back.
   */
  private proveUpgrade(): void {
    const p = readPending(packageRoot(this.dir));
    if (!p || p.version !== VERSION) return;
    this.proving = true;
    this.log(
      `agent: running mesh-host ${VERSION}, an upgrade from ${p.previous ?? 'the installed agent'}: reporting to prove it`,
    );
    this.enqueue(async () =>
      this.queueReport({ serial: this.kept?.serial ?? 0, held: await holdings(this.dir), failed: [] }),
    );
    this.provingTimer = setTimeout(
      () => {
        if (!this.proving) return;
        this.log(
          `agent: mesh-host ${VERSION} did not report before its deadline: ending, for the guard to take this machine back`,
        );
        this.exit(1);
      },
      Math.max(0, p.deadline - Date.now()),
    );
  }

  private async proven(): Promise<void> {
    if (!this.proving) return;
    this.proving = false;
    clearTimeout(this.provingTimer);
    if (await confirm(packageRoot(this.dir), VERSION))
      this.log(`agent: mesh-host ${VERSION} reported: the upgrade is proven and stays`);
  }

  /** V2: a package's bytes, asked of serve over the broker a few chunks at a time. */
  private fetchPackage(sha256: string, size: number): Promise<Buffer> {
    this.fetching?.stop();
    const f = new PackageFetch(
      sha256,
      size,
      (from, count) => {
        const ch = this.ch;
        if (!ch) return; // asked again on the next window timer, once linked
        publish(ch, EXCHANGE, 'agent.package', writePackageAsk({ sha256, from, count }), {
          userId: this.id.broker.user,
          type: 'agent.package',
        }).catch(() => {});
      },
      UPGRADE_WAIT_MS,
    );
    this.fetching = f;
    this.log(`agent: fetching package ${sha256.slice(0, 12)} (${size} bytes) over the broker`);
    return f.bytes.finally(() => {
      if (this.fetching === f) this.fetching = undefined;
    });
  }

  async attach(ch: ConfirmChannel): Promise<void> {
    this.ch = ch;
    if (this.awaitingFloor) {
      // D2 (c): at once, not at the next declare: until the floor is here, nothing is applied.
      this.log(
        this.rebuilt
          ? 'no record of what this machine holds: asking the mesh for its declaration, last report and floor'
          : `no valid kept declaration (highest applied: serial ${this.mark.serial}): asking the mesh for its newest declaration and floor now`,
      );
    }
    // Every connect (W3): the queue only carries, and what it held may be gone
    // (a broker restart drops messages that are not persistent; a queue keeps
    // only its newest few). The mesh answers from SQL: the newest declaration,
    // dropped here if not newer than the one applied.
    // It says the highest serial applied: a store behind this node (restored, V3) continues above it.
    // Not mandatory: a mesh with no serve yet takes nothing, and the next connect asks again.
    publish(ch, EXCHANGE, 'recover', writeRecover({ applied: this.mark.serial }), {
      userId: this.id.broker.user,
    }).catch(() => {});
    this.flushOutbox();
  }

  // Held messages were never acked: the broker delivers them again on the next channel.
  detach(): void {
    this.ch = undefined;
    this.inflight.clear();
    this.held = [];
  }

  stop(): void {
    clearInterval(this.reconcileTimer);
    clearInterval(this.watchdogTimer);
    clearTimeout(this.expiryTimer);
    this.supervisor?.stop();
    clearTimeout(this.drainTimer);
    clearTimeout(this.provingTimer);
    this.fetching?.stop();
  }

  stopped(): Promise<void> {
    return this.work;
  }

  receive(msg: ConsumeMessage): void {
    // V2: a chunk is not a declaration: taken now, beside an apply that may be waiting for it.
    if (msg.properties.type === 'agent-chunk') {
      const h = msg.properties.headers as Partial<ChunkHeaders> | undefined;
      if (h && typeof h.sha256 === 'string' && Number.isSafeInteger(h.n) && Number.isSafeInteger(h.of))
        this.fetching?.take(h as ChunkHeaders, msg.content);
      try {
        this.ch?.ack(msg);
      } catch {
        /* channel gone: the chunk is asked for again */
      }
      return;
    }
    this.inbox.push(msg);
    // A short pause gathers a backlog waiting on the broker, so it drains to the newest (D2).
    this.drainTimer ??= setTimeout(() => {
      this.drainTimer = undefined;
      this.enqueue(() => this.drain());
    }, 50);
  }

  /**
   * Feed systemd's watchdog from the apply loop itself: every EVERY ms a turn
   * is queued behind whatever the loop is doing, and only that turn says
   * alive. An apply that never ends (a lock never released, a read that never
   * returns) holds the turn back, the pings stop, and systemd restarts the host;
   * the link and its heard, on their own timers, would have gone on.
   */
  feedWatchdog(alive: () => void, every: number): void {
    let queued = false;
    this.watchdogTimer = setInterval(() => {
      if (queued) return; // the last turn is still waiting: the loop is stuck, say nothing
      queued = true;
      this.enqueue(async () => {
        queued = false;
        alive();
      });
    }, every);
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((err) => this.log(`apply failed: ${(err as Error).message}`));
  }

  private me() {
    return { mesh: this.id.mesh, node: this.id.name };
  }

  private async drain(): Promise<void> {
    const fresh = this.inbox.splice(0);
    const msgs = this.held.concat(fresh);
    this.held = [];
    const ch = this.ch;
    const { candidates, lastReport } = this.readAll(msgs, fresh);
    if (lastReport) {
      this.floor = lastReport.floor;
      this.awaitingFloor = false;
    }
    if (this.awaitingFloor && candidates.length) {
      this.log(
        `holding ${candidates.length} declaration(s) until the mesh answers with the lowest serial this node may apply (its floor)`,
      );
      this.held = msgs;
      return;
    }
    await this.applyNewest(candidates);
    this.restartIfWanted();
    await this.recordArrived(lastReport);
    // Acked only once kept and applied: a crash before this means redelivery.
    for (const m of msgs) {
      try {
        ch?.ack(m);
      } catch {
        /* channel gone: redelivered, and refused as replayed or applied again */
      }
    }
  }

  /** MSGS read: the declarations among them and the mesh's last record of this node; FRESH ones refused are reported. */
  private readAll(
    msgs: ConsumeMessage[],
    fresh: ConsumeMessage[],
  ): { candidates: Candidate[]; lastReport?: LastRecord } {
    const candidates: Candidate[] = [];
    let lastReport: LastRecord | undefined;
    for (const m of msgs) {
      const type = m.properties.type;
      try {
        if (type === 'declaration')
          candidates.push({
            decl: readDeclaration(m.content, this.signingKey, this.me()),
            bytes: m.content,
            digest: declarationDigest(m.content),
          });
        else if (type === 'last-report') lastReport = readLastReport(m.content, this.signingKey, this.me());
        else this.log(`ignoring a message of type ${JSON.stringify(type)} on this node's queue`);
      } catch (err) {
        if (!(err instanceof WireError)) throw err;
        // D1: forged and malformed are said differently; neither is applied.
        // A held message was said once already, when it first arrived.
        if (!fresh.includes(m)) continue;
        const fault = reported(err.fault);
        this.log(`refused a ${type ?? 'message'}: ${fault}: ${err.message}`);
        this.queueReport({ refused: { fault, reason: err.message } });
      }
    }
    return { candidates, lastReport };
  }

  /** The newest fit declaration of CANDIDATES kept, applied and reported, naming those it superseded. */
  private async applyNewest(candidates: Candidate[]): Promise<void> {
    // D2: judged against the mesh's floor and this host's own mark, never the kept file alone.
    const judged = candidates.map((c) => ({ ...c, verdict: this.judge(c.decl.serial, c.digest, c.decl.expires) }));
    const fit = judged.filter((c) => c.verdict !== 'refused').sort((a, b) => a.decl.serial - b.decl.serial);
    const newest = fit.at(-1);
    // The same serial twice (from the queue and from recover) is one declaration, not one superseding the other.
    const superseded = [
      ...new Set(
        fit
          .filter((c) => c !== newest && c.verdict === 'newer' && c.decl.serial !== newest!.decl.serial)
          .map((c) => c.decl.serial),
      ),
    ];
    if (newest && (newest.verdict === 'newer' || !this.kept)) {
      // Kept and the mark raised, on disk, before anything is applied (D7): a
      // crash or power cut mid-apply rolls forward from here on the next start,
      // and a serial once started is never accepted below again.
      const r = await takeDeclaration(this.dir, newest.bytes, newest.decl, newest.digest, this.opts);
      this.kept = newest.decl;
      if (newest.decl.serial > this.mark.serial) this.mark = { serial: newest.decl.serial, digest: newest.digest };
      this.watchExpiry();
      this.log(
        `applied declaration ${newest.decl.serial}: ${r.changed.length} changed, ${r.removed.length} removed, ${r.restarted.length} restarted, ${r.failed.length} failed${superseded.length ? `; superseded ${superseded.join(', ')}` : ''}`,
        { serial: newest.decl.serial, level: r.failed.length ? 'warn' : 'info' },
      );
      this.queueReport({ serial: newest.decl.serial, held: r.held, failed: r.failed, superseded });
    }
  }

  /** The mesh's record of this node, once it arrived: what a rebuilt node holds beyond it removed, its package list compared. */
  private async recordArrived(lastReport: LastRecord | undefined): Promise<void> {
    // The mesh sends the declaration first, then the last report: by now what
    // must stay is applied, and what the old report lists beyond it is orphaned.
    if (lastReport !== undefined && this.rebuilt) {
      if (lastReport.held) await this.removeOrphans(lastReport.held);
      this.rebuilt = false;
    }
    if (lastReport) {
      const packages =
        lastReport.packages === undefined ? 'not kept by this mesh' : await this.comparePackages(lastReport.packages);
      this.log(
        `the mesh's record of this node arrived: floor serial ${lastReport.floor?.serial ?? 'none'}; package list ${packages}`,
      );
    }
  }

  /**
   * D2. 'newer': above everything applied. 'same': the very declaration of the
   * highest serial applied, delivered again (applied again only if the kept
   * file is gone). 'refused': below the mesh's floor or this host's mark, or a
   * different declaration carrying a serial already used: reported replayed.
   */
  private judge(serial: number, digest: string, expires: number): 'newer' | 'same' | 'refused' {
    const f = this.floor;
    if (f && (serial < f.serial || (serial === f.serial && digest !== f.digest))) {
      this.refuse(
        serial,
        serial < f.serial
          ? `serial ${serial} is below ${f.serial}, the newest this node acknowledged (the mesh's signed floor)`
          : `serial ${serial} is not the declaration this node acknowledged at that serial (the mesh's signed floor)`,
      );
      return 'refused';
    }
    const m = this.mark;
    if (serial > m.serial) {
      // Freshness: genuine and newer, but withheld past its expiry (a frozen feed replaying it): not applied.
      if (expires * 1000 <= Date.now()) {
        const { message: reason } = new WireError(
          'stale',
          `serial ${serial} expired at ${new Date(expires * 1000).toISOString()}, before it arrived: the mesh signs a current declaration again well before then, so this one was held back`,
        );
        this.log(`refused a declaration: stale: ${reason}`, { serial, level: 'warn' });
        this.queueReport({ refused: { serial, fault: 'stale', reason } });
        return 'refused';
      }
      return 'newer';
    }
    if (serial === m.serial && digest === m.digest) return 'same';
    this.refuse(serial, `serial ${serial} is not newer than ${m.serial}, the one applied`);
    return 'refused';
  }

  /** D2: the mesh's own declaration, genuine and older: replayed, which is not forged (D1 keeps that for another key). */
  private refuse(serial: number, why: string): void {
    const { message: reason } = new WireError('replayed', why, 'MSHN5');
    this.log(`refused a declaration: replayed: ${reason}`, { serial, level: 'warn' });
    this.queueReport({ refused: { serial, fault: 'replayed', reason } });
  }

  private async removeOrphans(lastReport: HeldEntry[]): Promise<void> {
    const r = await removeOrphans(lastReport, this.kept?.resources ?? [], this.opts);
    if (r.removed.length)
      this.log(`removed ${r.removed.length} orphan(s) from before the rebuild: ${r.removed.join(', ')}`);
  }

  private async reconcileNow(): Promise<void> {
    if (!this.kept) return;
    const r = await reconcile(this.kept.resources, 'declared', this.opts);
    if (r.corrected.length || r.failed.length) {
      this.log(
        `reconciled declaration ${this.kept.serial}: put back ${r.corrected.join(', ') || 'nothing'}${r.failed.length ? `; failing ${r.failed.map((f) => f.id).join(', ')}` : ''}`,
        { serial: this.kept.serial, level: r.failed.length ? 'warn' : 'info' },
      );
      this.queueReport({ serial: this.kept.serial, held: r.held, failed: r.failed, corrected: r.corrected });
    } else {
      // Packages installed or removed by hand (or by apt's own timers): their change goes out on the same period.
      const packages = this.packageChange();
      if (packages) this.queueReport({ serial: this.kept.serial, held: r.held, failed: [], packages });
    }
    this.restartIfWanted();
  }

  /** V2: the agent resource made another version current: end once the report of this apply is confirmed (or soon after), to be started from it. */
  private restartIfWanted(): void {
    if (!this.restartWanted) return;
    this.restartWanted = false;
    const end = () => this.exit(RESTART_CODE);
    const waitFor = Date.now() + 5000;
    const check = () => (this.outbox.length === 0 || Date.now() > waitFor ? end() : setTimeout(check, 100));
    check();
  }

  /** What changed in the installed packages since the list the mesh was sent; undefined: nothing, no dpkg here, or the mesh has not yet said what it holds. */
  private packageChange(): PackageChange | undefined {
    if (!this.packagesHeard) return undefined;
    let now: Package[] | null;
    try {
      now = readInstalled(statusPath(this.config.dpkgRoot));
    } catch (err) {
      this.log(`cannot read the installed packages: ${(err as Error).message}`, { level: 'warn' });
      return undefined;
    }
    if (!now) return undefined;
    const change = packageChange(this.packagesSent, now);
    if (change) this.packagesSent = now;
    return change;
  }

  /**
   * The mesh's recover answer names the digest of the package list it holds:
   * the same as this host's, and only changes follow; another (a change lost,
   * or applied out of order by two serves), and the whole list goes now.
   */
  private async comparePackages(held: string | null): Promise<string> {
    this.packagesHeard = true;
    let now: Package[] | null;
    try {
      now = readInstalled(statusPath(this.config.dpkgRoot));
    } catch (err) {
      return `unread here: ${(err as Error).message}`;
    }
    if (!now) return 'none here (no dpkg status)';
    if (held === packagesDigest(now)) {
      this.packagesSent = now;
      return 'the same as here';
    }
    this.packagesSent = null;
    this.queueReport({ serial: this.kept?.serial ?? 0, held: await holdings(this.dir), failed: [] });
    return held ? 'another than here: sending the whole list' : 'not held yet: sending the whole list';
  }

  /**
   * Freshness: when the declaration kept expires, say so once (the log and a
   * report) and go on applying it; a newer one re-arms this. Timers hold at
   * most 24.8 days, so a longer wait is taken in steps.
   */
  private watchExpiry(): void {
    clearTimeout(this.expiryTimer);
    const kept = this.kept;
    if (!kept) return;
    const wait = kept.expires * 1000 - Date.now();
    if (wait > 0) {
      this.expiryTimer = setTimeout(() => this.watchExpiry(), Math.min(wait + 50, 2 ** 31 - 1));
      return;
    }
    this.log(
      `declaration ${kept.serial} expired at ${new Date(kept.expires * 1000).toISOString()}: still applying it, but this node is stale: its feed may be frozen (is mesh serve running, and this node's link to the broker up?)`,
    );
    this.enqueue(async () => this.queueReport({ serial: kept.serial, held: await holdings(this.dir), failed: [] }));
  }

  private queueReport(part: Partial<Report>): void {
    const held = part.held;
    const kept = this.kept;
    const r: Report = {
      v: 1,
      serial: part.serial ?? kept?.serial ?? 0,
      held: held ?? [],
      failed: part.failed ?? [],
      corrected: part.corrected ?? [],
      superseded: part.superseded ?? [],
      ...(part.refused ? { refused: part.refused } : {}),
      // Every account says until when what it holds is valid, so SQL knows the moment it is stale.
      ...(kept && !part.refused ? { holdsUntil: kept.expires, stale: kept.expires * 1000 <= Date.now() } : {}),
      // V1: the mesh keeps each node's agent version, and declares it only the kinds that version applies.
      agent: VERSION,
    };
    if (!held && !part.refused) return;
    if (!part.refused) {
      const packages = part.packages ?? this.packageChange();
      if (packages) r.packages = packages;
    }
    this.outbox.push({ r, mid: randomBytes(8).toString('hex') });
    if (this.outbox.length > 100) this.outbox.splice(0, this.outbox.length - 100);
    this.flushOutbox();
  }

  /** R1: mandatory, confirmed; a report leaves the outbox only when the broker confirmed it and did not return it. */
  private flushOutbox(): void {
    const ch = this.ch;
    if (!ch) return;
    for (const entry of this.outbox) {
      const { r, mid } = entry;
      if (this.inflight.has(mid)) continue;
      this.inflight.add(mid);
      publish(ch, EXCHANGE, 'report', writeReport(r), {
        mandatory: true,
        userId: this.id.broker.user,
        messageId: mid,
        type: 'report',
      }).then(
        () => {
          this.inflight.delete(mid);
          const i = this.outbox.indexOf(entry);
          if (i >= 0) this.outbox.splice(i, 1);
          if (r.serial && !r.refused)
            this.log(`report of declaration ${r.serial} confirmed by the broker`, { serial: r.serial });
          if (!r.refused) void this.proven();
        },
        (err) => {
          this.inflight.delete(mid);
          // R1: said out loud, never dropped in silence. Not confirmed (the channel went): kept for the next connection.
          if (err instanceof Unroutable)
            this.log(
              `the broker could not route report ${mid} (report): nothing receives reports on this mesh right now; it is kept and sent again`,
            );
        },
      );
    }
  }

  /** For tests and `status`: what this host holds now. */
  holdings(): Promise<unknown> {
    return holdings(this.dir);
  }
}

/** The kind a refusal is reported as: a message over the size limit is one not of its form. */
function reported(fault: WireFault): RefusalFault {
  return fault === 'too-large' ? 'malformed' : fault;
}
