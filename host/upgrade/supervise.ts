// `mesh-host supervise` (V2): what starts the agent: the mesh-host unit's
// ExecStart, the package's and the first node's alike, and the command to run
// where there is no systemd. It
// runs the guard, starts the agent from the package root's current version
// (the installed one while none is), waits for it to end and starts it again,
// for as long as it runs. Under systemd it is the unit's main process: the
// agent it starts speaks for it to systemd (src/sys/notify.ts), and systemd
// restarts it only if it ends itself. Nothing here listens or talks to the
// mesh; the agent it starts does.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { guard, packageRoot, startCommand } from './package_root.js';

/** The agent this mesh-host was installed as: what runs while no upgrade is current. */
export const INSTALLED = { node: process.execPath, entry: fileURLToPath(new URL('../cli.js', import.meta.url)) };

/** How long a start that ended waits before the next. */
const AGAIN_MS = 1000;

/** The guard, before a start: says what it did, and never stops the start. */
async function runGuard(root: string, log: (l: string) => void): Promise<void> {
  const g = await guard(root);
  if (g.rolledBack)
    log(`guard: mesh-host ${g.rolledBack.version} ${g.rolledBack.reason}: switched back to the version before it`);
  else if (g.starting)
    log(`guard: starting mesh-host ${g.starting.version} (start ${g.starting.starts}), an upgrade not yet proven`);
}

export async function supervise(stateDir: string, log: (l: string) => void): Promise<void> {
  const root = packageRoot(stateDir);
  let stopping = false;
  let child: ReturnType<typeof spawn> | undefined;
  const forward = (sig: NodeJS.Signals) => () => {
    if (sig !== 'SIGUSR1') stopping = true;
    child?.kill(sig);
  };
  const handlers = (['SIGTERM', 'SIGINT', 'SIGUSR1'] as const).map((s) => [s, forward(s)] as const);
  for (const [s, h] of handlers) process.on(s, h);
  try {
    while (!stopping) {
      await runGuard(root, log);
      const { node, entry } = startCommand(root, INSTALLED);
      log(`supervise: starting the agent from ${entry}`);
      child = spawn(node, [entry, 'run'], { stdio: 'inherit', env: process.env });
      const code = await new Promise<number | null>((res) => {
        child!.once('exit', (c) => res(c));
        child!.once('error', (err) => {
          log(`supervise: could not start ${entry} (${err.message})`);
          res(null);
        });
      });
      child = undefined;
      if (stopping) break;
      log(`supervise: the agent ended (${code ?? 'not started'}); starting again`);
      await new Promise((r) => setTimeout(r, AGAIN_MS));
    }
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
}
