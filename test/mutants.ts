// `npm run mutants [-- ID...]`: every row of test/mutations.tsv removes one
// rule from a copy of the tree; the row's tests must then fail. A mutant the
// tests survive is a rule nothing defends (a defect), and one that does not
// build, or whose find string is not unique, is an error: never counted as a
// kill. Each mutant runs in its own temporary copy with its own servers on
// free ports, removed afterwards; `--jobs N` runs N at once. See TESTING.md.
import {
  mkdtempSync,
  readFileSync,
  writeFileSync,
  existsSync,
  mkdirSync,
  copyFileSync,
  symlinkSync,
  rmSync,
  statSync,
  chmodSync,
} from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { readRows, rowProblem, type Row } from './mutation_rows.js';
import { generate, type Generated } from './mutants_generated.js';
import { treeDigest, readJournal, appendJournal, rowKey, type JournalLine, type Verdict } from './mutants_journal.js';
import { verdictOf } from './mutant_verdict.js';
import { REGISTER } from '../src/sys/errors.js';
import { CONTEXTS } from '../src/store/contexts.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TABLE = join(ROOT, 'test', 'mutations.tsv');

interface Result {
  row: Row;
  verdict: Verdict;
  why: string;
  seconds: number;
}

/** Git-tracked files and untracked ones git does not ignore: the tree a clean clone would hold, plus work in progress. */
function treeFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    maxBuffer: 64 << 20,
  });
  return [...new Set(out.toString().split('\0').filter(Boolean))].filter(
    (f) => f !== 'node_modules' && !f.startsWith('node_modules/') && existsSync(join(ROOT, f)),
  );
}

function copyTree(from: string, to: string, files: string[]): void {
  for (const f of files) {
    const dst = join(to, f);
    mkdirSync(dirname(dst), { recursive: true });
    copyFileSync(join(from, f), dst);
    chmodSync(dst, statSync(join(from, f)).mode & 0o7777);
  }
  symlinkSync(join(ROOT, 'node_modules'), join(to, 'node_modules'));
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const pid = child.pid;
    if (pid) running.add(pid);
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => {
      if (pid) running.delete(pid);
      resolve({ code, out });
    });
  });
}

const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const tsc = (dir: string) => run(process.execPath, [TSC, '-p', '.'], dir);

/**
 * The base copy is built whole with tsc; a mutant changes one file, so only
 * that file is compiled again, over the built copy (seconds, not a whole
 * build). Syntax errors make the mutant an error; it is not type-checked.
 * The package is ESM: transpileModule cannot see that, so it is told.
 */
