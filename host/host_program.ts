// mesh-host's commands, registered in the program shell shared with mesh and
// mesh-builder (src/sys/program.ts) and not yet run: cli.ts runs them, and
// the CLI reference (docs/reference/cli.md) is generated from them.
import { readFileSync } from 'node:fs';
import { program, type Program } from '../src/sys/program.js';
import { log } from '../src/sys/log.js';
import { enrol } from './enrol.js';
import { runHost } from './run.js';
import { hostConfig } from './config.js';
import { take } from './overlay/take.js';
import { refuse } from '../src/sys/errors.js';
import { supervise } from './upgrade/supervise.js';

/** `mesh-host` with its commands, registered and not yet run. */
export function hostProgram(): Program {
  const p = program(
    'mesh-host',
    'The mesh agent on a machine. Keeps its identity, keys and applied state in MESH_HOST_DIR (default /var/lib/mesh-host).',
  );

  enrolCommand(p);
  runCommand(p);
  superviseCommand(p);
  overlayTakeCommand(p);
  return p;
}

function enrolCommand(p: Program): void {
  p.prog
    .command('enrol [token]')
    .describe([
      'Join the mesh with the one-time token `mesh token issue NAME` printed, read on standard input: the line it prints is',
      '`echo TOKEN | mesh-host enrol`. A token on the command line is refused: every user of the machine could read it there.',
      "Makes this machine's identity, overlay and sealing keys and chooses its broker password, keeps them in",
      "MESH_HOST_DIR/enrolment.pending.json (0600) before sending anything, dials the token's brokers pinned to their",
      'certificate fingerprints, and keeps the identity only once the mesh has recorded it and its welcome names the signing',
      'key the token names. A broker lost before the answer came is not the end: the next one is dialled and the request sent',
      'again. Interrupted (a dead process, a timeout)? Run the same command again: it resumes with the same keys and',
      'password, also once the token is spent for them. A different token replaces the pending enrolment. An enrolled',
      'machine refuses a second token rather than take a second identity. MESH_HOST_ENROL_SECONDS (60): how long the whole',
      'enrolment may take, every broker and resend.',
    ])
    .option('--json', 'Print as JSON')
    .example('enrol < token.txt')
    .action(
      p.wrap(async (argv: string | undefined, o: { json?: boolean }) => {
        if (argv !== undefined)
          throw refuse(
            'MSHU2',
            "a token on mesh-host enrol's command line: every user of this machine can read it in the process list, and the shell keeps it in its history",
            'give it on standard input as mesh token issue prints it: echo TOKEN | mesh-host enrol',
          );
        const token = readFileSync(0, 'utf8').trim();
        if (!token)
          throw refuse(
            'MSHU3',
            'no token on standard input',
            'give it on standard input as mesh token issue prints it: echo TOKEN | mesh-host enrol',
          );
        const c = hostConfig();
        const r = await enrol(token, c.dir, {
          timeoutMs: c.enrolSeconds * 1000,
          step: (s) => log(s.line),
        });
        if (o.json) console.log(JSON.stringify(r, null, 2));
        else
          console.log(
            `enrolled as ${r.name} in mesh ${r.mesh}\n  identity ${r.keys.identity}\n  overlay  ${r.keys.overlay}\n  sealing  ${r.keys.sealing}`,
          );
      }),
    );
}

function runCommand(p: Program): void {
  p.prog
    .command('run')
    .describe([
      'Hold the link to the broker, apply every verified declaration, keep it applied, report what this machine holds.',
      'Without an identity it waits for `mesh-host enrol`. SIGUSR1 ends the current connection attempt at once (a network came up).',
      'Intervals: MESH_HOST_HEARD_SECONDS (60), MESH_HOST_RECONCILE_SECONDS (300), MESH_HOST_BACKOFF_MIN_SECONDS (2),',
      'MESH_HOST_BACKOFF_MAX_SECONDS (120), MESH_HOST_BACKOFF_RESET_SECONDS (30). Paths a declaration may write: MESH_HOST_ROOTS (colon-separated).',
    ])
    .action(p.wrap(() => runHost({ config: hostConfig(), log })));
}

function superviseCommand(p: Program): void {
  p.prog
    .command('supervise')
    .describe([
      "What starts the agent (the mesh-host unit's ExecStart): runs it from the version the package root makes current",
      '(MESH_HOST_DIR/agent/current; the installed agent while none is) and starts it again whenever it ends, running the',
      'guard before each start. An upgrade not proven by a report within its wait, or that ends at once three times, is',
      'switched back to the version before it by the guard, and remembered as failed so it is not taken again. SIGTERM and',
      'SIGINT end both; SIGUSR1 is passed on.',
    ])
    .action(p.wrap(() => supervise(hostConfig().dir, log)));
}

function overlayTakeCommand(p: Program): void {
  p.prog
    .command('overlay take')
    .describe([
      "Adopt a WireGuard tunnel that ran here before the mesh: its key becomes this node's overlay key and the mesh's",
      "interface takes its place. Nothing is stopped until the declared interface is proven to listen on the tunnel's port, at",
      "its address, with its key; the mesh is told the key (signed by this node's identity key) before it is written here.",
      "If the mesh's interface fails to start, the tunnel is started again. The account (not taken / taken / down) is printed",
      'and kept in MESH_HOST_DIR/overlay-take.json. Exit 0 only when taken.',
    ])
    .option('--tunnel', 'The interface to take over, raised by wg-quick from /etc/wireguard/IFACE.conf')
    .option('--json', 'Print the account as JSON')
    .example('overlay take --tunnel wg0')
    .action(
      p.wrap(async (o: { tunnel?: string; json?: boolean }) => {
        if (!o.tunnel) throw refuse('MSH80', 'no tunnel was named');
        const config = hostConfig();
        const acc = await take({ dir: config.dir, config, tunnel: String(o.tunnel), log });
        if (o.json) process.stdout.write(JSON.stringify(acc, null, 2) + '\n');
        else process.stdout.write(`${acc.state}: ${acc.reason}\n`);
        if (acc.state !== 'taken') process.exitCode = acc.state === 'down' ? 3 : 2;
      }),
    );
}
