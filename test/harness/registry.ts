// A private OCI registry for one suite: Debian's docker-registry on a free
// loopback port with its own temporary storage, stopped and removed at the
// end. Plain HTTP, so pushes and pulls need --tls-verify=false (loopback only).
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { freePort } from './ports.js';

export interface Registry {
  /** host:port, as image references name it. */
  addr: string;
  url: string;
  /** The manifest digest the registry holds for REPO:REFERENCE (a tag or digest), or null. */
  manifestDigest(repo: string, reference: string): Promise<string | null>;
  stop(): Promise<void>;
}

const ACCEPT = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
].join(', ');

export async function startRegistry(): Promise<Registry> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-registry-'));
  const port = await freePort();
  const addr = `127.0.0.1:${port}`;
  const config = join(dir, 'config.yml');
  writeFileSync(
    config,
    [
      'version: 0.1',
      'log:',
      '  level: warn',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'data')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: ${addr}`,
      '',
    ].join('\n'),
  );
  const child = spawn('docker-registry', ['serve', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, REGISTRY_HTTP_SECRET: 'mesh-test-only' },
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const url = `http://${addr}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const done = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(t);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Ready when /v2/ answers; a registry that exited says why.
  const end = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`docker-registry exited (${child.exitCode}): ${out}`);
    }
    const ok = await fetch(`${url}/v2/`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > end) {
      await stop();
      throw new Error(`docker-registry did not answer on ${addr} within 15s: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    addr,
    url,
    stop,
    async manifestDigest(repo, reference) {
      const r = await fetch(`${url}/v2/${repo}/manifests/${reference}`, {
        method: 'HEAD',
        headers: { accept: ACCEPT },
      });
      return r.ok ? r.headers.get('docker-content-digest') : null;
    },
  };
}
