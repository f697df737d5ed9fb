// The example reverse proxy: its table is the directory the mesh wrote,
// replaced whole on each load; a name it does not serve is refused by saying
// which names it does. Real loopback HTTP, no mesh needed.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import http from 'node:http';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startProxy, loadRoutes, decide } from '../../lab/modules/route-proxy.js';

const P = suite('route proxy');

const binds = (dir: string, consumer: string, name: string, port: number) =>
  writeFileSync(
    join(dir, `${consumer}.binds`),
    JSON.stringify({
      kind: 'route',
      provision: 'edge',
      consumer,
      name,
      port,
      upstreams: [{ node: `${consumer}-node`, host: '127.0.0.1' }],
    }),
  );

function get(port: number, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/', headers: { host } }, (r) => {
        let body = '';
        r.on('data', (d) => {
          body += d;
        });
        r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

P(
  'routes a served name to its consumer; refuses another name by listing the served ones; reload replaces the table whole',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mesh-proxy-'));
    const upstream = http.createServer((_q, s) => s.end('from shop'));
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
    const upPort = (upstream.address() as { port: number }).port;
    binds(dir, 'shop', 'shop.test', upPort);
    binds(dir, 'blog', 'blog.test', 1);
    const proxy = startProxy(dir);
    try {
      const port = await proxy.listening;
      assert.equal(await get(port, 'shop.test'), { status: 200, body: 'from shop' });
      const miss = await get(port, 'nope.test');
      assert.is(miss.status, 421);
      assert.match(miss.body, /nope\.test is not served here; this proxy serves: blog\.test, shop\.test/);
      // The file is the whole truth: a withdrawn route is not kept by a merge.
      rmSync(join(dir, 'blog.binds'));
      proxy.reload();
      const gone = await get(port, 'blog.test');
      assert.is(gone.status, 421);
      assert.match(gone.body, /this proxy serves: shop\.test$/m);
    } finally {
      await proxy.close();
      upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

P('decide is a pure function of the table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-proxy-'));
  try {
    assert.equal(decide(loadRoutes(dir), 'x.test'), {
      refused: 'x.test is not served here; this proxy serves: (no names)',
    });
    binds(dir, 'a', 'a.test', 81);
    assert.equal(decide(loadRoutes(dir), 'A.test:443'), { upstream: { node: 'a-node', host: '127.0.0.1', port: 81 } });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

P.run();
