// 6. Side by side with what operators install instead: the same three jobs
// through mesh, Puppet and Ansible (Debian 12's packages, installed when
// missing), in the same run, each figure beside mesh's as a ratio.
//   1. one changed file to N machines, until each has applied it and said so;
//   2. 200 files on one machine from nothing, then again with nothing to change;
//   3. an idle agent's memory (Ansible has none: its controller's peak per run).
// Every peer's files live under the run's temp dir; their logs are kept in
// bench-peers-logs/ (private keys left out). A tool that says it succeeded
// without the file in place is an error, not a figure.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, cpSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { cpus, totalmem } from 'node:os';
import { freshMesh, type Proc } from '../harness/mesh.js';
import {
  bench,
  figure,
  now,
  sleep,
  envInt,
  tempDir,
  removeDir,
  REPO,
  serverPids,
  cpuMeter,
  describeCpu,
} from './lib.js';
import { meshFleet } from './peers/mesh_side.js';
import * as pp from './peers/puppet.js';
import * as an from './peers/ansible.js';
import { run, tail, rss, endStarted } from './peers/proc.js';
import { footprint, changes } from './peers/footprint.js';

const sizes = (name: string, dflt: string) => (process.env[name] ?? dflt).split(',').filter(Boolean).map(Number);
// Puppet's agents all run at once on this one machine, each a Ruby process (job 3 measures one): sizes past
// what the machine's memory holds are said, not run. Ansible's targets are sshd processes, light enough for 1,000.
const SIZES = sizes('MESH_BENCH_PEERS_N', '20,100');
const ANSIBLE_SIZES = sizes('MESH_BENCH_PEERS_ANSIBLE_N', '20,100,1000');
const MESH_ALSO = envInt('MESH_BENCH_PEERS_MESH_N', 1000); // mesh alone at this size
const FILES = envInt('MESH_BENCH_PEERS_FILES', 200);
const PROCS = envInt('MESH_BENCH_PROCS', 4);
const SETTLE = envInt('MESH_BENCH_IDLE_SECONDS', 8);
const PATH = '/srv/peers/bench.conf';
const APPLY_ONCE = new URL('./peers/apply-once.js', import.meta.url).pathname;

// The same bytes for every tool: the changed file of job 1 (by generation), and job 2's files.
const body = (head: string) => `# mesh bench peers: ${head}\n${'listen 10.0.0.1:443\n'.repeat(12)}`;
const content = (gen: number) => body(`generation ${gen}`);
const fileOf = (root: string, i: number) => ({
  path: join(root, `f${String(i).padStart(3, '0')}.conf`),
  content: body(`file ${i}`),
});

interface Row {
  job: string;
  n: string;
  mesh?: number;
  puppet?: number;
  ansible?: number;
  unit: string;
  notes: string[];
}

function checkFiles(tool: string, files: { path: string; content: string }[]): void {
  for (const f of files) {
    let got: string | undefined;
    try {
      got = readFileSync(f.path, 'utf8');
    } catch {
      /* missing */
    }
    if (got !== f.content)
      throw new Error(
        `${tool} reported success but ${f.path} ${got === undefined ? 'is missing' : 'does not hold the content'}`,
      );
  }
}

function versions(logs: string): Record<string, string> {
  // Even `ansible --version` makes ~/.ansible/tmp unless told otherwise.
  const env = {
    ...process.env,
    ANSIBLE_HOME: join(logs, 'ansible-home'),
    ANSIBLE_LOCAL_TEMP: join(logs, 'ansible-home', 'tmp'),
  };
  const out = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout.trim();
  };
  const pkg = (p: string) => out('dpkg-query', ['-W', '-f', '${Version}', p]);
  const git = spawnSync('git', ['-C', REPO, 'describe', '--always', '--dirty', '--abbrev=12'], { encoding: 'utf8' });
  const v = {
    mesh: git.status === 0 ? git.stdout.trim() : 'unknown (no git)',
    puppet: `puppet ${out('/usr/bin/puppet', ['--version'])} (puppet-agent ${pkg('puppet-agent')}), puppetserver ${pkg('puppetserver')}, puppetdb ${pkg('puppetdb')} (not run)`,
    ansible: `${out('/usr/bin/ansible', ['--version']).split('\n')[0]} (ansible ${pkg('ansible')}), OpenSSH ${pkg('openssh-server')}`,
    java: spawnSync('/usr/bin/java', ['-version'], { encoding: 'utf8' }).stderr.split('\n')[0]!, // java prints its version on stderr
  };
  writeFileSync(join(logs, 'versions.json'), JSON.stringify(v, null, 2) + '\n');
  return v;
}

