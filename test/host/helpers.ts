// Shared by the host apply suites: a temp root and state directory per test,
// and small builders for resources.
import { mkdtemp, readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApplyOptions } from '../../host/apply/engine.js';
import type { DriverContext } from '../../host/apply/driver.js';
import type { FileResource, ServiceResource } from '../../src/wire/resources.js';
import { hostConfig, driverSettings } from '../../host/config.js';

export interface Sandbox {
  root: string;
  stateDir: string;
  opts: ApplyOptions;
  ctx(): DriverContext;
  logs: string[];
}

// Test "sealing": the blob is base64 of 'sealed:' + plaintext, so a test can
// tell an opened blob from a raw one.
export const seal = (plain: string) => Buffer.from('sealed:' + plain).toString('base64');
export function openSealed(blob: string): Uint8Array {
  const b = Buffer.from(blob, 'base64').toString();
  if (!b.startsWith('sealed:')) throw new Error('not sealed to this node');
  return Buffer.from(b.slice('sealed:'.length));
}

export async function sandbox(): Promise<Sandbox> {
  const base = await mkdtemp(join(tmpdir(), 'mesh-host-'));
  const root = join(base, 'root');
  const stateDir = join(base, 'state');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(root);
  await mkdir(stateDir, { mode: 0o700 });
  const logs: string[] = [];
  const opts: ApplyOptions = {
    stateDir,
    roots: [root],
    openSealed,
    overlayKeyPath: join(stateDir, 'overlay.key'),
    ...driverSettings(hostConfig()),
    log: (l) => logs.push(l),
  };
  return {
    root,
    stateDir,
    opts,
    logs,
    ctx: () => ({
      stateDir,
      roots: [root],
      openSealed,
      overlayKeyPath: opts.overlayKeyPath,
      ...driverSettings(hostConfig()),
      changed: new Set(),
      log: (l) => logs.push(l),
    }),
  };
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');

export const file = (path: string, content: string, extra: Partial<FileResource> = {}): FileResource => ({
  kind: 'file',
  id: `file:${path}`,
  path,
  content: b64(content),
  mode: '0644',
  ...extra,
});

/**
 * A service that appends its pid to `countFile` each time it starts, then
 * execs sleep: the number of lines is the number of starts.
 */
export const counter = (name: string, countFile: string, extra: Partial<ServiceResource> = {}): ServiceResource => ({
  kind: 'service',
  id: `service:${name}`,
  name,
  exec: ['/bin/sh', '-c', `echo $$ >> ${countFile}; exec sleep 1000`],
  ...extra,
});

export async function starts(countFile: string): Promise<string[]> {
  const text = await readFile(countFile, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait until `fn` holds or `ms` pass; returns the last value. */
export async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  let v = await fn();
  while (!ok(v) && Date.now() < end) {
    await sleep(25);
    v = await fn();
  }
  return v;
}

/** Running, not a zombie: a killed child waits as a zombie until its parent (or init) reaps it. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return false;
  }
}
