// Example reverse proxy (a route provider). Its table is the directory the
// mesh wrote, <root>/provides/<provision>/, one CONSUMER.binds per route, and
// it is replaced WHOLE on every load rather than merged: the files are the
// whole truth about who has a route, and merging would keep serving a name
// whose module was unassigned (a stale route one level down).
// A name it does not serve is refused by saying which names it does serve.
import http from 'node:http';
import { readProvides } from './provision_files.js';

export interface Upstream {
  node: string;
  host: string;
  port: number;
}
export type RouteTable = ReadonlyMap<string, Upstream[]>;

export function loadRoutes(dir: string): RouteTable {
  const t = new Map<string, Upstream[]>();
  for (const { binds } of readProvides(dir)) {
    if (binds.kind !== 'route') continue;
    const ups = (binds.upstreams as { node: string; host: string }[] | undefined) ?? [];
    t.set(
      String(binds.name),
      ups.map((u) => ({ node: u.node, host: u.host, port: Number(binds.port) })),
    );
  }
  return t;
}

export type Decision = { upstream: Upstream } | { refused: string };

/** Where a request for `name` goes, or why it is refused. */
export function decide(table: RouteTable, name: string): Decision {
  const host = name.replace(/:\d+$/, '').toLowerCase();
  const ups = table.get(host);
  const served = [...table.keys()].sort();
  if (!ups) return { refused: `${host} is not served here; this proxy serves: ${served.join(', ') || '(no names)'}` };
  if (ups.length === 0) return { refused: `${host} is served here but no node runs its module yet` };
  return { upstream: ups[0]! };
}

/** A proxy on loopback: reload() re-reads the directory and swaps the whole table. */
export function startProxy(
  dir: string,
  opts: { port?: number; resolve?: (u: Upstream) => { host: string; port: number } } = {},
) {
  let table = loadRoutes(dir);
  const server = http.createServer((req, res) => {
    const d = decide(table, req.headers.host ?? '');
    if ('refused' in d) {
      res.writeHead(421, { 'content-type': 'text/plain' }).end(d.refused + '\n');
      return;
    }
    const to = opts.resolve ? opts.resolve(d.upstream) : d.upstream;
    const up = http.request(
      { host: to.host, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', (e) => {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${d.upstream.node} failed: ${e.message}\n`);
    });
    req.pipe(up);
  });
  const listening = new Promise<number>((resolve) =>
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
  );
  return {
    listening,
    reload() {
      table = loadRoutes(dir);
      return table;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
