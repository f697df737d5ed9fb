// Puppet as an operator runs it, from Debian 12's packages, every file of it
// under DIR: one puppetserver (its conf.d, CA, ssl, code, reports and logs
// here, never /etc/puppet or /var/lib/puppet), agents each with their own
// confdir, vardir, ssldir and certname, and `puppet apply`.
import { mkdirSync, writeFileSync, readFileSync, readdirSync, statSync, copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { run, tail, freePort, type Ran } from './proc.js';

const PKG_CONF = '/etc/puppet/puppetserver'; // read only: copied, then pointed at DIR

export interface PuppetServer {
  dir: string;
  port: number;
  pid: number;
  reportdir: string;
  log: string;
  stop(): Promise<void>;
}

/** A puppetserver on 127.0.0.1:PORT with autosign, storing every report under DIR/reports. */
export async function startServer(dir: string): Promise<PuppetServer> {
  const port = await freePort();
  const p = (...s: string[]) => join(dir, ...s);
  for (const d of [
    'conf.d',
    'services.d',
    'confdir',
    'code/environments/production/manifests',
    'code/environments/production/modules',
    'var',
    'run',
    'log',
    'ssl',
    'ca',
    'reports',
    'gems',
  ])
    mkdirSync(p(d), { recursive: true });
  writeFileSync(
    p('confdir', 'puppet.conf'),
    [
      '[main]',
      `certname = puppet-bench-server`,
      `dns_alt_names = localhost`,
      `ssldir = ${p('ssl')}`,
      `vardir = ${p('var')}`,
      `rundir = ${p('run')}`,
      `logdir = ${p('log')}`,
      `codedir = ${p('code')}`,
      `hiera_config = ${p('confdir', 'hiera.yaml')}`,
      `publicdir = ${p('var', 'public')}`, // Debian's default is /var/cache/puppet/public, not under vardir
      '[server]',
      `cadir = ${p('ca')}`,
      'autosign = true',
      'reports = store',
      `reportdir = ${p('reports')}`,
      'environment_timeout = 0',
      '',
    ].join('\n'),
  );
  writeFileSync(p('confdir', 'hiera.yaml'), '---\nversion: 5\nhierarchy: []\n');
  // The package's own files, with every path moved here and the port ours.
  for (const f of readdirSync(join(PKG_CONF, 'conf.d'))) copyFileSync(join(PKG_CONF, 'conf.d', f), p('conf.d', f));
  for (const f of readdirSync(join(PKG_CONF, 'services.d')))
    copyFileSync(join(PKG_CONF, 'services.d', f), p('services.d', f));
  const logs = (s: string) => s.replaceAll('/var/log/puppetserver', p('log'));
  writeFileSync(p('logback.xml'), logs(readFileSync(join(PKG_CONF, 'logback.xml'), 'utf8')));
  writeFileSync(p('request-logging.xml'), logs(readFileSync(join(PKG_CONF, 'request-logging.xml'), 'utf8')));
  writeFileSync(p('conf.d', 'global.conf'), `global: {\n  logging-config: ${p('logback.xml')}\n}\n`);
  writeFileSync(
    p('conf.d', 'webserver.conf'),
    `webserver: {\n  access-log-config: ${p('request-logging.xml')}\n  client-auth: want\n  ssl-host: 127.0.0.1\n  ssl-port: ${port}\n}\n`,
  );
  writeFileSync(
    p('conf.d', 'puppetserver.conf'),
    [
      'jruby-puppet: {',
      '  ruby-load-path: [/usr/lib/puppetserver/ruby/vendor_ruby]',
      `  gem-home: ${p('gems')}`,
      '  gem-path: [${jruby-puppet.gem-home}, "/usr/lib/puppetserver/vendored-jruby-gems"]',
      `  server-conf-dir: ${p('confdir')}`,
      `  server-code-dir: ${p('code')}`,
      `  server-var-dir: ${p('var')}`,
      `  server-run-dir: ${p('run')}`,
      `  server-log-dir: ${p('log')}`,
      '}',
      'http-client: {',
      '}',
      'profiler: {',
      '}',
      '',
    ].join('\n'),
  );
  writeFileSync(p('run', 'restart'), '0');
  const log = p('log', 'server-console.log');
  // As the Debian unit starts it (/lib/systemd/system/puppetserver.service, JAVA_ARGS of /etc/default/puppetserver).
  const { child, done } = run(
    '/usr/bin/java',
    [
      '-Xms1g',
      '-Xmx1g',
      '-Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger',
      '-Djruby.lib=/usr/share/jruby/lib',
      '-XX:+CrashOnOutOfMemoryError',
      `-XX:ErrorFile=${p('log', 'puppetserver_err_pid%p.log')}`,
      '-jar',
      '/usr/share/puppetserver/puppetserver.jar',
      '--config',
      p('conf.d'),
      '--bootstrap-config',
      p('services.d'),
      '--restart-file',
      p('run', 'restart'),
    ],
    log,
  );
  let exited: Ran | undefined;
  void done.then((r) => {
    exited = r;
  });
  // Ready when trapperkeeper writes 1 to its restart file (what the unit's ExecStartPost waits for).
  const end = Date.now() + 400_000;
  while (readFileSync(p('run', 'restart'), 'utf8').trim() !== '1') {
    if (exited)
      throw new Error(
        `puppetserver exited (${exited.code}) before it was ready: ${tail(p('log', 'puppetserver.log'))}\n${tail(log)}`,
      );
    if (Date.now() > end) {
      child.kill('SIGKILL');
      throw new Error(`puppetserver was not ready within 400 s: ${tail(p('log', 'puppetserver.log'))}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    dir,
    port,
    pid: child.pid!,
    reportdir: p('reports'),
    log,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
      await done;
      clearTimeout(t);
    },
  };
}

/** Puppet's single-quoted string: only \ and ' need escaping; newlines stay. */
const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The server's site.pp: on every agent one file, at TARGETS/CERTNAME + PATH, with CONTENT. */
export function writeSite(server: PuppetServer, targets: string, path: string, content: string): void {
  writeFileSync(
    join(server.dir, 'code/environments/production/manifests/site.pp'),
    `node default {\n  file { "${targets}/\${trusted['certname']}${path}":\n    ensure => file,\n    mode => '0644',\n    content => ${quote(content)},\n  }\n}\n`,
  );
}

/** A manifest of FILES for `puppet apply`. */
export function writeManifest(file: string, files: { path: string; content: string }[]): void {
  writeFileSync(
    file,
    files
      .map(
        (f) => `file { ${quote(f.path)}:\n  ensure => file,\n  mode => '0644',\n  content => ${quote(f.content)},\n}\n`,
      )
      .join(''),
  );
}

/** An agent's own directories, as a machine of its own would have them in /etc/puppet and /var/lib/puppet. */
export function agentConf(root: string, name: string, server?: PuppetServer): string {
  const d = join(root, name);
  for (const s of ['conf', 'var', 'run', 'log']) mkdirSync(join(d, s), { recursive: true });
  writeFileSync(
    join(d, 'conf', 'puppet.conf'),
    [
      '[main]',
      `certname = ${name}`,
      `vardir = ${join(d, 'var')}`,
      `ssldir = ${join(d, 'ssl')}`,
      `rundir = ${join(d, 'run')}`,
      `logdir = ${join(d, 'log')}`,
      `codedir = ${join(d, 'code')}`,
      `hiera_config = ${join(d, 'conf', 'hiera.yaml')}`,
      // Debian's defaults for these are /var/cache/puppet/public and /etc/puppet/puppetserver/ca, not under vardir.
      `publicdir = ${join(d, 'var', 'public')}`,
      `cadir = ${join(d, 'ca')}`,
      ...(server ? [`server = localhost`, `serverport = ${server.port}`] : []),
      '[agent]',
      'runinterval = 1h',
      'splay = false',
      '',
    ].join('\n'),
  );
  writeFileSync(join(d, 'conf', 'hiera.yaml'), '---\nversion: 5\nhierarchy: []\n');
  return join(d, 'conf');
}

/** `puppet agent -t` as a machine's run does it: facts, catalog from the server, apply, report. Exit 0 (no change) or 2 (changed). */
export function agentRun(confdir: string, log: string) {
  return run(
    '/usr/bin/puppet',
    ['agent', '--test', '--confdir', confdir, '--waitforcert', '5', '--color', 'false'],
    log,
  );
}

/** `puppet agent` as a daemon (no fork into the background, so its pid is ours), runinterval 1h. */
export function agentDaemon(confdir: string, log: string) {
  return run(
    '/usr/bin/puppet',
    ['agent', '--no-daemonize', '--confdir', confdir, '--color', 'false', '--logdest', 'console'],
    log,
  );
}

/** `puppet apply` of MANIFEST with an agent's own dirs, --detailed-exitcodes (0 nothing changed, 2 changed). */
export function apply(confdir: string, manifest: string, log: string) {
  return run(
    '/usr/bin/puppet',
    ['apply', '--confdir', confdir, '--detailed-exitcodes', '--color', 'false', manifest],
    log,
  );
}

/** Report files stored for NAME after t0 (ms): the server writes one per agent run before answering it. */
export function reportsSince(server: PuppetServer, name: string, t0: number): { file: string; mtime: number }[] {
  const d = join(server.reportdir, name);
  if (!existsSync(d)) return [];
  return readdirSync(d)
    .map((f) => ({ file: join(d, f), mtime: statSync(join(d, f)).mtimeMs }))
    .filter((r) => r.mtime >= t0);
}

/** A stored report's status line (changed, unchanged, failed). */
export function reportStatus(file: string): string {
  return /^status: (\w+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? 'unknown';
}
