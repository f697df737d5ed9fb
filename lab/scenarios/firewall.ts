// The declared firewall on real machines (X1, X2): a provision's consumer
// reaches the provider's port over the overlay while a node on the same
// overlay that does not consume it is refused (a real connect each); a rule
// added by hand to inet mesh is put back at the next reconcile (D6); and a
// declaration signed by the mesh whose firewall carries an nft injection is
// refused by the host as malformed, with nothing of it applied.
import { join } from 'node:path';
import type { Scenario } from './scenario.js';
import { moduleOf, owedBy, waitApplied, overlayNodes } from '../mesh_ops.js';
import { DIST, NODE, until, type LabHandle } from '../handle.js';

const PROVIDER = 'b1';
const CONSUMER = 'b2';
const OUTSIDER = 'hub';
const PORT = 7432;
const PROBE = join(DIST, 'lab/probe.js');

const reach = async (h: LabHandle, from: string, address: string) =>
  (await h.ok(from, [NODE, PROBE, 'connect', address, String(PORT)])).trim();
const table = (h: LabHandle, m: string) => h.ok(m, ['/usr/sbin/nft', 'list', 'table', 'inet', 'mesh']);

export const firewall: Scenario = {
  name: 'firewall',
  proves:
    'a provision consumer reaches its provider over the overlay, a non-consumer is refused, a hand-added rule is put back, a hostile rule is refused by the host',
  async run(h, say) {
    // The provider serves PORT (a listener standing in for its database); the consumer holds nothing but its grant.
    await moduleOf(h, 'lab-fw-db', [
      { kind: 'service', name: 'lab-fw-db', exec: [NODE, PROBE, 'listen', String(PORT)] },
    ]);
    await moduleOf(h, 'lab-fw-app', [{ kind: 'directory', path: '/srv/lab-fw-app', mode: '0755' }]);
    const owed = [
      ...(await owedBy(h, ['assign', 'lab-fw-db', PROVIDER])),
      ...(await owedBy(h, ['assign', 'lab-fw-app', CONSUMER])),
    ];
    const ov = await overlayNodes(h);
    const addr = ov?.nodes.find((n) => n.name === PROVIDER)?.address;
    if (!addr) throw new Error(`${PROVIDER} has no overlay address`);
    await h.meshOk([
      'provision',
      'offer',
      'lab-fw-pg',
      '--kind',
      'postgres',
      '--provider',
      'lab-fw-db',
      '--host',
      addr,
      '--port',
      String(PORT),
    ]);
    owed.push(...(await owedBy(h, ['provision', 'grant', 'lab-fw-pg', 'lab-fw-app'])));
    await waitApplied(h, owed);
    await until(
      async () => /dport 7432 accept/.test(await table(h, PROVIDER)),
      30,
      `${PROVIDER}'s firewall never admitted ${PORT}`,
    );
    say(`${PROVIDER} provides lab-fw-pg on ${addr}:${PORT}; its firewall admits ${CONSUMER}'s overlay address there`);

    const seen = await until(
      async () => {
        const r = await reach(h, CONSUMER, addr);
        return r === 'open' ? r : null;
      },
      30,
      `${CONSUMER} (consumer) could not reach ${addr}:${PORT} over the overlay`,
    );
    say(`${CONSUMER} -> ${addr}:${PORT}: ${seen}`);
    const outsider = await reach(h, OUTSIDER, addr);
    if (outsider !== 'refused')
      throw new Error(`${OUTSIDER} (not a consumer) -> ${addr}:${PORT}: ${outsider}, not refused`);
    say(`${OUTSIDER} -> ${addr}:${PORT}: refused (not a consumer)`);

    // D6: a rule added by hand is put back at the next reconcile (every 5 s in the lab).
    // The reconcile may put the rule back before the outsider tries: then add it again (it is what is tested below).
    let mark = 0;
    for (let tries = 1; ; tries++) {
      mark = h.mark(h.hostLogPath(PROVIDER));
      await h.ok(PROVIDER, [
        '/usr/sbin/nft',
        'insert',
        'rule',
        'inet',
        'mesh',
        'input',
        'tcp',
        'dport',
        String(PORT),
        'accept',
        'comment',
        '"by hand"',
      ]);
      if ((await reach(h, OUTSIDER, addr)) === 'open') break;
      if (tries === 3 || !/put back [^\n]*firewall:mesh/.test(h.readLog(h.hostLogPath(PROVIDER), mark)))
        throw new Error('the hand-added rule did not open the port');
    }
    say(`added "tcp dport ${PORT} accept" to inet mesh on ${PROVIDER} by hand: ${OUTSIDER} got in`);
    await h.waitLog(
      h.hostLogPath(PROVIDER),
      /put back [^\n]*firewall:mesh/,
      mark,
      30,
      `${PROVIDER} did not put its firewall back`,
    );
    if (/by hand/.test(await table(h, PROVIDER))) throw new Error('the hand-added rule is still in inet mesh');
    const after = await reach(h, OUTSIDER, addr);
    if (after !== 'refused')
      throw new Error(`after the put-back ${OUTSIDER} -> ${addr}:${PORT}: ${after}, not refused`);
    say(`${PROVIDER} put its firewall back; ${OUTSIDER} is refused again`);

    // X2: a hostile rule, signed by the mesh itself, is refused by the host.
    const hostile = h.mark(h.hostLogPath(PROVIDER));
    await h.ok(h.hub, [
      '/usr/bin/env',
      `MESH_HOME=${join(h.hubState(), 'home')}`,
      NODE,
      join(DIST, 'lab/inject_hostile.js'),
      PROVIDER,
    ]);
    await h.waitLog(
      h.hostLogPath(PROVIDER),
      /refused a declaration: malformed: [^\n]*rules\[0\]\.why/,
      hostile,
      30,
      `${PROVIDER} did not refuse the hostile rule`,
    );
    if (!/dport 7432 accept/.test(await table(h, PROVIDER)))
      throw new Error(`${PROVIDER}'s firewall changed after the hostile declaration`);
    say(
      `${PROVIDER} refused a signed declaration whose rule comment carried nft syntax, as malformed; its table is unchanged`,
    );

    // Leave the lab as it was: the modules and the provision go, and with them the opening.
    await waitApplied(h, [
      ...(await owedBy(h, ['provision', 'revoke', 'lab-fw-pg', 'lab-fw-app'])),
      ...(await owedBy(h, ['unassign', 'lab-fw-db', PROVIDER])),
      ...(await owedBy(h, ['unassign', 'lab-fw-app', CONSUMER])),
    ]);
  },
};
