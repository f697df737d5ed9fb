// What a handler is given: the stores of the contexts it may touch, the
// way to answer a node, the signer and the account manager.
import type { ConsumeMessage } from 'amqplib';
import type { Sql } from '../store/connect.js';
import type { Accounts } from '../broker/accounts.js';
import type { Signer } from '../home/home.js';
import type { Redeclarer } from './redeclare.js';
import type { LogFields } from '../sys/log.js';
import type { Context } from '../store/contexts.js';
import { accountFrom } from '../wire/names.js';
import type { Answer } from './answers.js';
import type { ReportEntry, Recorded } from '../inventory/reports.js';
import type { Ack } from '../assignment/acknowledge.js';
import type { Settled } from '../provision/settle.js';

/**
 * The contexts serve works in, and so the only store URLs it is handed (P1):
 * never audit, whose rows its contexts' triggers write, not serve itself.
 */
export const SERVE_CONTEXTS = [
  'inventory',
  'assignment',
  'catalogue',
  'secret',
  'provision',
  'overlay',
] as const satisfies readonly Context[];

export type Stores = Record<(typeof SERVE_CONTEXTS)[number], Sql>;

export interface ServeContext {
  stores: Stores;
  /** The one way serve answers a node: on a connection of its own (src/serve/answers.ts). */
  answer: Answer;
  accounts: Accounts;
  signer: Signer;
  /** The broker's account prefix for this mesh (broker.json accountPrefix). */
  prefix: string;
  /** W2: declare every node whose composition changed, and keep trying until that succeeds. */
  redeclare: Redeclarer;
  /** A node's report recorded, with those that arrive beside it (src/inventory/reports.ts); rejects with its own refusal. */
  recordReport(entry: ReportEntry): Promise<Recorded>;
  /** A declaration applied and those skipped, acknowledged with those that arrive beside it. */
  acknowledge(ack: Ack): Promise<void>;
  /** The rotations a node's acknowledgement settles, settled (S5; src/provision/settle.ts). */
  settle(node: string): Promise<Settled[]>;
  log(line: string, fields?: LogFields): void;
}

/** The node a message came from: RabbitMQ checks user_id against the connection's user. */
export function sender(msg: ConsumeMessage, prefix = ''): { kind: 'node' | 'builder' | 'other'; name: string } {
  const full = String(msg.properties.userId ?? '');
  if (!full.startsWith(prefix)) return { kind: 'other', name: full };
  return accountFrom(full, prefix) ?? { kind: 'other', name: full.slice(prefix.length) };
}
