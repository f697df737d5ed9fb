// `mesh console`: a read-only web console on node:http, no
// framework: nine pages, their JSON, one server-sent event stream, the static
// files of src/console/static. Nothing is served without a session but the
// sign-in page; nothing here writes but signing in (a POST that spends a
// link, so a link preview's GET spends nothing) and signing out. Every
// figure comes from the functions the CLI prints (readNodeStatus, readDrift,
// readHistory, readRolloutStatus, readOverlay, readModules, readPromises,
// readFreezes, readNodeAt, readDiff), so the console, `mesh node list`,
// `mesh drift`, `mesh log`, `mesh rollout status`, `mesh promise list`,
// `mesh freeze list`, `mesh node show --at`, `mesh diff` and a DBA's select
// agree. Pages build their DOM with textContent only, and the
// Content-Security-Policy lets no script run but our own files.
import { createServer as createHttp, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import { createServer as createHttps } from 'node:https';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join, extname } from 'node:path';
import { connect, type Sql } from '../store/connect.js';
import { MeshError, refuse, storeError } from '../sys/errors.js';
import { openSession, closeSession, sessionLeft, readReport, readFailing, readRefusal } from '../inventory/console.js';
import { readDrift } from '../inventory/drift.js';
import { readHistory, readKinds, FilterError } from '../audit/log.js';
import { readNodeDeclarations } from '../assignment/console.js';
import { readRollouts, readRolloutStatus } from '../assignment/rollout.js';
import { readOverlay } from '../overlay/show.js';
import { readWhatIf } from '../assignment/what_if.js';
import { readWhy } from '../assignment/why.js';
import { readModules } from '../catalogue/module_list.js';
import { readPromises } from '../assignment/promise.js';
import { readFreezes } from '../assignment/freeze.js';
import { readNodeAt, readDiff } from '../assignment/history.js';
import { LiveFleet, readFleetPage, type FleetEvent } from './fleet.js';
import { pageLimit } from '../inventory/node.js';
import { parseListen, consoleUrl, type Listen } from './listen.js';
import type { ConsoleContext } from './contexts.js';
import { log as sysLog } from '../sys/log.js';

/** src/console/static, beside this file's source: the package carries it (dist/ holds only compiled TypeScript). */
const STATIC = fileURLToPath(new URL('../../../src/console/static/', import.meta.url));
const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
};
const PAGES: Record<string, string> = {
  '/': 'fleet.html',
  '/node': 'node.html',
  '/overlay': 'overlay.html',
  '/catalogue': 'catalogue.html',
  '/history': 'history.html',
  '/rollouts': 'rollouts.html',
  '/promises': 'promises.html',
  '/freezes': 'freezes.html',
  '/declared': 'declared.html',
};
const COOKIE = 'mesh_console';
/** setTimeout's longest wait; a session longer than that is looked at again then. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;
/** The node page's last refusals, as `mesh log --node N --kind refused --limit 10` prints them (every kind of the family). */
const REFUSALS = 10;

