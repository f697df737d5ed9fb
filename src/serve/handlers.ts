// Every kind of message `serve` handles, keyed by routing key. The type is
// CONTROL_KINDS (src/broker/topology.ts), the list the control queue is bound
// to: a kind handled here and left unbound, or bound and not handled, does not compile.
import type { ConsumeMessage } from 'amqplib';
import type { ServeContext } from './context.js';
import type { ControlKind } from '../broker/topology.js';
import { enrol } from './handlers/enrol.js';
import { report } from './handlers/report.js';
import { recover } from './handlers/recover.js';
import { rekey } from './handlers/rekey.js';
import { buildResult } from './handlers/build_result.js';
import { builderEnrol } from './handlers/builder_enrol.js';
import { agentPackage } from './handlers/agent_package.js';

export type Handler = (ctx: ServeContext, msg: ConsumeMessage) => Promise<void>;

export const HANDLERS: Record<Exclude<ControlKind, 'heard'>, Handler> = {
  enrol,
  report,
  recover,
  rekey,
  'build.result': buildResult,
  'builder.enrol': builderEnrol,
  'agent.package': agentPackage,
};
