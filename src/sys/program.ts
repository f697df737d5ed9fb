// The one program shell of the three CLIs (mesh, mesh-host, mesh-builder), as
// ley's bin.js wraps every command with the same `wrap`: a failure is one
// sentence naming the remedy and a non-zero exit, the cause chain only with
// MESH_DEBUG; an option no command knows is refused with the ones it does
// (sade alone would accept `--stie b` and run the command without a site);
// `--help` lists the commands grouped by noun, each group sorted.
import sade from 'sade';
import { errorJson, refuse, MeshError } from './errors.js';
import { VERSION } from './version.js';
import { logFormat, jsonLine } from './log.js';

export type Sade = sade.Sade;

// sade 1.8 keeps each command (usage, describe, options) in `tree`; aliases are strings, internals start with __.
interface Command {
  usage: string;
  describe?: string[];
  options: [string, string, unknown?][];
}
type Tree = Record<string, Command | string>;

export interface Program {
  readonly bin: string;
  readonly prog: Sade;
  /** Commands `register` adds are listed together under `noun` in --help. */
  noun(noun: string, register: (p: Program) => void): void;
  /** An action that fails with one sentence, `bin: message`, and its exitCode (default 1). */
  wrap<A extends unknown[]>(fn: (...args: A) => Promise<unknown> | unknown): (...args: A) => Promise<void>;
  /** Parse and run; unknown options are refused before any action runs. */
  run(argv?: string[]): void;
}

export function fail(bin: string, err: unknown): void {
  const e = err as Error & { exitCode?: number };
  // The last line a program says is a line of its log, in the log's form (a bad MESH_LOG_FORMAT is said plain).
  let json = false;
  try {
    json = logFormat() === 'json';
  } catch {
    /* said plain */
  }
  process.stderr.write(
    json
      ? `${jsonLine(`${bin}: ${e.message}`, { level: 'error', code: err instanceof MeshError ? err.code : undefined })}\n`
      : `${bin}: ${e.message}\n`,
  );
  // A program reading --json reads a refusal's code, not the sentence. Only a
  // refusal: a command that printed its result and then failed (secret remake
  // with a secret refused) keeps stdout one JSON document.
  if (err instanceof MeshError && process.argv.includes('--json'))
    process.stdout.write(JSON.stringify(errorJson(err), null, 2) + '\n');
  if (process.env.MESH_DEBUG) console.error(e);
  process.exitCode = e.exitCode ?? 1;
}

class UnknownOption extends Error {}

let running: string | undefined;

/** The command this process runs (`mesh token issue`), once the shell parsed it; else the program's file. Who, in the audit history. */
export function commandName(): string {
  return running ?? (process.argv[1] ?? 'node').split('/').at(-1)!.replace(/\.js$/, '');
}

/** A program of the shell: its --version is the package's. */
export function program(bin: string, describe: string): Program {
  const prog = sade(bin).version(VERSION).describe(describe);
  const tree = (): Tree => (prog as unknown as { tree: Tree }).tree;
  const nounOf = new Map<string, string>();
  const commands = () =>
    Object.entries(tree()).filter((e): e is [string, Command] => typeof e[1] !== 'string' && !e[0].startsWith('__'));

  const p: Program = {
    bin,
    prog,
    noun(noun, register) {
      const before = new Set(Object.keys(tree()));
      register(p);
      for (const name of Object.keys(tree())) if (!before.has(name)) nounOf.set(name, noun);
    },
    wrap(fn) {
      return async (...args) => {
        // A command whose every socket closed under it (its store gone mid-commit)
        // leaves nothing to wait on, and node would exit 0 having said nothing: a
        // commit nobody confirmed must never read as done.
        const unfinished = () => {
          process.stderr.write(
            `${bin}: ended before it finished (its connection was lost): run it again once the store answers.\n`,
          );
          process.exitCode = 1;
        };
        process.once('beforeExit', unfinished);
        try {
          await fn(...args);
        } catch (err) {
          fail(bin, err);
        } finally {
          process.removeListener('beforeExit', unfinished);
        }
      };
    },
    run(argv = process.argv) {
      const rest = argv.slice(2);
      // Checked before any command runs: a mistyped MESH_LOG_FORMAT is said once, not at the first line logged.
      try {
        logFormat();
      } catch (err) {
        fail(bin, err);
        return;
      }
      if (rest.length === 0 || (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h'))) {
        process.stdout.write(help(bin, describe, commands(), nounOf));
        return;
      }
      // The command's name, as sade finds it: the longest run of leading words that names one.
      const words = rest.filter((w) => !w.startsWith('-'));
      for (let n = Math.min(words.length, 3); n > 0 && !running; n--) {
        const name = words.slice(0, n).join(' ');
        if (typeof tree()[name] === 'object' && !name.startsWith('__')) running = `${bin} ${name}`;
      }
      try {
        prog.parse(argv, {
          unknown: (flag: string) => {
            throw new UnknownOption(flag);
          },
        });
      } catch (err) {
        if (!(err instanceof UnknownOption)) throw err;
        // Which command it was for: the same line, parsed without running anything.
        const { name } = prog.parse(argv, { lazy: true });
        fail(bin, refusal(bin, name, err.message, tree()));
      }
    },
  };
  return p;
}

/** A refused command line: its code, and the exit code of a usage error. */
function refusal(bin: string, name: string, flag: string, t: Tree): Error {
  const own = (t[name] as Command | undefined)?.options ?? [];
  const all = (t.__all__ as Command | undefined)?.options ?? [];
  const valid = [...own, ...all].map((o) => o[0].split(', ').at(-1)!).concat('--help');
  return Object.assign(
    refuse(
      'MSHJ6',
      `${bin} ${name} has no option ${flag}`,
      `its options are ${valid.join(', ')} (see ${bin} ${name} --help)`,
    ),
    { exitCode: 2 },
  );
}

/** The first sentence of a command's description, cut to fit one line of the listing. */
function summary(c: Command): string {
  const text = (c.describe ?? []).join(' ');
  // A sentence ends before a capital, not at "e.g. to".
  const first = /^.*?[.!?](?=\s+[A-Z(`]|$)/.exec(text)?.[0] ?? text;
  return first.length <= 100 ? first : first.slice(0, first.lastIndexOf(' ', 99)) + ' …';
}

function help(bin: string, describe: string, commands: [string, Command][], nounOf: Map<string, string>): string {
  const groups = new Map<string, [string, Command][]>();
  for (const c of commands) {
    const noun = nounOf.get(c[0]) ?? c[0].split(' ')[0]!;
    groups.set(noun, [...(groups.get(noun) ?? []), c]);
  }
  const width = Math.max(...commands.map(([, c]) => c.usage.length)) + bin.length + 3;
  const lines = [
    '',
    '  Description',
    `    ${describe}`,
    '',
    '  Usage',
    `    $ ${bin} <command> [options]`,
    '',
    '  Commands',
  ];
  for (const noun of [...groups.keys()].sort()) {
    lines.push(`    ${noun}`);
    for (const [, c] of groups.get(noun)!.sort((a, b) => a[0].localeCompare(b[0]))) {
      lines.push(`      ${`${bin} ${c.usage}`.padEnd(width)}${summary(c)}`);
    }
  }
  lines.push(
    '',
    `  Every command has --help (e.g. ${bin} ${commands[0]?.[0] ?? ''} --help).`,
    '',
    '  Options',
    '    -v, --version    Displays current version',
    '    -h, --help       Displays this message',
    '',
  );
  return lines.join('\n');
}
