// What a suite knows of the servers the run started (test/run.ts): read from
// a 0600 file named by MESH_TEST_SERVERS, so no credential is in the environment.
import { readFileSync } from 'node:fs';

export interface Servers {
  tmp: string;
  pg: { port: number; socketDir: string };
  rabbit: {
    dir: string;
    amqpPort: number;
    amqpsPort: number;
    mgmtPort: number;
    admin: { user: string; password: string };
    fingerprint: string;
    certPath: string;
    nodename: string;
    /** rabbitmqctl's way to the node (paths and ports, no secret): a bench sets what an operator would. */
    ctlEnv: Record<string, string>;
  };
  template: string;
}

let cached: Servers | undefined;

export function servers(): Servers {
  if (cached) return cached;
  const path = process.env.MESH_TEST_SERVERS;
  if (!path) {
    throw new Error(
      'this suite needs the servers `npm test` starts: run it through `npm test` (or `node dist/test/run.js FILE`).',
    );
  }
  cached = JSON.parse(readFileSync(path, 'utf8')) as Servers;
  return cached;
}
