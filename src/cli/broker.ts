// `mesh broker add|list|remove`: the brokers every host may dial, declared to
// every node. The home's broker is the only one until one is added.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { brokerAdd, brokerList, brokerRemove } from '../inventory/broker.js';
import { refuse } from '../sys/errors.js';

export function registerBroker(p: Program): void {
  addCommand(p);
  listCommand(p);
  removeCommand(p);
}

function addCommand(p: Program): void {
  p.prog
    .command('broker add <address>')
    .describe([
      "Tell every node of a broker it may dial: ADDRESS is HOST:PORT (TLS), --fingerprint its certificate's SHA-256",
      "(openssl x509 -noout -fingerprint -sha256 -in CERT). Hosts try the brokers in turn and pin each one's fingerprint.",
      "The first add also records the home's own broker (MESH_HOME/broker.json), so the list every node receives is complete.",
      'Adding a known address again with another fingerprint is a certificate change. --node names the mesh node running it.',
      'Every node is owed a new declaration carrying the list; the command says which.',
    ])
    .option('--fingerprint', "SHA-256 of the broker node's certificate, hex pairs joined by colons")
    .option('--node', 'The enrolled mesh node that runs this broker node, if any')
    .option('--json', 'Print as JSON')
    .example('broker add mq2.example.net:5671 --fingerprint 3A:9F:...:C1 --node mq2')
    .action(
      p.wrap(async (address: string, o: { fingerprint?: string; node?: string; json?: boolean }) => {
        if (typeof o.fingerprint !== 'string' || o.fingerprint === '') {
          throw refuse(
            'MSH19',
            "the broker's certificate fingerprint is missing",
            'give --fingerprint FP (openssl x509 -noout -fingerprint -sha256 -in CERT prints it)',
          );
        }
        const r = await afterChange(
          await brokerAdd(String(address), o.fingerprint, o.node === undefined ? undefined : String(o.node)),
        );
        emit(r, o, (d) =>
          [
            ...(d.recordedHome
              ? [
                  `recorded the home's own broker ${d.recordedHome.address} (fingerprint ${d.recordedHome.fingerprint}) first, so the list is complete`,
                ]
              : []),
            d.outcome === 'added'
              ? `added broker ${d.address}`
              : d.outcome === 'changed'
                ? `changed broker ${d.address}: fingerprint ${d.fingerprint}${d.node ? `, run by ${d.node}` : ''}`
                : `broker ${d.address} was already known as given`,
            redeclareLine(d.redeclared, d),
          ].join('\n'),
        );
      }),
    );
}

function listCommand(p: Program): void {
  p.prog
    .command('broker list')
    .describe(
      "The brokers hosts may dial, with the fingerprint each pins and the mesh node running it. While none was added, the home's own (not recorded). The same answer as select * from inventory.broker_nodes.",
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        emit(await brokerList(), o, (rows) =>
          table(
            rows.map((r: Record<string, unknown>) => ({
              ...r,
              node: r.node ?? '',
              source: r.recorded ? 'declared' : 'home (only broker)',
            })),
            ['address', 'fingerprint', 'node', 'source'],
          ),
        );
      }),
    );
}

function removeCommand(p: Program): void {
  p.prog
    .command('broker remove <address>')
    .describe(
      'Stop telling nodes of a broker. Never the last one: add its replacement first. A host keeps its list when a later declaration carries none; every node is owed a new declaration without it.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (address: string, o: { json?: boolean }) => {
        emit(
          await afterChange(await brokerRemove(String(address))),
          o,
          (d) => `removed broker ${d.removed}\n${redeclareLine(d.redeclared, d)}`,
        );
      }),
    );
}
