// Every kind of message `serve` handles. The control queue is bound to exactly
// these keys (src/broker/topology.ts): one list, so a kind can't be handled
// and left unbound, which once dropped every report for an afternoon.
import type { ConsumeMessage } from 'amqplib';
import type { ServeContext } from './context.js';
import { enrol } from './handlers/enrol.js';
import { report } from './handlers/report.js';
import { recover } from './handlers/recover.js';
import { rekey } from './handlers/rekey.js';
import { buildResult } from './handlers/build_result.js';

export type Handler = (ctx: ServeContext, msg: ConsumeMessage) => Promise<void>;

export const HANDLERS: Record<string, Handler> = {
  enrol,
  report,
  recover,
  rekey,
  'build.result': buildResult,
};

/** Heard is batched by serve itself (handlers/heard.ts). */
export const CONTROL_KINDS = ['heard', ...Object.keys(HANDLERS)] as const;
