// A lab machine booted with systemd: a copy of the cached Debian 12 tree run
// by `systemd-nspawn -b` inside a lab network namespace (LAB-NOTES: there is
// no host systemd to register with, hence --register=no --keep-unit). Its
// PID 1 is systemd; commands enter all its namespaces with nsenter. A
// `reboot` inside ends nspawn with 133 and the lab boots the same tree again.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { until, sleep } from '../handle.js';
import { runAny, type Ran } from '../../src/sys/proc.js';

export interface BootOptions {
  /** Where the machine's tree and log live (its own copy of the cached tree). */
  dir: string;
  /** The lab network namespace it runs in (`ip netns` name). */
  netns: string;
  /** Host paths bound into the machine read-only: [host, inside]. */
  bindRo?: [string, string][];
}

/**
 * The machine's own name, resolved from /etc/hosts as Debian's installer
 * writes it (127.0.1.1). Why: mmdebstrap leaves the build host's hostname and
 * resolver in the tree, and the lab's namespaces reach no resolver, so each
 * lookup of the hostname waited out DNS timeouts: RabbitMQ (whose node name is
 * rabbit@HOSTNAME) took over a minute to start, and past the boot limit on a
 * loaded machine. With no resolver named, a lookup that /etc/hosts does not
 * answer fails at once.
 */
function named(root: string, name: string): void {
  writeFileSync(join(root, 'etc/hostname'), `${name}\n`);
  writeFileSync(
    join(root, 'etc/hosts'),
    `127.0.0.1\tlocalhost\n127.0.1.1\t${name}\n::1\t\tlocalhost ip6-localhost ip6-loopback\n`,
  );
  writeFileSync(join(root, 'etc/resolv.conf'), '# the lab reaches no resolver: names are in /etc/hosts\n');
}

export class Booted {
  private nspawn: ChildProcess | undefined;
  private exited: Promise<number> | undefined;
  /** The machine's PID 1 (systemd), as the host sees it. */
  pid = 0;

  private constructor(
    readonly name: string,
    readonly opts: BootOptions,
  ) {}

  get root(): string {
    return join(this.opts.dir, 'root');
  }
  get log(): string {
    return join(this.opts.dir, 'nspawn.log');
  }

  /** Copy `tree` and boot it; resolves once systemd says the system is up. */
  static async create(name: string, tree: string, opts: BootOptions): Promise<Booted> {
    mkdirSync(opts.dir, { recursive: true, mode: 0o755 });
    rmSync(join(opts.dir, 'root'), { recursive: true, force: true });
    // One copy per machine: nspawn refuses a tree another nspawn uses.
    const cp = await runAny('cp', ['-a', '--reflink=auto', tree, join(opts.dir, 'root')]);
    if (cp.code !== 0) throw new Error(`copying ${tree} failed: ${cp.stderr.trim()}`);
    named(join(opts.dir, 'root'), name);
    const m = new Booted(name, opts);
    await m.boot();
    return m;
  }

  async boot(): Promise<void> {
    const fd = openSync(this.log, 'a', 0o644);
    const args = [
      '--register=no',
      '--keep-unit',
      '-q',
      '-D',
      this.root,
      '-M',
      this.name,
      '-b',
      `--network-namespace-path=/run/netns/${this.opts.netns}`,
      // wireguard-go needs the tun device; nothing else of the host's /dev.
      '--bind=/dev/net/tun',
      // A machine's root may change its own network (nftables, WireGuard);
      // nspawn leaves CAP_NET_ADMIN out of a container's bounding set.
      '--capability=CAP_NET_ADMIN',
      ...(this.opts.bindRo ?? []).map(([h, i]) => `--bind-ro=${h}:${i}`),
    ];
    // setsid: its own session, so the lab's signals and terminal never reach it.
    const child = spawn('setsid', ['--wait', 'systemd-nspawn', ...args], { stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.nspawn = child;
    this.exited = new Promise((resolve) => child.once('exit', (code, sig) => resolve(code ?? (sig ? 128 : 1))));
    this.pid = await until(
      () => this.init(),
      60,
      () => `${this.name} did not start systemd (see ${this.log}):\n${this.tail()}`,
    );
    // `running`, or `degraded` when a unit of the distribution failed; either way boot is over.
    await until(
      async () => {
        const r = await this.run(['/usr/bin/systemctl', 'is-system-running']);
        return /^(running|degraded)/.test(r.stdout.trim());
      },
      300,
      () => `${this.name} did not finish booting (see ${this.log}):\n${this.tail()}`,
    );
  }

  /** PID 1 of the machine: the systemd child of nspawn. */
  private async init(): Promise<number | null> {
    if (!this.nspawn?.pid) return null;
    const r = await runAny('pgrep', ['-P', String(await this.nspawnPid())]);
    const pid = Number(r.stdout.trim().split('\n')[0]);
    return pid > 0 ? pid : null;
  }

  /** setsid --wait forks: the nspawn process is its child. */
  private async nspawnPid(): Promise<number> {
    const r = await runAny('pgrep', ['-P', String(this.nspawn!.pid), 'systemd-nspawn']);
    return Number(r.stdout.trim().split('\n')[0]) || this.nspawn!.pid!;
  }

  tail(n = 30): string {
    try {
      return readFileSync(this.log, 'utf8').split('\n').slice(-n).join('\n');
    } catch {
      return '';
    }
  }

  /** Run argv inside the machine (all its namespaces); resolves whatever the exit code. */
  run(argv: string[], opts: { input?: string } = {}): Promise<Ran> {
    return runAny('nsenter', ['-t', String(this.pid), '-a', '--', ...argv], {
      ...opts,
      env: { ...process.env, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' },
    });
  }

  async ok(argv: string[], opts: { input?: string } = {}): Promise<string> {
    const r = await this.run(argv, opts);
    if (r.code !== 0)
      throw new Error(`${argv.join(' ')} on ${this.name} exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
  }

  /** `reboot` inside, nspawn's exit (133) seen, the same tree booted again. Returns the exit status. */
  async reboot(): Promise<number> {
    const before = this.exited!;
    await this.run(['/usr/bin/systemctl', 'reboot']);
    const code = await before;
    await this.boot();
    return code;
  }

  /**
   * End the machine: nspawn's SIGTERM powers it off; if it has not gone in
   * 10 s (Debian's own rabbitmq-server takes 90 s to stop) its PID 1 is
   * killed, and with it, by the kernel, everything in its PID namespace.
   */
  async stop(): Promise<void> {
    if (!this.nspawn || this.nspawn.exitCode !== null) return;
    const pid = await this.nspawnPid();
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      /* gone */
    }
    const done = await Promise.race([this.exited!.then(() => true), sleep(10_000).then(() => false)]);
    if (!done) {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      await this.exited;
    }
  }
}
