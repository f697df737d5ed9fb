// Ansible as an operator runs it, from Debian 12's packages: a controller in a
// network namespace of its own, and N targets, each a throwaway `sshd -D -f
// CONFIG` in its own network namespace (one veth each to the controller's),
// with a host key and an authorized key made for the run. Every file of it is
// under DIR: the machine's /etc/ssh, ~/.ssh and ~/.ansible are never read or
// written. The targets share this machine's filesystem, so each one's file is
// at TARGETS/NAME + PATH. Each target's sessions get a home of their own under
// DIR: bash, started by sshd for every command Ansible sends, reads ~/.bashrc,
// and this machine's root account runs its own tools there (a pyenv rehash,
// about 0.4 s a command here), a cost of this account, not of Ansible.
import {
  mkdirSync,
  mkdtempSync,
  writeFileSync,
  readFileSync,
  existsSync,
  rmdirSync,
  rmSync,
  readdirSync,
} from 'node:fs';
import { join } from 'node:path';
import { cpus } from 'node:os';
import { randomBytes } from 'node:crypto';
import { run, tail } from './proc.js';

export interface Targets {
  names: string[];
  ctl: string;
  cfg: string;
  env: NodeJS.ProcessEnv;
  dir: string;
  stop(): Promise<void>;
}

async function ip(args: string[], log: string): Promise<void> {
  const r = await run('/usr/sbin/ip', args, log).done;
  if (r.code !== 0) throw new Error(`ip ${args.join(' ')} failed: ${tail(log, 3)}`);
}

async function keygen(file: string, log: string): Promise<string> {
  const r = await run(
    '/usr/bin/ssh-keygen',
    ['-q', '-t', 'ed25519', '-N', '', '-C', 'mesh-bench-peers', '-f', file],
    log,
  ).done;
  if (r.code !== 0) throw new Error(`ssh-keygen failed: ${tail(log)}`);
  return readFileSync(`${file}.pub`, 'utf8').trim();
}

/**
 * N sshd targets t001.. and the controller namespace, with ansible.cfg and an
 * inventory (each host's bench_dest = TARGETS/NAME + PATH). stop() ends every
 * sshd by its pid and deletes every namespace, also after a partial start.
 */
