// The brokers resource: every broker this node may dial, with
// the fingerprint it pins at each. Applying it rewrites the list in
// identity.json (atomically, 0600; vhost, account and password stay); the
// link reads the list at each attempt, so it dials the new one from its next.
// Removing it changes nothing: a declaration that no longer carries a list
// must never leave a node with none, or with fewer than it had.
import { createHash } from 'node:crypto';
import type { BrokersResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { splitHostPort } from '../../src/wire/names.js';
import { loadIdentity, saveBrokers, identityPath, type BrokerAddress } from '../identity.js';

const listOf = (r: BrokersResource): BrokerAddress[] =>
  r.brokers.map((b) => ({ ...splitHostPort(b.address), fingerprint: b.fingerprint }));
const said = (l: BrokerAddress[]) => l.map((b) => `${b.host}:${b.port}`).join(', ');

export const brokersDriver: Driver<BrokersResource> = {
  kind: 'brokers',
  target: () => 'identity.json',
  digest: (r) => createHash('sha256').update(JSON.stringify(r.brokers)).digest('hex'),

  async observe(r, ctx) {
    const id = loadIdentity(ctx.stateDir);
    if (!id) return 'absent';
    return JSON.stringify(id.brokers) === JSON.stringify(listOf(r)) ? 'ok' : 'drift';
  },

  async apply(r, ctx) {
    const want = listOf(r);
    const changed = await saveBrokers(ctx.stateDir, want);
    if (changed)
      ctx.log(
        `brokers: ${identityPath(ctx.stateDir)} now lists ${said(want)}; the link dials them from its next attempt`,
      );
    return changed;
  },

  // Never strand a node: the list it holds stays until a declaration carries another.
  async remove() {},
};
