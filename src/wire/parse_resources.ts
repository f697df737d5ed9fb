// The one check of what a resource may be, used by `mesh module add` (refuse
// early, with the field named) and by the host on every declaration (refuse
// before anything is applied). Unknown fields are refused, not ignored: a
// field one end knows and the other drops is how two ends come to disagree.
import { posix } from 'node:path';
import { isIP } from 'node:net';
import type { ModuleEntry, Resource } from './resources.js';
import { NODE_NAME, isNodeName, isHostPort, isFingerprint, isPort } from './names.js';
import { isObject, WireError } from './envelope.js';

type Check = (v: unknown, at: string) => unknown;

/** An agent version as reports carry it (inventory.record_agent_version checks the same). */
export const AGENT_VERSION = /^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$/;

/**
 * Which rule a resource broke. The host reports any of them as malformed
 * (MSHN0); a module file is refused with the flaw's own catalogue code
 * (src/catalogue/module_refusal.ts), so the operator's fix is in the code.
 */
export type Flaw = 'kind' | 'composed' | 'field' | 'missing' | 'value' | 'path' | 'id' | 'twice' | 'unit';
// `fix`, not `remedy`: a WireError is a MeshError, whose remedy is always set (the register's when none is given).
export type ResourceFault = WireError & { flaw: Flaw; fix?: string };

const bad = (at: string, what: string, flaw: Flaw = 'value', remedy?: string): ResourceFault =>
  Object.assign(new WireError('malformed', remedy ? `${at} ${what}: ${remedy}` : `${at} ${what}`), {
    flaw,
    ...(remedy ? { fix: remedy } : {}),
  });

const str =
  (max = 4096): Check =>
  (v, at) => {
    if (typeof v !== 'string' || v.length > max) throw bad(at, `must be a string of at most ${max} characters`);
    return v;
  };
const absPath: Check = (v, at) => {
  str(4096)(v, at);
  const p = v as string;
  if (
    !p.startsWith('/') ||
    posix.normalize(p) !== p ||
    p.includes('\0') ||
    p.split('/').includes('..') ||
    p.length < 2 ||
    p.endsWith('/')
  ) {
    throw bad(at, `must be an absolute, normalised path without "..", not ${JSON.stringify(p).slice(0, 80)}`, 'path');
  }
  return p;
};
const name: Check = (v, at) => {
  if (typeof v !== 'string' || !NODE_NAME.test(v)) throw bad(at, 'must be a lower-case name ([a-z][a-z0-9-]{0,62})');
  return v;
};
const mode: Check = (v, at) => {
  if (typeof v !== 'string' || !/^0?[0-7]{3}$/.test(v)) throw bad(at, 'must be an octal mode such as "0644"');
  return v;
};
const bool: Check = (v, at) => {
  if (typeof v !== 'boolean') throw bad(at, 'must be true or false');
  return v;
};
const base64: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) throw bad(at, 'must be base64');
  return v;
};
const key: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(v)) throw bad(at, 'must be a 32-byte key in base64');
  return v;
};
const cidr: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[0-9a-fA-F.:]+\/\d{1,3}$/.test(v))
    throw bad(at, 'must be an address with a prefix, e.g. 10.99.0.2/24');
  return v;
};
const endpoint: Check = (v, at) => {
  if (!isHostPort(v)) throw bad(at, 'must be HOST:PORT');
  return v;
};
const fingerprint: Check = (v, at) => {
  if (!isFingerprint(v)) throw bad(at, 'must be a SHA-256 fingerprint: 32 upper-case hex pairs joined by ":"');
  return v;
};
const port: Check = (v, at) => {
  if (!isPort(v)) throw bad(at, 'must be a port number');
  return v;
};
const seconds: Check = (v, at) => {
  if (!Number.isInteger(v) || (v as number) < 0 || (v as number) > 3600) throw bad(at, 'must be whole seconds');
  return v;
};
const arr =
  (item: Check, max = 1024): Check =>
  (v, at) => {
    if (!Array.isArray(v) || v.length > max) throw bad(at, `must be a list of at most ${max}`);
    return v.map((x, i) => item(x, `${at}[${i}]`));
  };
