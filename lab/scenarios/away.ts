// A declaration published while a node is away waits on the broker, in the
// node's own queue, and applies the moment the node returns (ADR 0006's buffer).
import type { Scenario } from './scenario.js';
import { fileModule, readOn } from './scenario.js';
import { waitApplied } from '../mesh_ops.js';
import { until } from '../handle.js';

const NODE_AWAY = 'b2';
const PATH = '/srv/lab/away.txt';

export const away: Scenario = {
  name: 'away',
  proves: 'a declaration published while a node is away applies when it returns',
  async run(h, say) {
    await h.stopHost(NODE_AWAY);
    say(`${NODE_AWAY}'s host stopped`);
    const { content, owed } = await fileModule(h, 'lab-away', NODE_AWAY, PATH);
    const sent = owed.filter((d) => d.node === NODE_AWAY);
    if (!sent.length || !sent[0]!.queued) throw new Error(`no declaration was sent to ${NODE_AWAY}`);
    say(`declaration ${sent[0]!.serial} owed to ${NODE_AWAY} while it is away`);
    if ((await readOn(h, NODE_AWAY, PATH)) === content)
      throw new Error(`${PATH} already holds the new content on ${NODE_AWAY}, which was away`);
    const mark = h.mark(h.hostLogPath(NODE_AWAY));
    await h.startHost(NODE_AWAY);
    await h.waitLog(
      h.hostLogPath(NODE_AWAY),
      new RegExp(`applied declaration ${sent[0]!.serial}\\b`),
      mark,
      60,
      `${NODE_AWAY} did not apply the declaration that waited for it`,
    );
    await until(
      async () => (await readOn(h, NODE_AWAY, PATH)) === content,
      10,
      `${PATH} on ${NODE_AWAY} does not hold what was declared`,
    );
    await waitApplied(h, sent);
    say(`${NODE_AWAY} came back, applied declaration ${sent[0]!.serial} and reported it; ${PATH} is in place`);
  },
};
