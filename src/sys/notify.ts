// Telling systemd a process is ready and alive (Type=notify, WatchdogSec=):
// where the work is done, so a process whose loop is stuck stops saying it
// and systemd restarts it. The caller sends alive() from its work loop; a
// timer beside the loop would keep saying alive over a loop that is stuck.
//
// Node has no unix datagram sockets, and sd_notify is one datagram to
// $NOTIFY_SOCKET. systemd-notify (systemd's own tool, in every systemd
// install) sends it, then waits at a barrier until the manager has read it,
// so the message is never lost to the tool's exit before systemd looked up
// whose it was; NotifyAccess=all admits it from the tool's pid, which belongs
// to the unit's cgroup. Running as root (mesh-host), --pid names the unit's
// main process as the sender and the main pid: this process, or the parent
// that started it when systemd watches that one (WATCHDOG_PID). A native npm binding (sd-notify, unix-dgram)
// would save the fork, once per a third of WatchdogSec: not worth a compiled
// module on every node. READY=1 rides with every ping, so a first READY lost
// to an unready manager is made good at the next.
import { spawn } from 'node:child_process';

export class Notifier {
  private readonly socket: string | undefined;
  /** How often alive() is wanted: a third of WatchdogSec; undefined when systemd watches nothing. */
  readonly everyMs: number | undefined;
  /** The unit's main process, that the word is said for: this one, or the parent that started it. */
  private readonly main: number;
  private failed = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.socket = env.NOTIFY_SOCKET || undefined;
    const usec = Number(env.WATCHDOG_USEC);
    const pid = Number(env.WATCHDOG_PID) || undefined;
    // systemd watches its main process. Started by it (mesh-host supervise, the agent's unit), this process
    // speaks for its parent: the main process stays the one systemd started, whichever agent it runs.
    const watched = !pid || pid === process.pid || pid === process.ppid;
    this.main = pid === process.ppid ? pid : process.pid;
    this.everyMs = this.socket && usec > 0 && watched ? Math.max(100, usec / 3000) : undefined;
  }

  /** Started: what systemd waits for before it counts the unit as up. */
  ready(): void {
    this.send(['READY=1']);
  }

  /** The work loop went round: systemd's watchdog is fed. */
  alive(): void {
    this.send(['READY=1', 'WATCHDOG=1']);
  }

  private send(lines: string[]): void {
    if (!this.socket) return;
    const args = process.getuid?.() === 0 ? [`--pid=${this.main}`, ...lines] : lines;
    const c = spawn('systemd-notify', args, {
      stdio: 'ignore',
      env: { NOTIFY_SOCKET: this.socket, PATH: this.env.PATH ?? '/usr/bin:/bin' },
    });
    const said = (why: string) => {
      if (this.failed) return;
      this.failed = true;
      this.log(`cannot tell systemd this process is alive (${why}); its watchdog will restart it`);
    };
    c.on('error', (err) => said(err.message));
    c.on('exit', (code) => {
      if (code === 0) this.failed = false;
      else said(`systemd-notify exited ${code}`);
    });
  }
}