const imageRef: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._\-/:@]{0,254}$/.test(v))
    throw bad(at, 'must be an image reference');
  return v;
};
const network: Check = (v, at) => {
  if (typeof v !== 'string' || !/^(none|ns:\/run\/netns\/[A-Za-z0-9_.-]+)$/.test(v))
    throw bad(at, 'must be "none" or "ns:/run/netns/NAME"');
  return v;
};

// The firewall's fields become nft syntax on the host: each is checked to a
// form that cannot carry any (no quote, brace, semicolon or newline), so a
// name or comment can never end the rule it sits in and start another.
const proto: Check = (v, at) => {
  if (v !== 'tcp' && v !== 'udp') throw bad(at, 'must be "tcp" or "udp"');
  return v;
};
const why: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9 ._:,/()+=@-]{0,127}$/.test(v)) {
    throw bad(
      at,
      'must be at most 128 letters, digits, spaces and ._:,/()+=@- (no quotes, braces, semicolons or newlines)',
    );
  }
  return v;
};
const sourceCidr: Check = (v, at) => {
  const m = typeof v === 'string' ? /^([0-9a-fA-F.:]{2,39})\/(\d{1,3})$/.exec(v) : null;
  const family = m ? isIP(m[1]!) : 0;
  if (!m || !family || Number(m[2]) > (family === 4 ? 32 : 128))
    throw bad(at, 'must be an address with a prefix, e.g. 10.99.0.2/32');
  return v;
};
const ifname: Check = (v, at) => {
  if (typeof v !== 'string' || !/^[a-z][a-z0-9]{0,14}$/.test(v)) throw bad(at, 'must be an interface name');
  return v;
};
/** "any", "site:NAME" or "module:NAME": where a module's served port may be reached from. */
const origin: Check = (v, at) => {
  if (typeof v !== 'string' || !(v === 'any' || (/^(site|module):/.test(v) && isNodeName(v.slice(v.indexOf(':') + 1)))))
    throw bad(at, 'must be "any", "site:NAME" or "module:NAME"');
  return v;
};
/** A port range's end must not come before its start. */
const ranged =
  (c: Check): Check =>
  (v, at) => {
    const r = c(v, at) as { port: number; to?: number };
    if (r.to !== undefined && r.to < r.port) throw bad(`${at}.to`, `must be at least port (${r.port})`);
    return r;
  };

function shape(fields: Record<string, [Check, boolean]>): Check {
  return (v, at) => {
    if (!isObject(v)) throw bad(at, 'must be an object');
    for (const k of Object.keys(v)) if (!(k in fields)) throw bad(`${at}.${k}`, 'is not a field of this kind', 'field');
    const out: Record<string, unknown> = {};
    for (const [k, [check, required]] of Object.entries(fields)) {
      if (v[k] === undefined) {
        if (required) throw bad(`${at}.${k}`, 'is missing', 'missing');
        continue;
      }
      out[k] = check(v[k], `${at}.${k}`);
    }
    return out;
  };
}

/**
 * The first-node bundle's own units are mesh-<name>.service for these names
 * (bundle/control.ts, postgres.ts, rabbitmq.ts, install.ts). A declared service
 * runs as mesh-<name>.service too, so one of these names would overwrite the
 * control plane's own unit.
 */
export const BUNDLE_UNITS = ['host', 'serve', 'postgres', 'rabbitmq', 'nftables', 'console'] as const;
const serviceName: Check = (v, at) => {
  name(v, at);
  if ((BUNDLE_UNITS as readonly string[]).includes(v as string))
    throw bad(
      at,
      `must not be ${JSON.stringify(v)}: mesh-${v as string}.service is the bundle's own unit; choose another name`,
      'unit',
    );
  return v;
};

// A hub peers with every node of its group, and a port may admit every node of
// the fleet: such lists are as long as the fleet, bounded first in bytes by the
// declaration's own limit (8 MiB holds 524,288 of the shortest item, an address).
const FLEET = 1 << 19;
// A hub's peer for another hub routes that hub's group: its /32 and each /20
// block the group holds, at most every block of the widest overlay (a /8,
// overlay.settings.network): 4,096.
const PEER_ROUTES = 1 + 4096;

