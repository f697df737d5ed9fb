// The operator's log: one line per event that needs a person, on stderr.
// Heard is silent: a log where the ordinary case is loud is a log nobody reads.
//
// Two forms, one setting: plain (the default: a time and a sentence, what
// journald shows a person) and MESH_LOG_FORMAT=json, one JSON object a line
// for a log shipper, with the same keys on every line, null where a line has
// nothing to say: level, time, node, serial, code, message. A refusal's code
// (MSHxx, the register's) is read from its sentence, where every refusal
// carries it, and makes the line a warning unless the caller said otherwise.
import { refuse } from './errors.js';

export type Level = 'info' | 'warn' | 'error';

export interface LogFields {
  level?: Level;
  /** The node the line is about; mesh-host's own name by default (setLogNode). */
  node?: string;
  /** The declaration serial the line is about. */
  serial?: number;
  /** A refusal code of the register; read from the message when not given. */
  code?: string;
}

export const LOG_FORMATS = ['plain', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** MESH_LOG_FORMAT, checked: a typo must not quietly give the other form. */
export function logFormat(env: NodeJS.ProcessEnv = process.env): LogFormat {
  const v = env.MESH_LOG_FORMAT ?? '';
  if (v === '') return 'plain';
  if (!(LOG_FORMATS as readonly string[]).includes(v))
    throw refuse('MSHJ9', `MESH_LOG_FORMAT must be plain or json, not ${JSON.stringify(v)}`);
  return v as LogFormat;
}

let ownNode: string | undefined;

/** The node this process is (mesh-host, once its identity is read): every line names it in the JSON form. */
export function setLogNode(name: string | undefined): void {
  ownNode = name;
}

const CODE = /\bMSH[0-9A-Z]{2}\b/;

/** The JSON form of one line: the keys always present, in this order. */
export function jsonLine(message: string, f: LogFields = {}, at = new Date()): string {
  const code = f.code ?? CODE.exec(message)?.[0] ?? null;
  return JSON.stringify({
    level: f.level ?? (code ? 'warn' : 'info'),
    time: at.toISOString(),
    node: f.node ?? ownNode ?? null,
    serial: f.serial ?? null,
    code,
    message,
  });
}

export function log(line: string, fields?: LogFields): void {
  const now = new Date();
  process.stderr.write(logFormat() === 'json' ? `${jsonLine(line, fields, now)}\n` : `${now.toISOString()} ${line}\n`);
}