function transpile(dir: string, file: string): { js?: string; errors?: string } {
  const cfg = ts.getParsedCommandLineOfConfigFile(
    join(dir, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (!cfg) return { errors: 'tsconfig.json cannot be read' };
  const options = { ...cfg.options, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler };
  const out = ts.transpileModule(readFileSync(join(dir, file), 'utf8'), {
    compilerOptions: options,
    fileName: join(dir, file),
    reportDiagnostics: true,
  });
  const errors = (out.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
  if (errors.length)
    return { errors: errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')).join('\n') };
  return { js: out.outputText };
}
const builtOf = (dir: string, file: string) => join(dir, 'dist', file.replace(/\.ts$/, '.js'));

/** Files whose one-file compile gives tsc's bytes for the unmutated text; others are built with tsc whole. */
const oneFileOk = new Set<string>();
function checkOneFile(base: string, files: string[]): void {
  for (const f of new Set(files)) {
    if (!f.endsWith('.ts') || !existsSync(join(base, f)) || !existsSync(builtOf(base, f))) continue;
    const { js } = transpile(base, f);
    if (js !== undefined && js === readFileSync(builtOf(base, f), 'utf8')) oneFileOk.add(f);
  }
}

async function build(dir: string, file: string): Promise<string | undefined> {
  if (!file.endsWith('.ts')) return undefined; // SQL and the rest are read as they are
  if (!oneFileOk.has(file)) {
    const b = await tsc(dir);
    return b.code === 0 ? undefined : tail(b.out);
  }
  const { js, errors } = transpile(dir, file);
  if (errors) return errors;
  writeFileSync(builtOf(dir, file), js!);
  return undefined;
}

function report(r: Result): Result {
  const { row } = r;
  console.log(
    `${r.verdict.padEnd(8)} ${row.id.padEnd(6)} ${row.file}: ${row.note} (${r.seconds.toFixed(0)}s)${r.verdict === 'killed' ? ` [${r.why}]` : ''}`,
  );
  if (r.verdict !== 'killed')
    console.log(
      r.why
        .split('\n')
        .map((l) => '    ' + l)
        .join('\n'),
    );
  return r;
}

const tail = (s: string, n = 25) =>
  s
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => '    ' + l)
    .join('\n');

async function mutant(base: string, row: Row): Promise<Result> {
  const t0 = Date.now();
  const done = (verdict: Verdict, why: string): Result => ({ row, verdict, why, seconds: (Date.now() - t0) / 1000 });
  const problem = rowProblem(base, row);
  if (problem) return done('error', problem);
  const src = join(base, row.file);
  const text = readFileSync(src, 'utf8');
  const dir = mkdtempSync(join(tmpdir(), `mesh-mutant-${row.id}-`));
  dirs.add(dir);
  try {
    execFileSync('cp', ['-a', `${base}/.`, dir]);
    writeFileSync(
      join(dir, row.file),
      text.replace(row.find, () => row.replace),
    );
    const broken = await build(dir, row.file);
    if (broken) return done('error', `does not build: ${broken}`);
    // A mutant that makes a suite hang is killed by run.js's per-file timeout: a hang is red.
    // A killed mutant's run fails by design: its servers' data is not kept (24 GB of /tmp after one whole run).
    const env = {
      ...process.env,
      MESH_TEST_FILE_TIMEOUT: process.env.MESH_TEST_FILE_TIMEOUT ?? '300',
      MESH_TEST_DISCARD: '1',
      MESH_TEST_BAIL: '1',
    };
    const test = await run(process.execPath, ['dist/test/run.js', ...row.filters], dir, env);
    const plain = test.out.replace(/\x1b\[[0-9;]*m/g, '');
    const v = verdictOf(plain, test.code);
    if (!v) return done('error', `the tests did not run (exit ${test.code}):\n${tail(plain)}`);
    return done(v.verdict, v.verdict === 'survived' ? `${v.why}\n${tail(plain, 12)}` : v.why);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    dirs.delete(dir);
  }
}

const running = new Set<number>();
const dirs = new Set<string>();
function cleanUp(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(sig, () => {
    cleanUp();
    process.exit(130);
  });

const USAGE = `usage: npm run mutants -- [ID|INVARIANT...] [--jobs N] [--check] [--table] [--generated [--list]] [--journal FILE]
  no ID        every row of test/mutations.tsv (hours on 2 cores: see --journal)
  ID           a row (D2.1) or every row of an invariant (D2)
  --generated  the generated mutants instead of the table's (test/mutants_generated.ts): every refusal
               code's raise sites made unreachable, every guard of the functions that spend, mark, take,
               settle, halt or release dropped or turned to its neighbour; ID is then a mutant
               (raise:MSH04.1, guard:inventory.spend_token.2) or its code or function (MSH04)
  --list       with --generated: print the generated mutants and the codes no test names, run nothing
  --jobs N     N mutants at once, each in its own copy with its own servers
  --check      only whether each row applies (its file, a unique find string, SQL not redefined later); no build
  --table      after the run, the results also as a markdown table (invariant, mutant, result)
  --journal F  append each verdict to F as it is reached, and take from F the verdicts already reached
               on this very tree (every file's bytes) for this very row: a run stopped part-way goes on
               where it stopped; a changed tree or row runs again`;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  // An option mistyped must not start a run of every row (an hour of both cores).
  const unknown = args.filter(
    (a) => a.startsWith('-') && !['--table', '--check', '--jobs', '--generated', '--list', '--journal'].includes(a),
  );
  if (unknown.length) {
    console.error(`unknown option ${unknown.join(' ')}.\n${USAGE}`);
    return 2;
  }
  const table = args.includes('--table');
  const check = args.includes('--check');
  const j = args.indexOf('--jobs');
  const jobs = j < 0 ? 1 : Number(args[j + 1]);
  if (!Number.isInteger(jobs) || jobs < 1) {
    console.error('--jobs takes a whole number of mutants to run at once, 1 or more: --jobs 2.');
    return 2;
  }
  const jn = args.indexOf('--journal');
  const journal = jn < 0 ? undefined : args[jn + 1];
  if (jn >= 0 && (!journal || journal.startsWith('-'))) {
    console.error('--journal takes the file to keep verdicts in: --journal /root/mutants.journal.');
    return 2;
  }
  const only = args.filter((a, i) => !a.startsWith('--') && !(j >= 0 && i === j + 1) && !(jn >= 0 && i === jn + 1));
  const generated = args.includes('--generated');
  if (args.includes('--list') && !generated) {
    console.error(`--list lists the generated mutants: give --generated with it.\n${USAGE}`);
    return 2;
  }
  const gen = generated ? generate(ROOT, { codes: REGISTER.map((c) => c.code), contexts: CONTEXTS }) : undefined;
  const all: Row[] = gen ? gen.rows : readRows(readFileSync(TABLE, 'utf8'));
  // In the order asked for: the rows most in doubt can go first.
  const rows = only.length
    ? [...new Set(only.flatMap((o) => all.filter((r) => r.invariant === o || r.id === o)))]
    : all;
  if (gen && args.includes('--list')) {
    for (const r of rows as Generated[]) console.log(`${r.id}\t${r.note}\n    tests: ${r.filters.join(' ')}`);
    console.log(
      `\n${rows.length} generated mutants (${rows.filter((r) => (r as Generated).kind === 'refusal').length} raise sites, ${rows.filter((r) => (r as Generated).kind === 'guard').length} guards)`,
    );
    if (gen.untested.length)
      console.log(`codes and functions no runnable test names (not run): ${gen.untested.join('; ')}`);
    if (gen.unraised.length) console.log(`codes with no raise site the generator reads: ${gen.unraised.join(' ')}`);
    if (gen.skipped.length) console.log(`raise sites not generated:\n  ${gen.skipped.join('\n  ')}`);
    return 0;
  }
  if (rows.length === 0) {
    console.error(
      gen
        ? `no generated mutant matches ${only.join(' ')}: see npm run mutants -- --generated --list.`
        : `no row of ${TABLE} matches ${only.join(' ')}: name an invariant (D2) or a row (D2.1).`,
    );
    return 2;
  }
  if (check) {
    // Only what can be told without building: the file is there, the find string occurs once, the SQL it edits still runs.
    let bad = 0;
    for (const r of rows) {
      const problem = rowProblem(ROOT, r);
      if (problem) {
        bad++;
        console.log(`error    ${r.id.padEnd(6)} ${problem}`);
      }
    }
    console.log(`${rows.length - bad} of ${rows.length} rows apply`);
    return bad ? 1 : 0;
  }

  // One built copy of the tree; every mutant starts from a copy of it and compiles only the file its edit changed.
  const t0 = Date.now();
  const base = mkdtempSync(join(tmpdir(), 'mesh-mutants-base-'));
  dirs.add(base);
  try {
    const files = treeFiles();
    const tree = treeDigest(ROOT, files);
    const journalled = journal ? readJournal(journal, tree) : new Map<string, JournalLine>();
    copyTree(ROOT, base, files);
    const build = await tsc(base);
    if (build.code !== 0) {
      console.error(`the unmutated tree does not build; fix that first:\n${tail(build.out)}`);
      return 2;
    }
    checkOneFile(
      base,
      rows.map((r) => r.file),
    );
    const whole = [...new Set(rows.map((r) => r.file))].filter((f) => f.endsWith('.ts') && !oneFileOk.has(f));
    console.log(
      `[mutants] ${rows.length} of ${all.length} rows, base copy built in ${((Date.now() - t0) / 1000).toFixed(0)}s${whole.length ? `; built whole with tsc for ${whole.join(', ')}` : ''}`,
    );

    // Results are kept in the table's order whatever order the mutants finish in.
    const results: Result[] = new Array(rows.length);
    let fromJournal = 0;
    rows.forEach((r, i) => {
      const j = journalled.get(rowKey(r));
      if (!j) return;
      fromJournal++;
      results[i] = report({ row: r, verdict: j.verdict, why: `${j.why} (journal)`, seconds: j.seconds });
    });
    if (journal)
      console.log(`[mutants] ${fromJournal} verdicts taken from ${journal} (same tree ${tree.slice(0, 12)})`);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < rows.length; i = next++) {
        if (results[i]) continue;
        const r = (results[i] = report(await mutant(base, rows[i])));
        if (journal) appendJournal(journal, tree, r.row, r);
      }
    };
    await Promise.all(Array.from({ length: Math.min(jobs, rows.length) }, worker));

    const killed = results.filter((r) => r.verdict === 'killed').length;
    const survivors = results.filter((r) => r.verdict === 'survived');
    const errors = results.filter((r) => r.verdict === 'error');
    console.log(
      `\nkilled ${killed} of ${results.length} (${((100 * killed) / results.length).toFixed(0)}%) in ${((Date.now() - t0) / 1000).toFixed(0)}s` +
        (journal ? `, ${fromJournal} of them from the journal; tree ${tree.slice(0, 12)}` : ''),
    );
    if (survivors.length) console.log(`survived: ${survivors.map((r) => `${r.row.id} (${r.row.note})`).join('; ')}`);
    if (gen) {
      // By code or function: which rules no test noticed, and the codes nothing could.
      const by = new Map<string, string[]>();
      for (const r of survivors) by.set(r.row.invariant, [...(by.get(r.row.invariant) ?? []), r.row.id]);
      for (const [subject, ids] of by) console.log(`  survivors of ${subject}: ${ids.join(' ')}`);
      if (gen.untested.length) console.log(`no runnable test names (not run): ${gen.untested.join('; ')}`);
    }
    if (errors.length) console.log(`errors: ${errors.map((r) => `${r.row.id} (line ${r.row.line})`).join('; ')}`);
    if (table) {
      console.log('\n| invariant | mutant | result |\n|---|---|---|');
      for (const r of results)
        console.log(`| ${r.row.id} | ${r.row.file}: ${r.row.note.replace(/\|/g, '\\|')} | ${r.verdict} |`);
    }
    return survivors.length || errors.length ? 1 : 0;
  } finally {
    rmSync(base, { recursive: true, force: true });
    dirs.delete(base);
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    cleanUp();
    process.exit(2);
  },
);