const common = { id: [str(300), true], kind: [str(20), true], restartOn: [arr(str(4096), 256), false] } as Record<
  string,
  [Check, boolean]
>;

const KINDS: Record<string, Check> = {
  file: shape({
    ...common,
    path: [absPath, true],
    content: [base64, true],
    mode: [mode, true],
    owner: [name, false],
    createOnce: [bool, false],
  }),
  directory: shape({ ...common, path: [absPath, true], mode: [mode, true] }),
  service: shape({
    ...common,
    name: [serviceName, true],
    exec: [arr(str(4096), 256), true],
    workdir: [absPath, false],
  }),
  container: shape({
    ...common,
    name: [name, true],
    image: [imageRef, true],
    command: [arr(str(4096), 256), false],
    envFiles: [arr(absPath, 64), false],
    mounts: [arr(shape({ source: [absPath, true], target: [absPath, true], readOnly: [bool, false] }), 64), false],
    network: [network, false],
  }),
  wireguard: shape({
    ...common,
    name: [
      (v, at) => {
        if (typeof v !== 'string' || !/^[a-z][a-z0-9]{0,14}$/.test(v)) throw bad(at, 'must be an interface name');
        return v;
      },
      true,
    ],
    address: [cidr, true],
    listenPort: [port, false],
    hub: [bool, false],
    peers: [
      arr(
        shape({
          publicKey: [key, true],
          endpoint: [endpoint, false],
          allowedIps: [arr(cidr, PEER_ROUTES), true],
          keepalive: [seconds, false],
        }),
        FLEET,
      ),
      true,
    ],
  }),
  secret: shape({ ...common, path: [absPath, true], mode: [mode, true], sealed: [base64, true] }),
  agent: shape({
    ...common,
    version: [
      (v, at) => {
        if (typeof v !== 'string' || !AGENT_VERSION.test(v)) throw bad(at, 'must be a version: MAJOR.MINOR.PATCH');
        return v;
      },
      true,
    ],
    sha256: [
      (v, at) => {
        if (typeof v !== 'string' || !/^[0-9a-f]{64}$/.test(v)) throw bad(at, 'must be a sha256 in lower-case hex');
        return v;
      },
      true,
    ],
    size: [
      (v, at) => {
        if (!Number.isSafeInteger(v) || (v as number) < 1 || (v as number) > 1 << 30)
          throw bad(at, 'must be a size in bytes from 1 to 1 GiB');
        return v;
      },
      true,
    ],
  }),
  // A Debian package at a version or above: names and versions as dpkg writes them, so neither reads as an apt option.
  package: shape({
    ...common,
    name: [
      (v, at) => {
        if (typeof v !== 'string' || !/^[a-z0-9][a-z0-9+.-]{0,127}$/.test(v))
          throw bad(at, 'must be a Debian package name');
        return v;
      },
      true,
    ],
    version: [
      (v, at) => {
        if (typeof v !== 'string' || !/^([0-9]{1,9}:)?[0-9][A-Za-z0-9.+~:-]{0,199}$/.test(v) || v.endsWith('-'))
          throw bad(at, 'must be a Debian version ([EPOCH:]UPSTREAM[-REVISION])');
        return v;
      },
      true,
    ],
  }),
  // Never empty: a list with no broker would leave the node nothing to dial.
  brokers: (v, at) => {
    const r = shape({
      ...common,
      brokers: [arr(shape({ address: [endpoint, true], fingerprint: [fingerprint, true] }), 64), true],
    })(v, at) as { brokers: unknown[] };
    if (r.brokers.length === 0) throw bad(`${at}.brokers`, 'must name at least one broker');
    return r;
  },
  firewall: shape({
    ...common,
    name: [
      (v, at) => {
        if (v !== 'mesh') throw bad(at, 'must be "mesh" (the one table mesh owns)');
        return v;
      },
      true,
    ],
    rules: [
      arr(
        ranged(
          shape({
            proto: [proto, true],
            port: [port, true],
            to: [port, false],
            from: [arr(sourceCidr, FLEET), false],
            via: [ifname, false],
            why: [why, true],
          }),
        ),
        4096,
      ),
      true,
    ],
    forward: [ifname, false],
  }),
};