const HEADERS = {
  // No inline script, no inline style, nothing from elsewhere: markup a name smuggled in cannot run.
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  // A sign-in link's secret is in its URL: never sent on as a referrer.
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface ConsoleOptions {
  listen?: string;
  tlsCert?: string;
  tlsKey?: string;
  log?: (l: string) => void;
  env?: NodeJS.ProcessEnv;
}
export interface RunningConsole {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

export async function startConsole(opts: ConsoleOptions = {}): Promise<RunningConsole> {
  const log = opts.log ?? ((l: string) => sysLog(l));
  const where: Listen = parseListen(opts.listen);
  const tls = Boolean(opts.tlsCert && opts.tlsKey);
  // CONSOLE_CONTEXTS, each opened in openStores: the only store URLs the console is handed.
  const stores = await openStores(opts.env);
  const fleet = new LiveFleet(stores, log);
  await fleet.start();
  const site: Site = { stores, fleet, log, streams: new Set(), files: staticFiles(), tls };
  const handler = (req: IncomingMessage, res: ServerResponse) => serveRequest(site, req, res);
  const server = tls
    ? createHttps({ cert: readFileSync(opts.tlsCert!), key: readFileSync(opts.tlsKey!) }, handler)
    : createHttp(handler);
  await listening(server, where);
  const port = (server.address() as { port: number }).port;
  const url = consoleUrl({ host: where.host, port }, tls);
  log(`console: serving ${url} (read-only; sign in with a link from mesh console token)`);
  return {
    url,
    server,
    async stop() {
      for (const s of site.streams) s.end();
      await new Promise((r) => server.close(r));
      await fleet.stop();
      await Promise.all(Object.values(stores).map((s) => s.end()));
    },
  };
}

/** The files of src/console/static the console serves, by name, read once at start. */
function staticFiles(): Map<string, Buffer> {
  return new Map(
    readdirSync(STATIC)
      .filter((f) => TYPES[extname(f)])
      .map((f) => [f, readFileSync(join(STATIC, f))]),
  );
}

/** One request answered; a failure is logged and answered 500 (or the answer begun is ended). */
function serveRequest(site: Site, req: IncomingMessage, res: ServerResponse): void {
  route(site, req, res).catch((err) => {
    site.log(`console: ${req.method} ${req.url?.split('?')[0]} failed: ${(err as Error).message}`);
    if (!res.headersSent)
      send(
        res,
        500,
        'application/json',
        JSON.stringify({ error: 'the console could not read the store; see its log' }),
      );
    else res.end();
  });
}

/** The console's one door: sign-in and sign-out posts, static files, then nothing but for a session. */
async function route(site: Site, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { files } = site;
  const url = new URL(req.url ?? '/', 'http://console');
  const posting = url.pathname === '/signin' || url.pathname === '/signout';
  if (req.method === 'POST' && posting) {
    if (foreignPost(site, req))
      return send(res, 403, 'text/plain; charset=utf-8', 'sign in and out from the console itself\n');
    return url.pathname === '/signin' ? signIn(site, req, res) : signOut(site, req, res);
  }
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, 'text/plain; charset=utf-8', 'the console is read-only but for signing in and out\n', {
      allow: posting ? 'GET, HEAD, POST' : 'GET, HEAD',
    });
  if (url.pathname.startsWith('/static/')) {
    const f = files.get(url.pathname.slice('/static/'.length));
    if (!f) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    return send(res, 200, TYPES[extname(url.pathname)]!, f);
  }
  // The link's page: a button that signs in (the link's GET spends nothing).
  if (url.pathname === '/signin') return send(res, 200, TYPES['.html']!, files.get('signin.html')!);
  const session = await sessionOf(site.stores.inventory, req);
  const page = PAGES[url.pathname];
  if (!session) {
    if (url.pathname.startsWith('/api/'))
      return send(
        res,
        401,
        'application/json',
        JSON.stringify({ error: 'sign in first: mesh console token prints a link' }),
      );
    return send(res, 401, TYPES['.html']!, files.get('signin.html')!);
  }
  if (page) return send(res, 200, TYPES['.html']!, files.get(page)!);
  return api(site, url, req, res, session);
}

/**
 * A form of another site may not sign anybody in or out here. Under
 * no-referrer a browser's own-site form says Origin "null"; its
 * Sec-Fetch-Site still tells a foreign one.
 */
function foreignPost({ tls }: Site, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  const own = `${tls ? 'https' : 'http'}://${req.headers.host}`;
  const foreign =
    (site !== undefined && site !== 'same-origin' && site !== 'none') ||
    (origin !== undefined && origin !== 'null' && origin !== own);
  return foreign;
}

/** The JSON and the stream the pages read, for a request with an open SESSION. */
async function api(ctx: Site, url: URL, req: IncomingMessage, res: ServerResponse, session: Session): Promise<void> {
  const { stores, fleet } = ctx;
  switch (url.pathname) {
    case '/api/fleet':
      return fleetPage(ctx, url, res);
    case '/api/fleet/events':
      return events(ctx, req, res, session);
    case '/api/fleet/changes':
      return events(ctx, req, res, session, true);
    case '/api/history':
      return history(ctx, url, res);
    case '/api/rollouts':
      return rollouts(ctx, url, res);
    case '/api/node': {
      const d = await nodeDetail(ctx, url.searchParams.get('name') ?? '');
      return d
        ? json(res, d)
        : send(res, 404, 'application/json', JSON.stringify({ error: 'no such node: see the fleet page' }));
    }
    case '/api/overlay':
      return json(res, {
        ...(await readOverlay(stores.overlay)),
        states: Object.fromEntries(fleet.current().map((r) => [r.name, r.state])),
      });
    case '/api/overlay/what-if':
    case '/api/overlay/why':
      return pathAnswer(ctx, url, res);
    case '/api/catalogue':
      return json(res, await readModules(stores.catalogue));
    case '/api/promises':
      return json(res, await readPromises(stores.assignment));
    case '/api/freezes':
      return json(res, await readFreezes(stores.assignment));
    case '/api/declared':
    case '/api/declared/diff':
      return declared(ctx, url, res);
    default:
      return send(res, 404, 'application/json', JSON.stringify({ error: 'no such page' }));
  }
}

async function signIn({ stores, files, log, tls }: Site, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const token = new URLSearchParams(await smallBody(req)).get('token') ?? '';
    const s = await openSession(stores.inventory, token);
    const cookie = [
      `${COOKIE}=${s.cookie}`,
      'HttpOnly',
      'SameSite=Strict',
      'Path=/',
      `Expires=${s.expires.toUTCString()}`,
      ...(tls ? ['Secure'] : []),
    ].join('; ');
    res.writeHead(303, { ...HEADERS, location: '/', 'set-cookie': cookie });
    res.end();
  } catch (err) {
    if (!(err instanceof MeshError)) throw err;
    log(`console: a sign-in was refused: ${err.message}`);
    send(res, 401, TYPES['.html']!, files.get('signin.html')!);
  }
}

