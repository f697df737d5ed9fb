// The wireguard driver: a wg-quick file from the declaration and the node's
// overlay key, an interface raised from it, and on a hub the forwarding that
// lets spokes reach each other through it and nothing else (O2).
//
// The private key never travels and is never logged: it is read from the
// overlay key file at apply time and goes only into a 0600 file.
import { mkdir, open, readFile, rename, unlink, writeFile, stat, chmod } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { WireguardResource } from '../../../src/wire/resources.js';
import type { Driver, DriverContext, Observed } from '../driver.js';
import type { HeldEntry } from '../../../src/wire/report.js';
import { digestOf } from '../digest.js';
import { run, runAny } from '../../../src/sys/proc.js';
import { quietEnv } from './quiet_env.js';
import { foundStartedAgain } from './found.js';
import {
  checkInterfaceName,
  checkKey,
  checkResource,
  covers,
  liveDiffers,
  normCidr,
  parseDump,
  renderConf,
  renderWgConf,
} from './wgconf.js';

export const wireguardDriver: Driver<WireguardResource> = {
  kind: 'wireguard',

  target: (r) => r.name,

  digest: (r) => digestOf({ ...r, restartOn: undefined }),

  async observe(r, ctx): Promise<Observed> {
    checkResource(r);
    if (!(await linkExists(r.name))) return 'absent';
    const key = await readOverlayKey(ctx);
    if ((await readIfExists(confPath(ctx.wgDir, r.name))) !== renderConf(r, key)) return 'drift';
    if (await differs(r, key)) return 'drift';
    if (r.hub ? !(await hubHeld(r.name)) : (await ourForwardRules(r.name)).length > 0) return 'drift';
    await sayFoundAgain(r, ctx);
    return 'ok';
  },

  async apply(r, ctx): Promise<boolean> {
    checkResource(r);
    const key = await readOverlayKey(ctx);
    const wrote = await writeConf(ctx.wgDir, r.name, renderConf(r, key));
    if (wrote) ctx.log(`wireguard ${r.name}: wrote ${confPath(ctx.wgDir, r.name)}`);
    let changed = wrote;
    if (!(await linkExists(r.name))) {
      await up(ctx.wgDir, r.name);
      ctx.log(`wireguard ${r.name}: up`);
      changed = true;
    } else {
      // A running interface never re-reads its file (D4). A hand change to
      // the live interface (wg set) is put back the same way (D6).
      const why = wrote ? 'its file changed' : await differs(r, key);
      if (why) {
        await reflect(r, key, why, ctx);
        changed = true;
      }
    }
    if (r.hub) {
      if (await holdHub(r.name)) {
        ctx.log(`wireguard ${r.name}: forwarding on for ${r.name}, FORWARD accept rule ${r.name} to ${r.name} held`);
        changed = true;
      }
    } else if (await dropForwardRules(r.name)) {
      ctx.log(`wireguard ${r.name}: no longer a hub, FORWARD rules removed`);
      changed = true;
    }
    await sayFoundAgain(r, ctx);
    return changed;
  },

  async restart(r, ctx): Promise<void> {
    checkResource(r);
    if (await linkExists(r.name)) await down(ctx.wgDir, r.name);
    await up(ctx.wgDir, r.name);
    // A new interface inherits the default send_redirects: hold the hub again.
    if (r.hub) await holdHub(r.name);
    ctx.log(`wireguard ${r.name}: restarted`);
  },

  async remove(held: HeldEntry, ctx: DriverContext): Promise<void> {
    const name = checkInterfaceName(held.target);
    const file = confPath(ctx.wgDir, name);
    if (await linkExists(name)) {
      if ((await readIfExists(file)) !== null) await down(ctx.wgDir, name);
      else await run('ip', ['link', 'delete', 'dev', name]); // file gone by hand: the link still must go
      ctx.log(`wireguard ${name}: down`);
    }
    if (await dropForwardRules(name)) ctx.log(`wireguard ${name}: FORWARD rules removed`);
    await unlink(file).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  },
};

/**
 * ADR 0105: said, not stopped. A failure of this resource, so the host logs
 * it and its report carries it to the mesh's log, on every apply and every
 * reconcile until somebody takes the found tunnel down.
 */
async function sayFoundAgain(r: WireguardResource, ctx: DriverContext): Promise<void> {
  const said = await foundStartedAgain(ctx.stateDir, r.name, !!r.hub, r.listenPort);
  if (!said) return;
  ctx.log(`wireguard ${r.name}: ${said}`);
  throw new Error(said);
}

function confPath(wgDir: string, name: string): string {
  return join(wgDir, `${name}.conf`);
}

async function readOverlayKey(ctx: DriverContext): Promise<string> {
  let text: string;
  try {
    text = await readFile(ctx.overlayKeyPath, 'utf8');
  } catch (err) {
    throw new Error(
      `The overlay key file ${ctx.overlayKeyPath} cannot be read; the interface cannot be raised without it. Enrol the host again or restore the key file.`,
      { cause: err },
    );
  }
  // Never echo the content in the error: it is the private key.
  return checkKey(text.trim(), `The overlay key file ${ctx.overlayKeyPath}`);
}

