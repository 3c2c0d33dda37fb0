// The few A2A wire shapes the client reads, in both dialects, turned into one small model. Copied in
// spirit (not imported) from the server's src/a2a/wire.ts, which maps the other way and changes on its own:
//   1.0: states TASK_STATE_*, roles ROLE_*, parts {text} | {data} | {url} | {raw}; SendMessage answers
//        {task} or {message}; stream events {task} | {message} | {statusUpdate} | {artifactUpdate}.
//   0.3: kebab-case states, parts with `kind`; results carry `kind`: task | message | status-update |
//        artifact-update (with `final` on status updates).
import type { ClientVersion } from './card.ts';
import { utf8Length } from '../../protocol/utf8.ts';

/** The CKP interop states (profile §6.3), whatever the dialect spelled. */
export type RemoteState = 'submitted' | 'working' | 'input_required' | 'auth_required' | 'completed' | 'failed' | 'canceled' | 'rejected' | 'unknown';

/** States after which nothing more happens without the caller: the end of following a task. */
export const STOP_STATES: ReadonlySet<RemoteState> = new Set(['completed', 'failed', 'canceled', 'rejected', 'input_required', 'auth_required']);

export interface RemoteArtifact {
  artifactId: string;
  name?: string;
  text: string;
  /** What its parts carried: the text as UTF-8 plus raw content (named only in `text`); the result cap counts it. */
  bytes: number;
}

/** What the client knows of a remote task (or of a direct message reply, `taskId` then absent). */
export interface RemoteOutcome {
  taskId?: string;
  contextId?: string;
  state: RemoteState;
  artifacts: RemoteArtifact[];
  /** The status message's text (why it failed, what input is required), or a direct reply's text. */
  message?: string;
}

type Obj = Record<string, unknown>;
const obj = (x: unknown): Obj | undefined => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Obj) : undefined);
const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

export function parseState(x: unknown): RemoteState {
  if (typeof x !== 'string') return 'unknown';
  const s = x.replace(/^TASK_STATE_/, '').toLowerCase().replace(/-/g, '_');
  return (['submitted', 'working', 'input_required', 'auth_required', 'completed', 'failed', 'canceled', 'rejected'] as const).find((k) => k === s) ?? 'unknown';
}

/** A part as text: text as is, data as JSON, a file by its URL; raw bytes named only (a text reply is wanted). */
function partText(p: unknown): string {
  const o = obj(p) ?? {};
  if (typeof o.text === 'string') return o.text;
  if ('data' in o) return JSON.stringify(o.data);
  if (typeof o.url === 'string') return `[file: ${o.url}]`;
  const f = obj(o.file);
  if (f && typeof f.uri === 'string') return `[file: ${f.uri}]`;
  return '[binary content omitted]';
}

export const partsText = (parts: unknown): string => (Array.isArray(parts) ? parts.map(partText).join('\n') : '');

/** The text parts of a message (either dialect). */
export const messageText = (m: unknown): string | undefined => (obj(m) ? partsText(obj(m)!.parts) : undefined);

/** Decoded size of a part's raw content: 1.0 `raw`, 0.3 `file.bytes` (both base64). */
function rawBytes(p: unknown): number {
  const o = obj(p) ?? {};
  const b64 = str(o.raw) ?? str(obj(o.file)?.bytes);
  return b64 ? Math.floor((b64.length * 3) / 4) : 0;
}

function artifactOf(a: unknown): RemoteArtifact | undefined {
  const o = obj(a);
  if (!o) return undefined;
  const text = partsText(o.parts);
  const raw = Array.isArray(o.parts) ? o.parts.reduce((n: number, p) => n + rawBytes(p), 0) : 0;
  return { artifactId: str(o.artifactId) ?? '', name: str(o.name), text, bytes: utf8Length(text) + raw };
}

export function outcomeOfTask(t: Obj): RemoteOutcome {
  const status = obj(t.status);
  const message = status ? messageText(status.message) : undefined;
  const artifacts = Array.isArray(t.artifacts) ? t.artifacts.map(artifactOf).filter((a): a is RemoteArtifact => !!a) : [];
  return { taskId: str(t.id), contextId: str(t.contextId), state: parseState(status?.state), artifacts, ...(message ? { message } : {}) };
}

export type StreamEvent =
  | { kind: 'task'; outcome: RemoteOutcome }
  | { kind: 'message'; outcome: RemoteOutcome }
  | { kind: 'status'; taskId?: string; contextId?: string; state: RemoteState; message?: string; final: boolean }
  | { kind: 'artifact'; taskId?: string; artifact: RemoteArtifact; append: boolean };

const directReply = (m: Obj): RemoteOutcome => ({ contextId: str(m.contextId), state: 'completed', artifacts: [], message: partsText(m.parts) });

/**
 * One JSON-RPC result of SendMessage / GetTask / a stream event, either dialect; undefined when it is no
 * shape this client knows (the caller reports a protocol error).
 */
export function parseResult(result: unknown, v: ClientVersion): StreamEvent | undefined {
  const r = obj(result);
  if (!r) return undefined;
  if (v === '1.0') {
    if (obj(r.task)) return { kind: 'task', outcome: outcomeOfTask(obj(r.task)!) };
    if (obj(r.message)) return { kind: 'message', outcome: directReply(obj(r.message)!) };
    const su = obj(r.statusUpdate);
    if (su) return statusEvent(su, false);
    const au = obj(r.artifactUpdate);
    if (au) return artifactEvent(au);
    // GetTask / CancelTask answer a bare Task.
    if (typeof r.id === 'string' && obj(r.status)) return { kind: 'task', outcome: outcomeOfTask(r) };
    return undefined;
  }
  switch (r.kind) {
    case 'task':
      return { kind: 'task', outcome: outcomeOfTask(r) };
    case 'message':
      return { kind: 'message', outcome: directReply(r) };
    case 'status-update':
      return statusEvent(r, r.final === true);
    case 'artifact-update':
      return artifactEvent(r);
  }
  if (typeof r.id === 'string' && obj(r.status)) return { kind: 'task', outcome: outcomeOfTask(r) };
  return undefined;
}

function statusEvent(su: Obj, final: boolean): StreamEvent {
  const status = obj(su.status);
  const message = status ? messageText(status.message) : undefined;
  return { kind: 'status', taskId: str(su.taskId), contextId: str(su.contextId), state: parseState(status?.state), final, ...(message ? { message } : {}) };
}

function artifactEvent(au: Obj): StreamEvent | undefined {
  const artifact = artifactOf(au.artifact);
  return artifact ? { kind: 'artifact', taskId: str(au.taskId), artifact, append: au.append === true } : undefined;
}

/** The user message of a send, in the dialect's spelling. */
export function userMessage(v: ClientVersion, text: string, messageId: string, contextId?: string): Obj {
  return v === '1.0'
    ? { messageId, role: 'ROLE_USER', parts: [{ text }], ...(contextId ? { contextId } : {}) }
    : { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text }], ...(contextId ? { contextId } : {}) };
}

export const METHODS = {
  '1.0': { send: 'SendMessage', stream: 'SendStreamingMessage', get: 'GetTask', cancel: 'CancelTask' },
  '0.3': { send: 'message/send', stream: 'message/stream', get: 'tasks/get', cancel: 'tasks/cancel' },
} as const;

/** The reply text of an outcome: its artifacts' text, else its status message. */
export function outcomeText(o: RemoteOutcome): string {
  const parts = o.artifacts.map((a) => a.text).filter((t) => t !== '');
  return parts.length > 0 ? parts.join('\n') : (o.message ?? '');
}
