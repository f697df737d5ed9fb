// A TCP relay in front of the broker whose broker-to-client direction can be
// held (what the broker sends is dropped, never reaches the client) and whose
// connections can be cut. It makes "the broker node died after serve answered
// and before the host read the answer" a certainty rather than a race: hold,
// let serve answer, cut. New connections after a cut flow as usual.
import { createServer, connect, type Socket } from 'node:net';

export interface HoldProxy {
  /** HOST:PORT to dial instead of the broker. */
  address: string;
  /** From now on, nothing the broker sends reaches a client of this relay. */
  hold(): void;
  /** End every connection through the relay (both sides, as a dead node would); new ones flow again. */
  cut(): void;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

export async function holdProxy(target: { host: string; port: number }): Promise<HoldProxy> {
  let held = false;
  let accepted = 0;
  const open = new Set<Socket>();
  const server = createServer((client) => {
    accepted++;
    const upstream = connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => {
      if (!held) client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const s of [client, upstream]) {
      s.on('close', end);
      s.on('error', end);
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    address: `127.0.0.1:${(server.address() as { port: number }).port}`,
    hold() {
      held = true;
    },
    cut() {
      for (const s of [...open]) s.destroy();
      held = false;
    },
    accepted: () => accepted,
    close: () =>
      new Promise((r) => {
        for (const s of [...open]) s.destroy();
        server.close(() => r());
      }),
  };
}
