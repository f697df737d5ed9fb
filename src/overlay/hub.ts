// `mesh overlay hub NODE [--off]` and `mesh overlay address NODE ADDR`: the
// two facts of the graph an operator decides. The rules (a hub must be
// dialable, an address is never shared) are in SQL.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import { refuse } from '../sys/errors.js';

export async function overlayHub(node: string, on: boolean): Promise<{ node: string; hub: boolean; changed: boolean }> {
  nodeName(node);
  return withStore('overlay', async (sql) => {
    const [r] = await sql`select overlay.set_hub(node_name => ${node}::text, on_off => ${on}::boolean) as changed`;
    return { node, hub: on, changed: r!.changed as boolean };
  });
}

export async function overlayAddress(
  node: string,
  address: string,
): Promise<{ node: string; address: string; changed: boolean }> {
  nodeName(node);
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(address)) throw refuse('MSH67', `${address} is not an IPv4 address`);
  return withStore('overlay', async (sql) => {
    const [r] =
      await sql`select overlay.set_address(node_name => ${node}::text, wanted => ${address}::inet) as changed`;
    return { node, address, changed: r!.changed as boolean };
  });
}
