// A real headless Chromium (Debian's), driven by playwright-core: the
// console's pages are tested where people look at them. The flags keep a
// browser on a closed network from waiting on connections it will never get.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MESH, spawnProc, type Mesh, type Proc } from '../harness/mesh.js';
import { within } from '../harness/within.js';

export const CHROMIUM = '/usr/bin/chromium';

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // playwright gives every launch a fresh profile of its own (a temp --user-data-dir).
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Where a run's screenshots go: gitignored, beside the checkout. */
export function shotsDir(): string {
  const d = fileURLToPath(new URL('../../../.console-shots/', import.meta.url));
  mkdirSync(d, { recursive: true });
  return d;
}

/** What a console suite holds: its mesh, `mesh console`, the address it serves, a browser and a signed-in context of it. */
export interface ConsoleCtx {
  mesh: Mesh;
  console: Proc;
  base: string;
  browser: Browser;
  signed: BrowserContext;
}

/**
 * `mesh console` as it runs on a first node (each context as its reader, P1),
 * a browser, and a context signed in through a one-use link; filled into CTX
 * step by step, so the suite's after hook stops what started. The page the
 * sign-in landed on, once READY (a selector) shows on it.
 */
export async function signedConsole(ctx: ConsoleCtx, ready: string): Promise<Page> {
  ctx.console = spawnProc(process.execPath, [MESH, 'console', '--listen', '127.0.0.1:0'], {
    ...ctx.mesh.env,
    ...ctx.mesh.store.consoleEnv,
  });
  ctx.base = (await ctx.console.waitFor(/serving (http:\/\/\S+)/, 60_000))[1]!;
  ctx.browser = await launch();
  const tok = await ctx.mesh.cli(['console', 'token', '--listen', `127.0.0.1:${new URL(ctx.base).port}`, '--json']);
  if (tok.code !== 0) throw new Error(`mesh console token failed: ${tok.stderr}`);
  ctx.signed = await ctx.browser.newContext({ viewport: { width: 1280, height: 800 } });
  const p = await ctx.signed.newPage();
  await p.goto(JSON.parse(tok.stdout).link);
  await within('the sign-in button', 30_000, p.waitForSelector('#signin-form button'));
  await p.click('#signin-form button');
  await within('the fleet page after signing in', 30_000, p.waitForSelector(ready));
  return p;
}

/** Stops what signedConsole started, as far as it got, and the mesh. */
export async function stopConsole(ctx: Partial<ConsoleCtx>): Promise<void> {
  await ctx.browser?.close();
  await ctx.console?.stop();
  await ctx.mesh?.stop();
}