/** Close the request's session in the store and clear its cookie, whether or not it was open. */
async function signOut({ stores, tls }: Site, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const cookie = cookieOf(req);
  if (cookie) await closeSession(stores.inventory, cookie);
  const clear = [`${COOKIE}=`, 'HttpOnly', 'SameSite=Strict', 'Path=/', 'Max-Age=0', ...(tls ? ['Secure'] : [])];
  res.writeHead(303, { ...HEADERS, location: '/', 'set-cookie': clear.join('; ') });
  res.end();
}

/** The stores the console reads, each with a pool of its own. */
async function openStores(env?: NodeJS.ProcessEnv): Promise<Record<ConsoleContext, Sql>> {
  return {
    inventory: await connect('inventory', { max: 4, env }),
    assignment: await connect('assignment', { max: 2, env }),
    overlay: await connect('overlay', { max: 2, env }),
    catalogue: await connect('catalogue', { max: 2, env }),
    // The history, read as `mesh log` reads it: with the audit context's own store.
    audit: await connect('audit', { max: 2, env }),
  };
}

/** SERVER listening at WHERE, or the error that kept it from listening. */
function listening(server: Server, where: Listen): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(where.port, where.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** What the console's pages and streams read from: its stores, the live fleet, its log and its open streams. */
interface Ctx {
  stores: Record<'inventory' | 'assignment' | 'overlay' | 'catalogue' | 'audit', Sql>;
  fleet: LiveFleet;
  log: (l: string) => void;
  streams: Set<ServerResponse>;
}

/** The running console: what its pages read, its static files by name, and whether it serves TLS. */
interface Site extends Ctx {
  files: Map<string, Buffer>;
  tls: boolean;
}

/** What the node page shows of NAME, or null when the fleet has no such node. */
async function nodeDetail({ stores, fleet }: Ctx, name: string) {
  const status = fleet.current().find((r) => r.name === name);
  if (!status) return null;
  const [report, declared, failing, drift, refusals, refusal] = await Promise.all([
    readReport(stores.inventory, name),
    readNodeDeclarations(stores.assignment, name),
    readFailing(stores.inventory, name),
    readDrift(stores.inventory, name),
    readHistory(stores.audit, { node: name, kind: 'refused', limit: REFUSALS }),
    readRefusal(stores.inventory, name),
  ]);
  return {
    status,
    report: report && { ...report, serial: Number(report.serial) },
    declared,
    failing: failing.get(name) ?? [],
    drift,
    refusals,
    refusal,
  };
}

/**
 * One page of the fleet, as `mesh node list --limit L --after A --prefix P --site S --state C --json` prints its rows
 * (inventory.fleet_page), with the next page's start and the counts by state; a filter SQL refuses is a 400 saying why.
 */
async function fleetPage({ stores }: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const q = (k: string) => url.searchParams.get(k) || undefined;
  try {
    json(
      res,
      await readFleetPage(stores, {
        limit: pageLimit(q('limit')),
        after: q('after'),
        prefix: q('prefix'),
        site: q('site'),
        state: q('state'),
      }),
    );
  } catch (raw) {
    const err = storeError(raw);
    if (!(err instanceof MeshError)) throw raw;
    send(res, 400, 'application/json', JSON.stringify({ error: err.message, code: err.code }));
  }
}

/** The rows `mesh log --node N --kind K --since D --limit L` prints; a filter it refuses is a 400 saying why. */
async function history({ stores }: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const q = (k: string) => url.searchParams.get(k) || undefined;
  const limit = q('limit');
  try {
    const [rows, kinds] = await Promise.all([
      readHistory(stores.audit, {
        node: q('node'),
        kind: q('kind'),
        since: q('since'),
        limit: limit === undefined ? undefined : Number(limit),
      }),
      readKinds(stores.audit),
    ]);
    json(res, { rows, kinds });
  } catch (err) {
    if (!(err instanceof FilterError || err instanceof MeshError)) throw err;
    send(
      res,
      400,
      'application/json',
      JSON.stringify({ error: err.message, ...(err instanceof MeshError ? { code: err.code } : {}) }),
    );
  }
}

/** `mesh overlay what-if --down D` (?down=a,b) or `mesh overlay why F T --port P` (?from&to&port), as assignment's reader; a refusal is a 400 saying why. */
async function pathAnswer({ stores }: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const q = (k: string) => url.searchParams.get(k) || '';
  try {
    if (url.pathname === '/api/overlay/what-if')
      return json(res, await readWhatIf(stores.assignment, q('down').split(',').filter(Boolean), 200));
    json(res, await readWhy(stores.assignment, q('from'), q('to'), q('port')));
  } catch (raw) {
    const err = storeError(raw);
    if (!(err instanceof MeshError)) throw raw;
    send(res, 400, 'application/json', JSON.stringify({ error: err.message, code: err.code }));
  }
}

/** `mesh node show N --at T` (?node&at) or `mesh diff [N] --from F --to T` (?node&from&to), as assignment's reader; a refusal is a 400 saying why. */
async function declared({ stores }: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const q = (k: string) => url.searchParams.get(k) || '';
  try {
    if (url.pathname === '/api/declared')
      return json(res, await readNodeAt(stores.assignment, q('node'), q('at') || 'now'));
    json(res, await readDiff(stores.assignment, q('node') || undefined, q('from'), q('to') || 'now'));
  } catch (raw) {
    const err = storeError(raw);
    if (!(err instanceof MeshError)) throw raw;
    send(res, 400, 'application/json', JSON.stringify({ error: err.message, code: err.code }));
  }
}

/** Every rollout (assignment.rollout_status), and the one `mesh rollout status [--rollout ID]` prints, with its nodes. */
async function rollouts({ stores }: Ctx, url: URL, res: ServerResponse): Promise<void> {
  const id = url.searchParams.get('id') || undefined;
  if (id !== undefined && !/^[1-9]\d{0,17}$/.test(id))
    return send(
      res,
      400,
      'application/json',
      JSON.stringify({ error: `rollout ${JSON.stringify(id)} is not a rollout's number: pick one from the list.` }),
    );
  const [list, shown] = await Promise.all([
    readRollouts(stores.assignment),
    readRolloutStatus(stores.assignment, id === undefined ? undefined : Number(id)),
  ]);
  json(res, { rollouts: list, shown });
}

/**
 * The fleet's events as a server-sent stream, ended when SESSION is. BARE (the fleet page's): no rows, only
 * `change` when any row changed, so a page that shows a hundred rows of a large fleet is never sent the fleet.
 */
function events(
  { stores, fleet, log, streams }: Ctx,
  req: IncomingMessage,
  res: ServerResponse,
  session: Session,
  bare = false,
): void {
  res.writeHead(200, { ...HEADERS, 'content-type': 'text/event-stream; charset=utf-8', connection: 'keep-alive' });
  streams.add(res);
  const push = (e: FleetEvent) => {
    if (!bare) res.write(`event: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`);
    else if (e.kind === 'change') res.write('event: change\ndata: {}\n\n');
  };
  const off = fleet.subscribe(push);
  // A comment now and then keeps proxies and idle timers from closing a quiet stream.
  const beat = setInterval(() => res.write(': still here\n\n'), 25_000);
  // The session was judged when the stream opened; it must not outlive the
  // session. At its expiry the database judges it again (its clock, not
  // ours), and a closed one ends the stream with a word the page acts on.
  let expiry: NodeJS.Timeout | undefined;
  const watch = (ms: number) => {
    expiry = setTimeout(
      () => {
        sessionLeft(stores.inventory, session.cookie).then(
          (left) => {
            if (res.writableEnded) return;
            if (left !== null) return watch(left + 5);
            res.write('event: expired\ndata: {}\n\n');
            res.end();
          },
          (err) => {
            // Not known to be open is closed: the page's reconnect is judged afresh.
            log(`console: could not judge a session (${(err as Error).message}); its stream is ended`);
            res.end();
          },
        );
      },
      Math.min(ms, LONGEST_TIMER_MS),
    );
  };
  watch(session.leftMs + 5);
  const done = () => {
    off();
    clearInterval(beat);
    clearTimeout(expiry);
    streams.delete(res);
  };
  req.on('close', done);
  res.on('close', done);
}

interface Session {
  cookie: string;
  leftMs: number;
}

/**
 * The request's session cookie when it has the form openSession makes (32
 * random bytes, base64url), else null: a cookie of any other form is no
 * session, and costs no query.
 */
export function cookieOf(req: Pick<IncomingMessage, 'headers'>): string | null {
  const c = (req.headers.cookie ?? '')
    .split(';')
    .map((p) => p.trim())
    .find((p) => p.startsWith(`${COOKIE}=`));
  const cookie = c?.slice(COOKIE.length + 1);
  return cookie && /^[A-Za-z0-9_-]{43}$/.test(cookie) ? cookie : null;
}

/** The request's session, while it is open: its cookie and how long it has left. */
export async function sessionOf(sql: Sql, req: Pick<IncomingMessage, 'headers'>): Promise<Session | null> {
  const cookie = cookieOf(req);
  if (!cookie) return null;
  const leftMs = await sessionLeft(sql, cookie);
  return leftMs === null ? null : { cookie, leftMs };
}

/** A sign-in form's body: a few hundred bytes at most, refused beyond. */
async function smallBody(req: IncomingMessage, max = 1024): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > max) throw refuse('MSHX1', `A sign-in form of more than ${max} bytes is refused`);
  }
  return body;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: string | Buffer,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...HEADERS, 'content-type': type, ...extra });
  res.end(body);
}

function json(res: ServerResponse, v: unknown): void {
  send(
    res,
    200,
    'application/json',
    JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? Number(x) : x)),
  );
}
