// `mesh-host supervise` and `mesh-host guard` (V2). What starts the agent
// must start it from the package root's current version and run the guard
// before each start: systemd does it with ExecStartPre=mesh-host guard and
// Restart=, and where there is no systemd (a lab node, a container)
// `mesh-host supervise` does the same in one process: guard, start, wait,
// start again, for as long as it runs. Nothing here listens or talks to the
// mesh; the agent it starts does.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { guard, packageRoot, startCommand } from './package_root.js';

/** The agent this mesh-host was installed as: what runs while no upgrade is current. */
export const INSTALLED = { node: process.execPath, entry: fileURLToPath(new URL('../cli.js', import.meta.url)) };

/** How long a start that ended waits before the next. */
const AGAIN_MS = 1000;

/** The guard alone, for ExecStartPre: says what it did, and never stops the start. */
export async function runGuard(stateDir: string, log: (l: string) => void): Promise<void> {
  const g = await guard(packageRoot(stateDir));
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
      await runGuard(stateDir, log);
      const { node, entry } = startCommand(root, INSTALLED);
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
