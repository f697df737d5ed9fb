// `mesh broker add|list|remove`: the brokers hosts may dial (inventory.broker,
// sql/inventory/0011). The rules are in SQL; here only the one fact SQL
// cannot know: the home's own broker (broker.json), which is the whole list
// while the table is empty and is recorded beside the first one added.
import { withStore } from '../store/with_store.js';
import { readBroker } from '../home/home.js';
import { nodeName } from '../wire/names.js';

export interface BrokerRow { address: string; fingerprint: string; node: string | null; added_at: Date | null; recorded: boolean }

export interface BrokerAdded {
  address: string;
  fingerprint: string;
  node: string | null;
  /** added, changed (fingerprint or node: a certificate change is declared like any other) or unchanged. */
  outcome: 'added' | 'changed' | 'unchanged';
  /** The home's broker, recorded by this first add so the list is complete. */
  recordedHome?: { address: string; fingerprint: string };
}

/** Fingerprints as openssl and Node print them, whatever case was pasted. */
export const normalFingerprint = (fp: string) => fp.trim().toUpperCase();

export async function brokerAdd(address: string, fingerprint: string, node?: string): Promise<BrokerAdded> {
  if (node !== undefined) nodeName(node);
  const fp = normalFingerprint(fingerprint);
  return withStore('inventory', (sql) => sql.begin(async (tx) => {
    let recordedHome: BrokerAdded['recordedHome'];
    const [{ n }] = await tx`select count(*)::int as n from inventory.broker` as unknown as [{ n: number }];
    if (n === 0) {
      // Until now the home's broker was the whole list, implicitly; a list that
      // left it out would have every node drop the broker it is on.
      const home = readBroker();
      if (home.public !== address) {
        const [h] = await tx`select inventory.put_broker(address => ${home.public}::text, fingerprint => ${home.fingerprint}::text) as outcome`;
        if (h!.outcome === 'added') recordedHome = { address: home.public, fingerprint: home.fingerprint };
      }
    }
    const [r] = await tx`select inventory.put_broker(address => ${address}::text, fingerprint => ${fp}::text, node_name => ${node ?? null}::text) as outcome`;
    return { address, fingerprint: fp, node: node ?? null, outcome: r!.outcome as BrokerAdded['outcome'], ...(recordedHome ? { recordedHome } : {}) };
  }));
}

/** Every broker hosts may dial; while none is recorded, the home's (recorded: false). */
export async function brokerList(): Promise<BrokerRow[]> {
  const rows = await withStore('inventory', (sql) => sql<BrokerRow[]>`
    select b.address, b.fingerprint, b.node, b.added_at, true as recorded from inventory.broker b order by b.address`);
  if (rows.length) return [...rows];
  const home = readBroker();
  return [{ address: home.public, fingerprint: home.fingerprint, node: null, added_at: null, recorded: false }];
}

export async function brokerRemove(address: string): Promise<{ removed: string }> {
  await withStore('inventory', (sql) => sql`select inventory.remove_broker(address => ${address}::text)`);
  return { removed: address };
}
