// What travels about a build (B1), one definition for both ends: the control
// plane writes requests and reads news, the builder the other way round.
// A request carries everything the builder needs (where the source is, what
// to build), so a builder holds its broker credential and nothing else.
// News comes back on one routing key, build.result, so the control queue needs
// no new binding: progress lines while building, then the one answer.
import { isObject, parseJson, WireError, LIMITS } from './envelope.js';
import { NODE_NAME } from './names.js';

export const BUILD_RESULT = 'build.result';

/** A ref, path piece or URL that starts with '-' would be read by git as an option. */
export const REF = /^(?!-)[A-Za-z0-9._/-]{1,200}$/;
export const SOURCE_PATH = /^(?!\/)(?!.*(^|\/)\.\.(\/|$))[A-Za-z0-9._/-]{1,500}$/;
export const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
export const DIGEST = /^sha256:[0-9a-f]{64}$/;
export const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:-]{0,200}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function gitUrl(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 2000 && !v.startsWith('-') && !/[\0\n\r]/.test(v);
}

export interface BuildRequest {
  v: 1;
  /** Also the message's correlationId. */
  id: string;
  module: string;
  git: string;
  /** Folder inside the repository holding the Containerfile. */
  path: string;
  /** What to build. */
  ref: string;
  /** The ref the module follows: the builder reports where it points, for "behind". */
  track: string;
}

export type BuildNews =
  | { v: 1; id: string; kind: 'progress'; line: string }
  | {
      v: 1;
      id: string;
      kind: 'result';
      ok: boolean;
      commit?: string;
      head?: string;
      headSeenAt?: string;
      image?: string;
      digest?: string;
      error?: string;
      log?: string;
    };

export type BuildResult = Extract<BuildNews, { kind: 'result' }>;

export const writeMessage = (m: BuildRequest | BuildNews): Buffer => Buffer.from(JSON.stringify(m));

const bad = (what: string, why: string) => new WireError('malformed', `${what} ${why}`);

export function readBuildRequest(bytes: Uint8Array): BuildRequest {
  if (bytes.length > LIMITS.message)
    throw new WireError('too-large', `build request is ${bytes.length} bytes, over the limit.`);
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'build request');
  if (!isObject(v) || v.v !== 1) throw bad('build request', 'is not {v:1, ...}');
  if (typeof v.id !== 'string' || !UUID.test(v.id)) throw bad('build request', 'id must be a uuid');
  if (typeof v.module !== 'string' || !NODE_NAME.test(v.module))
    throw bad('build request', 'module must be a module name');
  if (!gitUrl(v.git)) throw bad('build request', 'git must be a URL or path that does not start with "-"');
  if (typeof v.path !== 'string' || !SOURCE_PATH.test(v.path))
    throw bad('build request', 'path must be relative, inside the repository');
  if (typeof v.ref !== 'string' || !REF.test(v.ref)) throw bad('build request', 'ref must be a branch, tag or commit');
  if (typeof v.track !== 'string' || !REF.test(v.track)) throw bad('build request', 'track must be a branch or tag');
  return { v: 1, id: v.id, module: v.module, git: v.git, path: v.path, ref: v.ref, track: v.track };
}

const optional = (v: unknown, re: RegExp) => v === undefined || (typeof v === 'string' && re.test(v));
const text = (v: unknown, max: number) => v === undefined || (typeof v === 'string' && v.length <= max);

export function readBuildNews(bytes: Uint8Array): BuildNews {
  if (bytes.length > LIMITS.message)
    throw new WireError('too-large', `build news is ${bytes.length} bytes, over the limit.`);
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'build news');
  if (!isObject(v) || v.v !== 1) throw bad('build news', 'is not {v:1, ...}');
  if (typeof v.id !== 'string' || !UUID.test(v.id)) throw bad('build news', 'id must be a uuid');
  if (v.kind === 'progress') {
    if (typeof v.line !== 'string' || v.line.length > 2000)
      throw bad('build progress', 'line must be text of at most 2000 characters');
    return { v: 1, id: v.id, kind: 'progress', line: v.line };
  }
  if (v.kind !== 'result') throw bad('build news', 'kind must be progress or result');
  if (typeof v.ok !== 'boolean') throw bad('build result', 'ok must be true or false');
  if (!optional(v.commit, COMMIT) || !optional(v.head, COMMIT))
    throw bad('build result', 'commit and head must be commit ids');
  if (v.headSeenAt !== undefined && (typeof v.headSeenAt !== 'string' || Number.isNaN(Date.parse(v.headSeenAt))))
    throw bad('build result', 'headSeenAt must be a time');
  if (!optional(v.image, IMAGE) || !optional(v.digest, DIGEST))
    throw bad('build result', 'image and digest must be an image repository and sha256:HEX');
  if (!text(v.error, 2000) || !text(v.log, 16000)) throw bad('build result', 'error and log are too long');
  if (v.ok && (!v.commit || !v.image || !v.digest))
    throw bad('build result', 'a success must name commit, image and digest');
  if (!v.ok && typeof v.error !== 'string') throw bad('build result', 'a failure must say why (error)');
  return {
    v: 1,
    id: v.id,
    kind: 'result',
    ok: v.ok,
    commit: v.commit as string | undefined,
    head: v.head as string | undefined,
    headSeenAt: v.headSeenAt as string | undefined,
    image: v.image as string | undefined,
    digest: v.digest as string | undefined,
    error: v.error as string | undefined,
    log: v.log as string | undefined,
  };
}
