// `mesh secret accept NAME` (S4): a value some other system was told (a broker
// password, a database superuser's), handed over once, sealed to each holder
// and never regenerated. Read from a file or stdin, never argv or env. Also
// how it is issued again to a machine that rejoined with a new sealing key.
import { readFileSync } from 'node:fs';
import { withStore } from '../store/with_store.js';
import { declare, type Declared } from '../assignment/declare.js';
import { nodeName } from '../wire/names.js';
import { sealTo, makeSealed, type Sealed } from './value.js';
import { sealingKeys } from './keys.js';
import { missingQueues } from './queues.js';
import { refuse } from '../sys/errors.js';

export interface PlacedSecret {
  name: string;
  origin: 'made' | 'accepted';
  generation: number;
  holders: string[];
  sent: Declared[];
}

export interface PlaceOptions {
  nodes: string[];
  path: string;
  mode?: string;
  from?: string;
}

function readValue(from: string): Buffer {
  const v = readFileSync(from === '-' ? 0 : from);
  if (v.length === 0) throw refuse('MSH46', `${from === '-' ? 'stdin' : from} is empty`);
  return v;
}

/** Accept a value (origin 'accepted'), or make one (origin 'made'), and send it to its holders. */
export async function placeSecret(name: string, origin: 'made' | 'accepted', o: PlaceOptions): Promise<PlacedSecret> {
  o.nodes.forEach((n) => nodeName(n));
  if (o.nodes.length === 0) throw refuse('MSH47', 'no holder was named');
  // Read first, so an empty value is refused before the store or the broker is asked.
  const value = origin === 'accepted' ? readValue(o.from ?? '-') : undefined;
  const { generation, sealed } = await withStore('secret', async (sql) => {
    let sealed: Sealed;
    const holders = await sealingKeys(sql, o.nodes);
    const unknown = o.nodes.filter((n) => !holders.some((h) => h.node === n));
    if (unknown.length)
      throw refuse('MSH18', `no enrolled node named ${unknown.join(', ')}`, 'nothing was stored; see mesh node list');
    const gone = await missingQueues(o.nodes);
    if (gone?.length) throw refuse('MSH49', `${gone.join(', ')} has no queue on the broker`);
    sealed = value ? sealTo(value, holders) : makeSealed(holders);
    const [row] =
      origin === 'accepted'
        ? await sql`select secret.put_accepted(secret_name => ${name}::text, holders => ${sealed.holders}::text[], sealed_to => ${sealed.keys}::text[],
                     blobs => ${sealed.blobs}::text[], secret_path => ${o.path}::text, secret_mode => ${o.mode ?? '0600'}::text) as generation`
        : await sql`select secret.put_made(secret_name => ${name}::text, holders => ${sealed.holders}::text[], sealed_to => ${sealed.keys}::text[],
                     blobs => ${sealed.blobs}::text[], secret_path => ${o.path}::text) as generation`;
    return { generation: Number(row!.generation), sealed };
  }).finally(() => value?.fill(0));
  const sent = await declare({ nodes: sealed.holders });
  return { name, origin, generation, holders: sealed.holders, sent };
}

export async function secretList() {
  return withStore(
    'secret',
    (sql) =>
      sql`select name, origin, generation, path, holders, stale_holders, sealed_at from secret.status order by name`,
  );
}