async function readIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Write the file atomically with mode 0600 from its first byte: a temp file
 * in the same directory (so rename is atomic), fsync, rename. True when the
 * content changed; a wrong mode alone is fixed without counting as a change.
 */
async function writeConf(wgDir: string, name: string, text: string): Promise<boolean> {
  const path = confPath(wgDir, name);
  if ((await readIfExists(path)) === text) {
    if (((await stat(path)).mode & 0o777) !== 0o600) await chmod(path, 0o600);
    return false;
  }
  await mkdir(wgDir, { recursive: true, mode: 0o700 });
  const tmp = join(wgDir, `.${name}.conf.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.chmod(0o600); // the umask cannot widen it, but an odd one could narrow it oddly
    await fh.writeFile(text);
    await fh.sync();
  } catch (err) {
    await fh.close();
    await unlink(tmp).catch(() => {});
    throw err;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
  const dir = await open(wgDir, 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return true;
}

async function linkExists(name: string): Promise<boolean> {
  const r = await runAny('ip', ['link', 'show', 'dev', name]);
  if (r.code === 0) return true;
  if (/does not exist/i.test(r.stderr)) return false;
  throw new Error(`ip link show dev ${name} exited ${r.code}: ${r.stderr.trim()}`);
}

// wg-quick falls back to wireguard-go by itself when the kernel has no
// wireguard module (LAB-NOTES); it adds the address and the routes of every
// AllowedIPs.
async function up(wgDir: string, name: string): Promise<void> {
  await run('wg-quick', ['up', confPath(wgDir, name)], { env: quietEnv() });
}

async function down(wgDir: string, name: string): Promise<void> {
  await run('wg-quick', ['down', confPath(wgDir, name)]);
}

/**
 * Make the running interface match its file. When the address is unchanged
 * the update is made in place (`wg syncconf`, then the routes wg-quick would
 * have made). A restart drops every session, and a spoke behind NAT whose
 * hub forgot it stays cut off until it next sends data and waits out the
 * rekey timeout, while with syncconf it is not cut off at all (the hub cannot
 * dial a spoke).
 * Anything else, or an update that did not take, is a restart: down, up.
 */
async function reflect(r: WireguardResource, key: string, why: string, ctx: DriverContext): Promise<void> {
  const addrs = await run('ip', ['-o', 'addr', 'show', 'dev', r.name]);
  if (addrs.split(/\s+/).includes(r.address)) {
    // wg syncconf sets every interface field, and a file with no ListenPort
    // sets port 0: a fresh random port. A spoke behind NAT would then speak
    // from a new mapping while its hub answers the old one until the next
    // keepalive, so the port it holds is kept.
    const listenPort = r.listenPort ?? parseDump(await run('wg', ['show', r.name, 'dump'])).listenPort;
    await syncconf(ctx.wgDir, r.name, renderWgConf({ ...r, listenPort }, key));
    await syncRoutes(r);
    const still = await differs(r, key);
    if (!still) {
      ctx.log(`wireguard ${r.name}: updated in place (wg syncconf) because ${why}`);
      return;
    }
    ctx.log(`wireguard ${r.name}: update in place left it different (${still}); restarting`);
  }
  await down(ctx.wgDir, r.name);
  await up(ctx.wgDir, r.name);
  ctx.log(`wireguard ${r.name}: restarted because ${why}`);
}

/**
 * `wg syncconf` reads a file by name. Node's stdio are socketpairs, which
 * /dev/stdin cannot open (ENXIO), so the config goes through a 0600 file
 * beside the real one (it holds the private key, as that one does).
 */
async function syncconf(wgDir: string, name: string, text: string): Promise<void> {
  const tmp = join(wgDir, `.${name}.sync.${randomBytes(6).toString('hex')}.tmp`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(text);
    await fh.close();
    await run('wg', ['syncconf', name, tmp]);
  } finally {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
  }
}

/** The routes wg-quick adds on up, one per allowed IP not already covered; those of dropped peers go. */
async function syncRoutes(r: WireguardResource): Promise<void> {
  const want = new Set(r.peers.flatMap((p) => p.allowedIps).map(normCidr));
  // The routes the interface keeps: a wanted address they contain needs no question of its own
  // (a hub's 50,000 spokes all lie in its own range: 50,000 spawns of `ip route show match` saved).
  const kept: string[] = [];
  for (const family of ['-4', '-6']) {
    const lines = (await run('ip', [family, '-o', 'route', 'show', 'dev', r.name])).split('\n').filter(Boolean);
    for (const line of lines) {
      const dest = line.split(/\s+/)[0]!;
      if (dest === 'default') continue;
      const cidr = normCidr(dest.includes('/') ? dest : `${dest}/${family === '-4' ? 32 : 128}`);
      if (/\bproto kernel\b/.test(line) || want.has(cidr)) kept.push(cidr);
      else await run('ip', [family, 'route', 'del', dest, 'dev', r.name]);
    }
  }
  for (const cidr of want) {
    if (kept.some((k) => covers(k, cidr))) continue;
    const family = cidr.includes(':') ? '-6' : '-4';
    const covered = await run('ip', [family, 'route', 'show', 'dev', r.name, 'match', cidr]);
    if (!covered.trim()) await run('ip', [family, 'route', 'add', cidr, 'dev', r.name]);
  }
}

/** Why the live interface is not the declared one, or null. */
async function differs(r: WireguardResource, key: string): Promise<string | null> {
  const live = parseDump(await run('wg', ['show', r.name, 'dump']));
  const d = liveDiffers(r, key, live);
  if (d) return d;
  const addrs = await run('ip', ['-o', 'addr', 'show', 'dev', r.name]);
  if (!addrs.split(/\s+/).includes(r.address)) return `address ${r.address} is not on the interface`;
  return null;
}

// ---- hub: forwarding between spokes (O2) ----------------------------------
//
// Forwarding is on for the overlay interface alone: IPv4 asks only whether
// the interface a packet came in on forwards, so a spoke's packet to another
// spoke is routed and nothing arriving elsewhere is. What may be forwarded is
// the firewall's forward chain (table inet mesh): overlay to overlay only.
// Another tenant's FORWARD policy of DROP (Docker sets one) would still drop
// spoke to spoke, since a drop in any table is final, so one iptables rule at
// the top of FORWARD accepts exactly overlay in and overlay out. Our rule
// carries a comment naming the interface; any other rule with that comment is
// not ours to keep and goes.

const tag = (name: string) => `mesh:${name}`;
const forwardRule = (name: string) => ['-i', name, '-o', name, '-m', 'comment', '--comment', tag(name), '-j', 'ACCEPT'];
// As `iptables -S` prints it.
const RULE_LINE = (name: string) => `-A FORWARD -i ${name} -o ${name} -m comment --comment "${tag(name)}" -j ACCEPT`;
/** The argv that deletes a rule `iptables -S` printed (our comments carry no spaces). */
const deleting = (line: string) => [
  '-w',
  '-D',
  ...line
    .split(' ')
    .slice(1)
    .map((t) => t.replace(/^"(.*)"$/, '$1')),
];

/** The FORWARD rules that carry our comment, as `iptables -S` prints them; none when there is no iptables. */
async function ourForwardRules(name: string): Promise<string[]> {
  let r;
  try {
    r = await runAny('iptables', ['-w', '-S', 'FORWARD']);
  } catch (err) {
    if (/\(ENOENT\)/.test((err as Error).message)) return []; // no iptables: no rule of ours either
    throw err;
  }
  if (r.code !== 0) throw new Error(`iptables -w -S FORWARD exited ${r.code}: ${r.stderr.trim()}`);
  return r.stdout
    .split('\n')
    .filter((l) => l.startsWith('-A FORWARD ') && / --comment "?([^" ]+)"?( |$)/.exec(l)?.[1] === tag(name));
}

const SYSCTLS = (name: string): [string, string][] => [
  [`/proc/sys/net/ipv4/conf/${name}/forwarding`, '1'],
  // The hub sends a spoke's packet back out the interface it came in on;
  // a redirect would tell the spoke to go direct, which it cannot.
  ['/proc/sys/net/ipv4/conf/all/send_redirects', '0'],
  [`/proc/sys/net/ipv4/conf/${name}/send_redirects`, '0'],
];

async function hubHeld(name: string): Promise<boolean> {
  for (const [path, want] of SYSCTLS(name)) {
    if ((await readFile(path, 'utf8')).trim() !== want) return false;
  }
  const rules = await ourForwardRules(name);
  return rules.length === 1 && rules[0] === RULE_LINE(name);
}

/** Forwarding on for the interface and exactly our one FORWARD rule, at the top. True when anything had to be done. */
async function holdHub(name: string): Promise<boolean> {
  let did = false;
  for (const [path, want] of SYSCTLS(name)) {
    if ((await readFile(path, 'utf8')).trim() !== want) {
      await writeFile(path, want).catch((err) => {
        throw new Error(`Cannot set ${path} to ${want} for hub ${name}.`, { cause: err });
      });
      did = true;
    }
  }
  const rules = await ourForwardRules(name);
  for (const line of rules.filter((l) => l !== RULE_LINE(name))) {
    await run('iptables', deleting(line));
    did = true;
  }
  if (!rules.includes(RULE_LINE(name))) {
    await run('iptables', ['-w', '-I', 'FORWARD', '1', ...forwardRule(name)]);
    did = true;
  }
  return did;
}

/**
 * Every rule of ours goes, and the interface stops forwarding; true when
 * there was a rule. Other interfaces' forwarding is never ours to touch.
 */
async function dropForwardRules(name: string): Promise<boolean> {
  const rules = await ourForwardRules(name);
  for (const line of rules) await run('iptables', deleting(line));
  if (rules.length === 0) return false;
  const path = `/proc/sys/net/ipv4/conf/${name}/forwarding`;
  await writeFile(path, '0').catch(() => {}); // the interface may be gone already
  return true;
}