const fmt = (v: number | undefined, unit: string) =>
  v === undefined ? 'not run' : `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${unit}`;
const ratio = (v: number | undefined, m: number | undefined) =>
  v === undefined || m === undefined || m <= 0 ? '-' : (v / m).toFixed(1);

function table(rows: Row[]): string {
  const head = ['JOB', 'N', 'MESH', 'PUPPET', 'ANSIBLE', 'PUPPET/MESH', 'ANSIBLE/MESH'];
  const cells = rows.map((r) => [
    r.job,
    r.n,
    fmt(r.mesh, r.unit),
    fmt(r.puppet, r.unit),
    fmt(r.ansible, r.unit),
    ratio(r.puppet, r.mesh),
    ratio(r.ansible, r.mesh),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(w[i]!))
      .join('  ')
      .trimEnd();
  return [line(head), ...cells.map(line)].join('\n');
}

await bench('8 peers', async (figs) => {
  // Installed when missing, as the other benches' servers are (bundle/ensure-packages.sh peers).
  const inst = spawnSync('bash', [join(REPO, 'bundle/ensure-packages.sh'), 'peers'], { stdio: 'inherit' });
  if (inst.status !== 0)
    throw new Error(
      'the peers (Puppet, Ansible, sshd) are not installed: run bash bundle/ensure-packages.sh peers as root.',
    );
  const before = footprint(); // after the install: a package's own files are the package's
  const work = tempDir('peers');
  const logs = join(work, 'logs');
  mkdirSync(logs, { recursive: true });
  const v = versions(logs);
  console.log(`[peers] mesh ${v.mesh}; ${v.puppet}; ${v.ansible}`);
  const rows: Row[] = [];
  let ping: { n: number; peak: number; seconds: number } | undefined;
  const stops: (() => Promise<void>)[] = [];
  let measured = false;
  const t = (label: string, t0: number) => console.log(`[peers] ${label} in ${((now() - t0) / 1000).toFixed(1)}s`);
  try {
    // ---- 1. one changed file to N machines -------------------------------------------------
    const meshSizes = [...new Set([...SIZES, ...ANSIBLE_SIZES, ...(MESH_ALSO ? [MESH_ALSO] : [])])].sort(
      (a, b) => a - b,
    );
    const job1 = new Map<number, Row>();
    for (const n of meshSizes) {
      const t0 = now();
      const f = await meshFleet(join(work, 'mesh', `n${n}`), n, PATH, content, PROCS);
      t(`mesh, ${n} hosts`, t0);
      const row: Row = {
        job: '1 one changed file to N machines, until each has applied it and said so',
        n: String(n),
        mesh: f.seconds,
        unit: 's',
        notes: [
          `mesh N=${n}: ${n} simulated hosts (sim.ts) in ${Math.min(PROCS, n)} node processes, each its own broker account over pinned TLS: verify, keep, apply (under a directory of its own), report; from \`mesh module add\` (which re-declares every node assigned the module) until every host's report is recorded in SQL; ${f.bound}`,
        ],
      };
      job1.set(n, row);
      rows.push(row);
    }

    const t0s = now();
    const server = await pp.startServer(join(work, 'puppet', 'server'));
    stops.push(() => server.stop());
    t(`puppetserver ready on 127.0.0.1:${server.port}`, t0s);
    const agents = join(work, 'puppet', 'agents');
    const ptargets = join(work, 'puppet', 'targets');
    let gen = 1;
    let warm = 0; // agents p001..p{warm} have their certificate and generation gen applied
    const agentName = (i: number) => `p${String(i).padStart(3, '0')}`;
    const runAgents = async (names: string[], expect: number[], label: string) => {
      const ran = await Promise.all(
        names.map(
          (name) => pp.agentRun(join(agents, name, 'conf'), join(agents, name, 'log', `agent-${label}.log`)).done,
        ),
      );
      ran.forEach((r, i) => {
        if (!expect.includes(r.code ?? -1))
          throw new Error(`puppet agent -t on ${names[i]} exited ${r.code} (${label}): ${tail(r.log)}`);
      });
      return ran;
    };
    for (const n of SIZES) {
      const names = Array.from({ length: n }, (_, i) => agentName(i + 1));
      // The new agents: own dirs, a certificate request autosigned by the server, generation `gen` applied.
      const fresh = names.slice(warm);
      for (const name of fresh) {
        pp.agentConf(agents, name, server);
        mkdirSync(dirname(join(ptargets, name) + PATH), { recursive: true });
      }
      if (fresh.length) {
        pp.writeSite(server, ptargets, PATH, content(gen));
        const w0 = now();
        await runAgents(fresh, [0, 2], 'bootstrap');
        t(`${fresh.length} puppet agents got their certificates and generation ${gen}`, w0);
        checkFiles(
          'puppet',
          fresh.map((name) => ({ path: join(ptargets, name) + PATH, content: content(gen) })),
        );
        warm = n;
      }
      gen++;
      pp.writeSite(server, ptargets, PATH, content(gen));
      await sleep(2000);
      const meter = cpuMeter({ puppetserver: () => [server.pid] });
      const r0 = now();
      const ran = await runAgents(names, [2], `gen${gen}`);
      const exited = now();
      const cpu = meter.stop();
      // The end point: N reports of this run in the server's report store, each "changed".
      let last = 0;
      for (const name of names) {
        const reps = pp.reportsSince(server, name, r0 - 1);
        if (reps.length !== 1)
          throw new Error(`puppet: ${name} has ${reps.length} reports stored since the change, not 1`);
        const st = pp.reportStatus(reps[0]!.file);
        if (st !== 'changed') throw new Error(`puppet: ${name}'s report says ${st}, not changed`);
        last = Math.max(last, reps[0]!.mtime);
      }
      checkFiles(
        'puppet',
        names.map((name) => ({ path: join(ptargets, name) + PATH, content: content(gen) })),
      );
      const row = job1.get(n)!;
      row.puppet = (last - r0) / 1000;
      const slowest = Math.max(...ran.map((r) => r.seconds));
      row.notes.push(
        `Puppet N=${n}: ${n} \`puppet agent -t\` started at once (certificates signed and the previous content applied before), against one puppetserver as Debian configures it (-Xmx1g, JRuby instances: cores - 1); last report stored at ${row.puppet.toFixed(1)} s, last agent exited at ${((exited - r0) / 1000).toFixed(1)} s (slowest run ${slowest.toFixed(1)} s); ${describeCpu(cpu)}`,
      );
      t(`puppet, ${n} agents`, r0);
    }
    const serverRss = rss(server.pid);

    for (const n of ANSIBLE_SIZES) {
      const a0 = now();
      const atargets = join(work, 'ansible', `n${n}`, 'targets');
      const tg = await an.startTargets(join(work, 'ansible', `n${n}`), n, atargets, PATH);
      stops.push(() => tg.stop());
      t(`${n} sshd targets in their own network namespaces`, a0);
      const src = join(work, 'ansible', `n${n}`, 'content');
      const copy = async (g: number, label: string) => {
        writeFileSync(src, content(g));
        const log = join(work, 'ansible', `n${n}`, 'logs', `copy-${label}.log`);
        const r = await an.adhoc(tg, 'all', ['-m', 'copy', '-a', `src=${src} dest={{ bench_dest }} mode=0644`], log)
          .done;
        if (r.code !== 0) throw new Error(`ansible all -m copy exited ${r.code} (${label}): ${tail(log)}`);
        const res = an.adhocResults(log);
        const changed = tg.names.filter((h) => res.get(h) === 'CHANGED').length;
        if (changed !== n) throw new Error(`ansible: ${changed} of ${n} hosts CHANGED (${label}): ${tail(log)}`);
        checkFiles(
          'ansible',
          tg.names.map((h) => ({ path: join(atargets, h) + PATH, content: content(g) })),
        );
        return r;
      };
      // The previous generation in place, as Puppet's agents have it before their timed run (written here:
      // copying it with Ansible first would double the job's time at 1,000 targets and measure nothing).
      for (const h of tg.names) writeFileSync(join(atargets, h) + PATH, content(1), { mode: 0o644 });
      await sleep(2000);
      const r = await copy(2, 'gen2');
      job1.get(n)!.ansible = r.seconds;
      job1
        .get(n)!
        .notes.push(
          `Ansible N=${n}: \`ansible all -m copy\`, forks ${cpus().length}, over ssh (fresh connections) to ${n} sshd in their own network namespaces; the end point is the controller returning with every host CHANGED (Ansible keeps no report store)`,
        );
      t(`ansible, ${n} targets`, a0);
      if (n === ANSIBLE_SIZES[0]) {
        const log = join(work, 'ansible', `n${n}`, 'logs', 'ping-timed.log');
        const p = await an.adhoc(tg, 'all', ['-m', 'ping'], log, true).done;
        if (p.code !== 0) throw new Error(`ansible all -m ping exited ${p.code}: ${tail(log)}`);
        const res = an.adhocResults(log);
        if (tg.names.some((h) => res.get(h) !== 'SUCCESS'))
          throw new Error(`ansible all -m ping: not every host answered: ${tail(log)}`);
        ping = { n, peak: an.peakFromTime(log), seconds: p.seconds };
      }
      await tg.stop();
      stops.pop();
    }

    // ---- 2. 200 files on one machine, from nothing and again ---------------------------
    const j2 = join(work, 'apply');
    const files = (tool: string) => Array.from({ length: FILES }, (_, i) => fileOf(join(j2, tool, 'root'), i + 1));
    const first: Row = { job: `2 apply ${FILES} files on one machine, from nothing`, n: '1', unit: 's', notes: [] };
    const again: Row = { job: `2 the same again, nothing to change`, n: '1', unit: 's', notes: [] };
    {
      const mf = files('mesh');
      mkdirSync(join(j2, 'mesh', 'root'), { recursive: true });
      const decl = join(j2, 'mesh', 'declaration.json');
      writeFileSync(
        decl,
        JSON.stringify(
          mf.map((f) => ({
            kind: 'file',
            id: `file:${f.path}`,
            path: f.path,
            mode: '0644',
            content: Buffer.from(f.content).toString('base64'),
          })),
        ),
      );
      const once = async (label: string, expect: number) => {
        const log = join(j2, 'mesh', `apply-${label}.log`);
        const r = await run(
          process.execPath,
          [APPLY_ONCE, decl, join(j2, 'mesh', 'root'), join(j2, 'mesh', 'state')],
          log,
        ).done;
        if (r.code !== 0) throw new Error(`mesh-host's engine failed (${label}): ${tail(log)}`);
        const out = JSON.parse(readFileSync(log, 'utf8').trim().split('\n').at(-1)!) as {
          changed: number;
          applyMs: number;
        };
        if (out.changed !== expect)
          throw new Error(`mesh-host's engine changed ${out.changed} files, not ${expect} (${label})`);
        checkFiles('mesh', mf);
        return { seconds: r.seconds, applyMs: out.applyMs };
      };
      const a = await once('first', FILES);
      const b = await once('again', 0);
      first.mesh = a.seconds;
      again.mesh = b.seconds;
      first.notes.push(
        `mesh: a node process running mesh-host's engine (host/apply) on a declaration of ${FILES} files, parsed by the host's own parser; no broker, no signature check; the engine's own part ${(a.applyMs / 1000).toFixed(2)} s of ${a.seconds.toFixed(2)} s (the rest is node starting and loading)`,
      );
      again.notes.push(`mesh: engine's own part ${(b.applyMs / 1000).toFixed(2)} s of ${b.seconds.toFixed(2)} s`);
    }
    {
      const pf = files('puppet');
      mkdirSync(join(j2, 'puppet', 'root'), { recursive: true });
      const manifest = join(j2, 'puppet', 'files.pp');
      pp.writeManifest(manifest, pf);
      const conf = pp.agentConf(join(j2, 'puppet'), 'apply');
      const once = async (label: string, expect: number) => {
        const log = join(j2, 'puppet', `apply-${label}.log`);
        const r = await pp.apply(conf, manifest, log).done;
        if (r.code !== expect)
          throw new Error(
            `puppet apply exited ${r.code}, not ${expect} (${label}; 2 is changed, 0 nothing to change): ${tail(log)}`,
          );
        checkFiles('puppet', pf);
        return r.seconds;
      };
      first.puppet = await once('first', 2);
      again.puppet = await once('again', 0);
      first.notes.push(
        `Puppet: \`puppet apply --detailed-exitcodes\` of a manifest of the same ${FILES} files (exit 2, changed), then again (exit 0); includes facter and compiling the manifest, as every puppet apply does`,
      );
    }
    {
      const af = files('ansible');
      mkdirSync(join(j2, 'ansible', 'root'), { recursive: true });
      const vars = join(j2, 'ansible', 'files.json');
      writeFileSync(vars, JSON.stringify({ bench_files: af }));
      const book = join(j2, 'ansible', 'files.yml');
      writeFileSync(
        book,
        [
          '- hosts: all',
          `  vars_files: [${JSON.stringify(vars)}]`,
          '  tasks:',
          '    - name: the files',
          '      copy: { content: "{{ item.content }}", dest: "{{ item.path }}", mode: "0644" }',
          '      loop: "{{ bench_files }}"',
          '      loop_control: { label: "{{ item.path }}" }',
          '',
        ].join('\n'),
      );
      const once = async (label: string, expect: number) => {
        const log = join(j2, 'ansible', `playbook-${label}.log`);
        const r = await an.playbookLocal(join(j2, 'ansible'), book, log).done;
        if (r.code !== 0) throw new Error(`ansible-playbook exited ${r.code} (${label}): ${tail(log)}`);
        const rc = an.recap(log);
        if (rc.failed || rc.unreachable || rc.changed !== (expect ? 1 : 0))
          throw new Error(`ansible-playbook recap changed=${rc.changed} failed=${rc.failed} (${label}): ${tail(log)}`);
        const items = [...readFileSync(log, 'utf8').matchAll(/^changed: \[localhost\] => \(item=/gm)].length;
        if (items !== expect) throw new Error(`ansible-playbook changed ${items} items, not ${expect} (${label})`);
        checkFiles('ansible', af);
        return r.seconds;
      };
      first.ansible = await once('first', FILES);
      again.ansible = await once('again', 0);
      first.notes.push(
        `Ansible: \`ansible-playbook -c local\` of one copy task looping over the same ${FILES} files (facts gathered, as a playbook does by default), then again (changed=0)`,
      );
    }
    rows.push(first, again);

    // ---- 3. idle agent memory --------------------------------------------------------
    const mem: Row = {
      job: '3 idle agent RSS (Ansible: controller peak for one `ansible all -m ping`)',
      n: '1',
      unit: 'MB',
      notes: [],
    };
    {
      const root = tempDir('peers-idle-root');
      const mesh = await freshMesh({ hostEnv: { MESH_HOST_ROOTS: root } });
      try {
        const serve: Proc = await mesh.serve();
        const { proc } = await mesh.joined('idle1');
        await sleep(SETTLE * 1000);
        const host = rss(proc.child.pid!);
        mem.mesh = host.rssMB;
        const pids = serverPids();
        const sum = (ps: number[]) =>
          ps.reduce((a, p) => {
            try {
              return a + rss(p).rssMB;
            } catch {
              return a;
            }
          }, 0);
        const serveMB = rss(serve.child.pid!).rssMB;
        mem.notes.push(
          `mesh: a real \`mesh-host run\`, enrolled and connected to the run's broker, after ${SETTLE} s idle (peak ${host.peakMB} MB). Server side, idle: mesh serve ${serveMB} MB, + RabbitMQ ${sum(pids.rabbit).toFixed(0)} MB + PostgreSQL ${sum(pids.pg).toFixed(0)} MB (sums over processes, shared pages counted twice; shared with this run's other meshes) against puppetserver's JVM ${serverRss.rssMB} MB (-Xmx1g, after job 1)`,
        );
      } finally {
        await mesh.stop().catch((e) => console.error(`[peers] cleanup: ${(e as Error).message}`));
        removeDir(root);
      }
    }
    {
      const name = agentName(1);
      const conf = join(agents, name, 'conf');
      const log = join(agents, name, 'log', 'daemon.log');
      const d0 = now();
      const { child, done } = pp.agentDaemon(conf, log);
      let ended = false;
      void done.then(() => {
        ended = true;
      });
      // Idle means after its first run (at start) is reported, then SETTLE seconds.
      for (;;) {
        if (ended) throw new Error(`puppet agent daemon exited: ${tail(log)}`);
        if (pp.reportsSince(server, name, d0).length) break;
        if (now() - d0 > 300_000) throw new Error(`puppet agent daemon sent no report within 300 s: ${tail(log)}`);
        await sleep(500);
      }
      await sleep(SETTLE * 1000);
      const d = rss(child.pid!);
      mem.puppet = d.rssMB;
      mem.notes.push(
        `Puppet: \`puppet agent --no-daemonize\` (runinterval 1h) after its first run was reported, then ${SETTLE} s (peak ${d.peakMB} MB)`,
      );
      child.kill('SIGTERM');
      await done;
    }
    if (ping) {
      mem.ansible = ping.peak;
      mem.notes.push(
        `Ansible: no agent; \`/usr/bin/time -v ansible all -m ping\` to ${ping.n} targets (${ping.seconds.toFixed(1)} s): the largest single process's peak, not a sum over its ${cpus().length} forks`,
      );
    }
    rows.push(mem);
    for (const [n, row] of job1)
      if (row.puppet === undefined && mem.puppet !== undefined)
        row.notes.push(
          `Puppet N=${n}: not run: ${n} agents at once at ${mem.puppet.toFixed(0)} MB each (job 3) would hold ${((n * mem.puppet) / 1024).toFixed(0)} GB, the machine has ${(totalmem() / 2 ** 30).toFixed(0)} GB; each agent runs on its own machine in a fleet`,
        );
    await server.stop();
    stops.splice(0);

    const touched = changes(before, footprint());
    if (touched.length)
      throw new Error(
        `a peer wrote outside the run's temp dir, into the machine's own config: ${touched.slice(0, 10).join('; ')}`,
      );
    measured = true;

    // ---- the table ------------------------------------------------------------------
    const text = [
      `versions: mesh ${v.mesh}; ${v.puppet}; ${v.ansible}`,
      table(rows),
      '',
      'what each figure is, from this run:',
      ...rows.flatMap((r) => r.notes.map((n) => `  ${n}`)),
      "PuppetDB is installed but not run: the end point of Puppet's job 1 is the server's report store (reports = store), which the server writes before answering each agent's report.",
    ].join('\n');
    console.log(`\n${text}\n`);
    writeFileSync(join(logs, 'table.txt'), text + '\n');
    for (const r of rows) {
      const id = `peers.${r.job.split(' ')[0]}.${r.job.includes('again') ? 'again' : r.n}`;
      if (r.mesh === undefined) continue;
      figs.push(
        figure({
          id: `${id}.mesh`,
          what: `mesh: ${r.job}${r.n !== '1' ? `, N=${r.n}` : ''}`,
          value: r.mesh,
          unit: r.unit,
          detail: { notes: r.notes },
        }),
      );
      for (const [tool, val] of [
        ['Puppet', r.puppet],
        ['Ansible', r.ansible],
      ] as const) {
        if (val === undefined) continue;
        figs.push(
          figure({
            id: `${id}.${tool.toLowerCase()}`,
            what: `${tool}: ${r.job}${r.n !== '1' ? `, N=${r.n}` : ''}`,
            value: val,
            unit: r.unit,
            limit: { what: 'mesh, same job, same run', value: r.mesh, unit: r.unit },
          }),
        );
      }
    }
  } finally {
    for (const s of stops.reverse()) await s().catch((e) => console.error(`[peers] cleanup: ${(e as Error).message}`));
    await endStarted();
    // The peers' own logs and reports, kept beside bench-results.json (no private keys: ssl/, ca/ and ssh/ stay behind).
    const kept = join(REPO, 'bench-peers-logs');
    rmSync(kept, { recursive: true, force: true });
    cpSync(work, kept, {
      recursive: true,
      filter: (src) =>
        !/\/(ssl|ca|ssh|gems|state|cp|tmp|remote-tmp|home|targets|root)(\/|$)/.test(src.slice(work.length)),
    });
    console.log(`[peers] the peers' logs and Puppet's stored reports: ${kept}`);
    if (measured) removeDir(work); // a failed run keeps it whole (the run keeps the suite's temp dir)
  }
});