export async function startTargets(dir: string, n: number, targets: string, path: string): Promise<Targets> {
  if (n > 16_000) throw new Error('at most 16,000 sshd targets (a /30 each in 10.78.0.0/16)');
  const tag = randomBytes(3).toString('hex');
  const ctl = `mpc-${tag}`;
  const log = join(dir, 'logs', 'netns.log');
  const ssh = join(dir, 'ssh');
  mkdirSync(ssh, { recursive: true, mode: 0o700 });
  const home = join(dir, 'target-home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  const namespaces: string[] = [];
  const sshds: { kill(): void; done: Promise<unknown> }[] = [];
  // sshd refuses to start without its privilege separation directory; made only if missing, removed again by stop().
  const madePrivsep = !existsSync('/run/sshd');
  if (madePrivsep) mkdirSync('/run/sshd', { mode: 0o755 });
  const stop = async () => {
    for (const s of sshds) s.kill();
    await Promise.allSettled(sshds.map((s) => s.done));
    for (const ns of namespaces.reverse()) await run('/usr/sbin/ip', ['netns', 'delete', ns], log).done.catch(() => {});
    if (madePrivsep)
      try {
        rmdirSync('/run/sshd');
      } catch {
        /* someone else's sshd put something there */
      }
  };
  try {
    const hostPub = await keygen(join(ssh, 'host_ed25519'), log);
    const clientPub = await keygen(join(ssh, 'id_ed25519'), log);
    writeFileSync(join(ssh, 'authorized_keys'), clientPub + '\n', { mode: 0o600 });
    const cfg = join(ssh, 'sshd_config');
    writeFileSync(
      cfg,
      [
        'Port 22',
        'ListenAddress 0.0.0.0',
        `HostKey ${join(ssh, 'host_ed25519')}`,
        'PidFile none',
        `AuthorizedKeysFile ${join(ssh, 'authorized_keys')}`,
        'PermitRootLogin prohibit-password',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'StrictModes no',
        'MaxStartups 200',
        'MaxSessions 100',
        'Subsystem sftp /usr/lib/openssh/sftp-server',
        `SetEnv HOME="${home}"`,
        'LogLevel INFO',
        '',
      ].join('\n'),
    );
    await ip(['netns', 'add', ctl], log);
    namespaces.push(ctl);
    await ip(['-n', ctl, 'link', 'set', 'lo', 'up'], log);
    const names = Array.from({ length: n }, (_, i) => `t${String(i + 1).padStart(3, '0')}`);
    const known: string[] = [];
    const inventory: string[] = ['[targets]'];
    for (const [i, name] of names.entries()) {
      const ns = `mpt-${tag}-${name}`;
      // A /30 a target: .1 the controller's end, .2 the target's.
      const base = (i + 1) * 4;
      const at = (k: number) => `10.78.${base >> 8}.${(base & 255) + k}`;
      await ip(['netns', 'add', ns], log);
      namespaces.push(ns);
      await ip(['link', 'add', `c${name}`, 'netns', ctl, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns], log);
      await ip(['-n', ctl, 'addr', 'add', `${at(1)}/30`, 'dev', `c${name}`], log);
      await ip(['-n', ctl, 'link', 'set', `c${name}`, 'up'], log);
      await ip(['-n', ns, 'addr', 'add', `${at(2)}/30`, 'dev', 'eth0'], log);
      await ip(['-n', ns, 'link', 'set', 'eth0', 'up'], log);
      await ip(['-n', ns, 'link', 'set', 'lo', 'up'], log);
      const sshdLog = join(dir, 'logs', `sshd-${name}.log`);
      const { child, done } = run(
        '/usr/sbin/ip',
        ['netns', 'exec', ns, '/usr/sbin/sshd', '-D', '-f', cfg, '-E', sshdLog],
        join(dir, 'logs', `sshd-${name}.out`),
      );
      sshds.push({ kill: () => child.kill('SIGTERM'), done });
      known.push(`${at(2)} ${hostPub.split(' ').slice(0, 2).join(' ')}`);
      mkdirSync(join(targets, name, path, '..'), { recursive: true });
      inventory.push(`${name} ansible_host=${at(2)} bench_dest=${join(targets, name)}${path}`);
    }
    writeFileSync(join(ssh, 'known_hosts'), known.join('\n') + '\n');
    writeFileSync(join(dir, 'hosts'), inventory.join('\n') + '\n');
    const a = (s: string) => join(dir, s);
    for (const d of ['tmp', 'remote-tmp', 'home']) mkdirSync(a(d), { recursive: true, mode: 0o700 });
    const ansibleCfg = a('ansible.cfg');
    writeFileSync(
      ansibleCfg,
      [
        '[defaults]',
        `inventory = ${a('hosts')}`,
        `forks = ${cpus().length}`,
        'host_key_checking = True',
        'remote_user = root',
        `private_key_file = ${join(ssh, 'id_ed25519')}`,
        'interpreter_python = /usr/bin/python3',
        `local_tmp = ${a('tmp')}`,
        `remote_tmp = ${a('remote-tmp')}`,
        `home = ${a('home')}`,
        `log_path = ${a('logs/ansible.log')}`,
        'nocows = True',
        '[ssh_connection]',
        `ssh_args = -F /dev/null -o ControlMaster=auto -o ControlPersist=60s -o UserKnownHostsFile=${join(ssh, 'known_hosts')} -o StrictHostKeyChecking=yes -o IdentitiesOnly=yes`,
        '',
      ].join('\n'),
    );
    // Every sshd says it listens before anything is measured.
    const end = Date.now() + 60_000;
    for (const name of names) {
      const f = join(dir, 'logs', `sshd-${name}.log`);
      while (!(existsSync(f) && /Server listening on 0\.0\.0\.0 port 22/.test(readFileSync(f, 'utf8')))) {
        if (Date.now() > end) throw new Error(`sshd for ${name} did not listen within 60 s: ${tail(f)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const env = {
      ...process.env,
      ANSIBLE_CONFIG: ansibleCfg,
      ANSIBLE_HOME: a('home'),
      ANSIBLE_FORCE_COLOR: '0',
      ANSIBLE_NOCOLOR: '1',
    };
    return { names, ctl, cfg: ansibleCfg, env, dir, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** An ad-hoc command on the controller (in its namespace), with a fresh ssh control path: every run connects anew. */
export function adhoc(t: Targets, pattern: string, args: string[], log: string, timed = false) {
  // A unix socket's path must fit in 108 bytes: the run's temp dir is too deep, so the control sockets get a short dir of their own, removed after.
  const cp = mkdtempSync('/tmp/mpcp-');
  const env = { ...t.env, ANSIBLE_SSH_CONTROL_PATH_DIR: cp };
  const cmd = ['netns', 'exec', t.ctl, ...(timed ? ['/usr/bin/time', '-v'] : []), '/usr/bin/ansible', pattern, ...args];
  const r = run('/usr/sbin/ip', cmd, log, { env });
  // ControlPersist masters outlive the run by 60 s: ended now, so the next run connects anew and nothing is left.
  const done = r.done.then(async (x) => {
    for (const sock of readdirSync(cp))
      await run(
        '/usr/bin/ssh',
        ['-F', '/dev/null', '-o', `ControlPath=${join(cp, sock)}`, '-O', 'exit', 'master'],
        `${log}.masters`,
      ).done;
    rmSync(cp, { recursive: true, force: true });
    return x;
  });
  return { child: r.child, done };
}

/** `ansible-playbook -c local` of PLAYBOOK on this machine, its config under DIR. */
export function playbookLocal(dir: string, playbook: string, log: string) {
  for (const d of ['tmp', 'home']) mkdirSync(join(dir, d), { recursive: true, mode: 0o700 });
  const cfg = join(dir, 'ansible.cfg');
  writeFileSync(
    cfg,
    [
      '[defaults]',
      `local_tmp = ${join(dir, 'tmp')}`,
      `remote_tmp = ${join(dir, 'tmp')}`,
      `home = ${join(dir, 'home')}`,
      'interpreter_python = /usr/bin/python3',
      'nocows = True',
      `log_path = ${join(dir, 'ansible.log')}`,
      '',
    ].join('\n'),
  );
  const env = { ...process.env, ANSIBLE_CONFIG: cfg, ANSIBLE_HOME: join(dir, 'home'), ANSIBLE_NOCOLOR: '1' };
  return run('/usr/bin/ansible-playbook', ['-c', 'local', '-i', 'localhost,', playbook], log, { env });
}

/** The recap of a run's log: ok, changed, failed, unreachable summed over hosts. */
export function recap(log: string): {
  ok: number;
  changed: number;
  failed: number;
  unreachable: number;
  hosts: number;
} {
  const text = readFileSync(log, 'utf8');
  const lines = [...text.matchAll(/^\S+\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/gm)];
  return lines.reduce(
    (a, m) => ({
      ok: a.ok + +m[1]!,
      changed: a.changed + +m[2]!,
      unreachable: a.unreachable + +m[3]!,
      failed: a.failed + +m[4]!,
      hosts: a.hosts + 1,
    }),
    { ok: 0, changed: 0, failed: 0, unreachable: 0, hosts: 0 },
  );
}

/** Per host of an ad-hoc run: CHANGED / SUCCESS / FAILED / UNREACHABLE, from its one-line output. */
export function adhocResults(log: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of readFileSync(log, 'utf8').matchAll(/^(\S+) \| (CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?)/gm))
    out.set(m[1]!, m[2]!.replace('!', ''));
  return out;
}

/** Peak resident MB of the controller from `/usr/bin/time -v`: the largest single process, not a sum over its forks. */
export function peakFromTime(log: string): number {
  const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(readFileSync(log, 'utf8'))?.[1];
  if (!kb) throw new Error(`no "Maximum resident set size" in ${log}: is GNU time (package time) installed?`);
  return +(Number(kb) / 1024).toFixed(1);
}