// Only in module files: SQL turns a module's served ports into firewall rules
// on the nodes it runs on, so a declaration never carries one.
const MODULE_ONLY: Record<string, Check> = {
  opening: ranged(
    shape({
      ...common,
      name: [name, true],
      proto: [proto, true],
      port: [port, true],
      to: [port, false],
      from: [origin, true],
      why: [why, false],
    }),
  ),
};

function idOf(r: Record<string, unknown>): string {
  // One list a node: its id is its kind alone.
  if (r.kind === 'brokers' || r.kind === 'agent') return r.kind;
  return `${r.kind}:${(r.path ?? r.name) as string}`;
}

function parseOne(v: unknown, at: string, kinds: Record<string, Check>): Record<string, unknown> {
  if (!isObject(v) || typeof v.kind !== 'string' || !Object.hasOwn(kinds, v.kind)) {
    throw bad(`${at}.kind`, `must be one of ${Object.keys(kinds).join(', ')}`, 'kind');
  }
  const r = kinds[v.kind]!(v, at) as Record<string, unknown>;
  if (r.id !== idOf(r)) throw bad(`${at}.id`, `must be ${JSON.stringify(idOf(r))} (kind:path or kind:name)`, 'id');
  return r;
}

export function parseResource(v: unknown, at: string): Resource {
  return parseOne(v, at, KINDS) as unknown as Resource;
}

export function parseResources(v: unknown, at = 'resources'): Resource[] {
  return parseList(v, at, KINDS) as unknown as Resource[];
}

/** A module file's list: every resource kind, and the ports the module serves (`opening`). */
export function parseModuleEntries(v: unknown, at = 'resources'): ModuleEntry[] {
  if (Array.isArray(v)) {
    v.forEach((r, i) => {
      if (isObject(r) && typeof r.kind === 'string' && Object.hasOwn(COMPOSED, r.kind))
        throw bad(`${at}[${i}].kind`, COMPOSED[r.kind]![0], 'composed', COMPOSED[r.kind]![1]);
    });
  }
  return parseList(v, at, MODULE_KINDS) as unknown as ModuleEntry[];
}

// The mesh composes these for each node (catalogue.put_module refuses them
// too, MSH31): a module carrying one would be a second firewall beside the
// composed one, or a tunnel outside the graph.
const COMPOSED: Record<string, [string, string]> = {
  wireguard: [
    'is composed by the mesh from the overlay graph',
    'take it out of the module (mesh overlay shows the graph)',
  ],
  firewall: [
    'is composed by the mesh from the openings of the modules a node runs',
    'declare an opening instead ({ kind: opening, port, from })',
  ],
  secret: [
    'is sealed by the mesh for each holder',
    'take it out and store the value with mesh secret make|accept NAME',
  ],
  agent: [
    'is composed by the mesh from the agent version the fleet must run',
    'take it out of the module and say the version with mesh agent upgrade --to VERSION',
  ],
  brokers: [
    'is composed by the mesh from the brokers it knows',
    'take it out of the module and add a broker with mesh broker add HOST:PORT --fingerprint FP',
  ],
};
const { wireguard: _w, firewall: _f, secret: _s, brokers: _b, agent: _a, ...PUT } = KINDS;
const MODULE_KINDS: Record<string, Check> = { ...PUT, ...MODULE_ONLY };

function parseList(v: unknown, at: string, kinds: Record<string, Check>): Record<string, unknown>[] {
  if (!Array.isArray(v) || v.length > 10_000) throw bad(at, 'must be a list of at most 10000 resources');
  const out = v.map((r, i) => parseOne(r, `${at}[${i}]`, kinds));
  const seen = new Set<string>();
  for (const r of out) {
    if (seen.has(r.id as string)) throw bad(at, `declares ${r.id} twice`, 'twice');
    seen.add(r.id as string);
  }
  return out;
}

/** Fill in the id from kind and path/name: what an operator writes in a module file. */
export function withIds(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return v.map((r) => (isObject(r) && r.id === undefined && typeof r.kind === 'string' ? { ...r, id: idOf(r) } : r));
}
