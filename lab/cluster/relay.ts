// A TCP relay, for the lab's second `mesh serve`: on the first node it listens
// on the node's overlay address and hands each connection to a service that
// listens on loopback only (the broker's plaintext AMQP and management API,
// the store). The overlay is WireGuard, and the declared firewall admits these
// ports from the second serve's machine alone (an opening from module
// lab-serve), so nothing here is reachable from anywhere else.
//   relay.js LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT
import { createServer, connect } from 'node:net';

const [lh, lp, th, tp] = process.argv.slice(2);
if (!lh || !lp || !th || !tp) {
  process.stderr.write('usage: relay.js LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT\n');
  process.exit(2);
}
const server = createServer((a) => {
  const b = connect(Number(tp), th);
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.on('error', end);
  b.on('error', end);
  a.on('close', end);
  b.on('close', end);
  a.pipe(b);
  b.pipe(a);
});
server.on('error', (err) => {
  process.stderr.write(`relay ${lh}:${lp}: ${err.message}\n`);
  process.exit(1);
});
server.listen(Number(lp), lh, () => console.log(`relay ${lh}:${lp} -> ${th}:${tp}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
