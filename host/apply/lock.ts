// One apply at a time on a host's state, across processes: the running host
// and a bundle re-run (bundle/carried.ts) both read, act on and rewrite
// applied.json, and each would write back its own view and lose the other's
// record. The in-process queue in engine.ts cannot see another process.
//
// flock(2) on <stateDir>/applied.lock. Node has no flock, so one small perl
// process a host process (perl-base is essential on Debian) opens the lock
// files and takes and drops the locks, asked over its stdin. The kernel
// releases a lock when its file closes: when the helper dies, or when this
// process dies (the helper reads the end of its stdin and exits), so there is
// no stale lock to detect, as a pid file made with O_EXCL would need. Why not
// util-linux's `flock` per apply: each is a fork of this whole process, which
// costs more CPU than everything else a host does to take a declaration that
// changes two files (docs/benchmarks.md, bench 4's host cost).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { Socket } from 'node:net';

export const lockPath = (stateDir: string) => join(stateDir, 'applied.lock');

// "L ID PATH": open PATH (created 0600) and lock it; "ok ID" once held (a
// lock another process holds is waited for in a fork sharing the open file,
// so the helper keeps answering for other paths, and the lock the fork takes
// is the helper's). "U ID": close it, which drops the lock. "err ID WHY".
const HELPER = String.raw`
use strict; use warnings; use Fcntl qw(:flock O_WRONLY O_APPEND O_CREAT); use POSIX ();
$SIG{CHLD} = 'IGNORE';
my %held;
sub answer { syswrite(STDOUT, "$_[0]\n") }
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, $id, $path) = split / /, $line, 3;
  if ($op eq 'U') { close(delete $held{$id}) if $held{$id}; next }
  my $f;
  unless (sysopen($f, $path, O_WRONLY | O_APPEND | O_CREAT, 0600)) { answer("err $id $!"); next }
  if (flock($f, LOCK_EX | LOCK_NB)) { $held{$id} = $f; answer("ok $id"); next }
  unless ($!{EWOULDBLOCK}) { answer("err $id $!"); next }
  $held{$id} = $f;
  my $pid = fork();
  unless (defined $pid) { answer("err $id $!"); close(delete $held{$id}); next }
  next if $pid;
  # The waiter holds no other lock's file open: one closed by the helper is released at once.
  close($held{$_}) for grep { $_ ne $id } keys %held;
  answer(flock($f, LOCK_EX) ? "ok $id" : "err $id $!");
  POSIX::_exit(0);
}`;

interface Helper {
  child: ChildProcessWithoutNullStreams;
  waiting: Map<number, { resolve(): void; reject(e: Error): void; path: string }>;
  held: Set<number>;
  lost: Set<number>;
}

let helper: Helper | undefined;
let nextId = 1;

// The helper keeps this process alive only while a lock is asked for or held:
// a CLI that applied once still exits, and one waiting on another's lock does not.
function refWhileBusy(h: Helper): void {
  const out = h.child.stdout as unknown as Socket; // a pipe: a net.Socket
  if (h.waiting.size || h.held.size) out.ref();
  else out.unref();
}

function start(): Helper {
  const child = spawn('perl', ['-e', HELPER], { stdio: ['pipe', 'pipe', 'pipe'] });
  const h: Helper = { child, waiting: new Map(), held: new Set(), lost: new Set() };
  let said = '';
  let buf = '';
  child.stderr.on('data', (d) => {
    said += d;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const [word, id, ...why] = buf.slice(0, i).split(' ');
      buf = buf.slice(i + 1);
      const w = h.waiting.get(Number(id));
      if (!w) continue;
      h.waiting.delete(Number(id));
      if (word === 'ok') {
        h.held.add(Number(id));
        w.resolve();
      } else
        w.reject(
          new Error(`Could not lock ${w.path}: ${why.join(' ')}. Check that it is on a local filesystem and writable.`),
        );
    }
    refWhileBusy(h);
  });
  const gone = (why: string) => {
    if (helper === h) helper = undefined;
    for (const w of h.waiting.values())
      w.reject(new Error(`Could not lock ${w.path} (${why}). Install perl (perl-base), which takes the lock.`));
    h.waiting.clear();
    for (const id of h.held) h.lost.add(id);
    h.held.clear();
    refWhileBusy(h);
  };
  child.on('error', (e) => gone(e.message));
  child.on('exit', (code, signal) => gone(said.trim() || `the lock helper exited ${signal ?? code}`));
  child.stdin.on('error', () => {});
  child.unref();
  for (const pipe of [child.stdin, child.stderr]) (pipe as unknown as Socket).unref();
  refWhileBusy(h);
  return h;
}

export async function withStateLock<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const path = lockPath(stateDir);
  if (path.includes('\n'))
    throw new Error(
      `Could not lock ${JSON.stringify(path)}: a state directory's path has no newline. Move the state directory.`,
    );
  const h = (helper ??= start());
  const id = nextId++;
  await new Promise<void>((resolve, reject) => {
    h.waiting.set(id, { resolve, reject, path });
    refWhileBusy(h);
    h.child.stdin.write(`L ${id} ${path}\n`);
  });
  let out: T;
  try {
    out = await fn();
  } finally {
    if (h.held.delete(id)) h.child.stdin.write(`U ${id}\n`);
    refWhileBusy(h);
  }
  // Held by the helper's open file: had it died meanwhile, another process may have applied beside this one.
  if (h.lost.delete(id))
    throw new Error(
      `The lock on ${path} was lost while applying (its helper process died), so another apply may have run beside this one. Apply again.`,
    );
  return out;
}
