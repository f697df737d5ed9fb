// Run inside a lab machine (by the firewall suite and the lab's firewall scenario):
//   apply|reconcile STATE_DIR   resources as JSON on stdin, result JSON out
//   listen PORT...              accept and answer "hi" until killed
//   connect HOST PORT           prints open, refused or silent (nothing came back in 5 s)
import { createServer, connect } from 'node:net';
import { apply, reconcile } from '../host/apply/engine.js';
import { parseResources } from '../src/wire/parse_resources.js';
import { hostConfig, driverSettings } from '../host/config.js';

const [op, ...args] = process.argv.slice(2);

async function stdin(): Promise<string> {
  let s = '';
  for await (const c of process.stdin) s += c;
  return s;
}

if (op === 'apply' || op === 'reconcile') {
  // Run inside a lab machine's own namespaces: load for real (test/run.ts
  // turns loading off for the hosts that share the machine's namespace).
  const resources = parseResources(JSON.parse(await stdin()));
  const opts = {
    stateDir: args[0]!,
    roots: ['/srv'],
    openSealed: () => {
      throw new Error('none');
    },
    overlayKeyPath: '/nonexistent',
    // The probe looks at the firewall a real host loads, whatever this shell says.
    ...driverSettings({ ...hostConfig(), firewall: true }),
  };
  const out = await (op === 'apply' ? apply : reconcile)(resources, 'declared', opts);
  process.stdout.write(JSON.stringify(out));
} else if (op === 'listen') {
  // A prober that hangs up at once resets the socket: that is no reason to stop listening.
  for (const p of args)
    createServer((s) => {
      s.on('error', () => {});
      s.end('hi');
    }).listen(Number(p), '0.0.0.0');
  process.stdout.write('listening\n');
} else if (op === 'connect') {
  const s = connect(Number(args[1]), args[0]!);
  // 5 s only decides what to print; the suites assert on open/refused, never on time.
  const t = setTimeout(() => {
    process.stdout.write('silent');
    process.exit(0);
  }, 5000);
  s.on('connect', () => {
    clearTimeout(t);
    process.stdout.write('open');
    s.destroy();
  });
  s.on('error', (e: NodeJS.ErrnoException) => {
    clearTimeout(t);
    process.stdout.write(e.code === 'ECONNREFUSED' ? 'refused' : `error ${e.code}`);
  });
} else {
  process.stderr.write(`firewall_probe: unknown op ${op}\n`);
  process.exit(2);
}
