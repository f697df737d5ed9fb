// `mesh console`, `mesh console token`: the read-only web console
// and the one-time link that signs a person in to it.
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
import { startConsole } from '../console/server.js';
import { DEFAULT_LISTEN, parseListen, consoleUrl } from '../console/listen.js';
import { issueSignIn } from '../inventory/console.js';
import { refuse } from '../sys/errors.js';

export function registerConsole(p: Program): void {
  p.prog
    .command('console')
    .describe([
      `Serve the read-only web console (fleet, node, overlay, catalogue, history) on ADDRESS:PORT, by default ${DEFAULT_LISTEN}: loopback only,`,
      "unless you name another address (e.g. this node's overlay address; open it in the firewall with a module's opening entry).",
      'Everything it shows is read from the views the CLI prints; pages update live. Sign in with a link from mesh console token.',
      'Needs MESH_STORE_INVENTORY, MESH_STORE_ASSIGNMENT, MESH_STORE_OVERLAY, MESH_STORE_CATALOGUE and MESH_STORE_AUDIT.',
    ])
    .option('--listen', 'ADDRESS:PORT to serve on', DEFAULT_LISTEN)
    .option('--tls-cert', 'Serve HTTPS with this certificate file (PEM); the session cookie is then Secure')
    .option('--tls-key', "The certificate's private key file (PEM)")
    .example('console')
    .example('console --listen 10.99.0.1:7780')
    .action(
      p.wrap(async (o: { listen?: string; 'tls-cert'?: string; 'tls-key'?: string }) => {
        if (Boolean(o['tls-cert']) !== Boolean(o['tls-key']))
          throw refuse('MSHF0', 'only one of --tls-cert and --tls-key was given');
        const c = await startConsole({ listen: o.listen, tlsCert: o['tls-cert'], tlsKey: o['tls-key'] });
        await new Promise<void>((resolve) => {
          for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve());
        });
        await c.stop();
      }),
    );

  p.prog
    .command('console token')
    .describe([
      'Print a one-time link that signs a browser in to mesh console. The link works once, before it expires;',
      'its secret is stored only hashed. --listen (and --tls) must say where the console serves, to write the link.',
    ])
    .option('--listen', 'ADDRESS:PORT the console serves on', DEFAULT_LISTEN)
    .option('--tls', 'The console serves HTTPS')
    .option('--ttl', 'How long the link lives: 5m, 1h', '10m')
    .option('--json', 'Print as JSON')
    .example('console token')
    .action(
      p.wrap(async (o: { listen?: string; tls?: boolean; ttl?: string; json?: boolean }) => {
        const base = consoleUrl(parseListen(o.listen), Boolean(o.tls));
        const s = await issueSignIn(o.ttl);
        emit({ link: `${base}/signin?token=${s.secret}`, expires: s.expires }, o, (d) => d.link);
      }),
    );
}
