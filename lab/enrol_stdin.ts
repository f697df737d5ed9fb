// `mesh-host enrol`, with the token read from stdin rather than argv: the lab
// hands a machine its token without it ever sitting on a command line.
import { enrol } from '../host/enrol.js';
import { stateDir } from '../host/config.js';

let text = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) text += chunk;
try {
  const r = await enrol(text.trim(), stateDir());
  console.log(`enrolled as ${r.name} in mesh ${r.mesh}`);
  process.exit(0);
} catch (err) {
  process.stderr.write(`enrol: ${(err as Error).message}\n`);
  process.exit(1);
}
