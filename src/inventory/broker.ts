// `mesh broker add|list|remove`: the brokers hosts may dial (inventory.broker,
// sql/inventory/0011, 0012). The rules are in SQL; here only the one fact SQL
// cannot know: the home's own broker (broker.json), which is the whole list
// while the table is empty; put_broker records it beside the first one added.
import { withStore } from '../store/with_store.js';
import { readBroker } from '../home/home.js';
import { nodeName } from '../wire/names.js';

export interface BrokerRow {
  address: string;
  fingerprint: string;
  node: string | null;
  added_at: Date | null;
  recorded: boolean;
}

export interface BrokerAdded {
  address: string;
  fingerprint: string;
  node: string | null;
  /** added, changed (fingerprint or node: a certificate change is declared like any other) or unchanged. */
  outcome: 'added' | 'changed' | 'unchanged';
  /** The home's broker, recorded by this first add so the list is complete. */
  recordedHome?: { address: string; fingerprint: string };
}

/**
 * One put (inventory.put_broker, sql/inventory/0012): SQL records the home's
 * broker first when none is recorded yet, and upper-cases fingerprints; the
 * home is passed on every add because only this side can read broker.json.
 */
export async function brokerAdd(address: string, fingerprint: string, node?: string): Promise<BrokerAdded> {
  if (node !== undefined) nodeName(node);
  const home = readBroker();
  return withStore('inventory', async (sql) => {
    const [r] =
      await sql`select outcome, fingerprint_pinned, home_recorded from inventory.put_broker(address => ${address}::text, fingerprint => ${fingerprint}::text,
      home_address => ${home.public}::text, home_fingerprint => ${home.fingerprint}::text, node_name => ${node ?? null}::text)`;
    return {
      address,
      fingerprint: r!.fingerprint_pinned as string,
      node: node ?? null,
      outcome: r!.outcome as BrokerAdded['outcome'],
      ...(r!.home_recorded ? { recordedHome: { address: home.public, fingerprint: home.fingerprint } } : {}),
    };
  });
}

/** Every broker hosts may dial; while none is recorded, the home's (recorded: false). */
export async function brokerList(): Promise<BrokerRow[]> {
  const rows = await withStore(
    'inventory',
    (sql) => sql<BrokerRow[]>`
    select b.address, b.fingerprint, b.node, b.added_at, true as recorded from inventory.broker b order by b.address`,
  );
  if (rows.length) return [...rows];
  const home = readBroker();
  return [{ address: home.public, fingerprint: home.fingerprint, node: null, added_at: null, recorded: false }];
}

export async function brokerRemove(address: string): Promise<{ removed: string }> {
  await withStore('inventory', (sql) => sql`select inventory.remove_broker(address => ${address}::text)`);
  return { removed: address };
}
