// A real headless Chromium (Debian's), driven by playwright-core: the
// console's pages are tested where people look at them. The flags keep a
// browser on a closed network from waiting on connections it will never get.
import { chromium, type Browser } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

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
