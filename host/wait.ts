// L4: a host without identity waits and says what it waits for. A freshly
// installed host sitting there waiting for a token is the intended state, not
// a failed start; an identity that exists and cannot be read is a fault.
import { loadIdentity, identityPath, type Identity } from './identity.js';

export async function waitForIdentity(
  dir: string,
  log: (l: string) => void,
  pollMs = 5000,
  signal?: AbortSignal,
  /** Each turn of the wait: the loop a host without identity runs, so systemd's watchdog is fed from it. */
  turned: () => void = () => {},
): Promise<Identity | null> {
  let said = false;
  for (;;) {
    const id = loadIdentity(dir); // throws IdentityFault: not a wait
    if (id) return id;
    turned();
    if (!said) {
      log(
        `no identity yet (${identityPath(dir)}): waiting for this machine to be enrolled with \`mesh-host enrol <token>\``,
      );
      said = true;
    }
    if (signal?.aborted) return null;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
