// The A2A wire shapes this runtime speaks (docs/a2a.md): A2A 1.0 JSON (ProtoJSON names: `TASK_STATE_*`,
// `ROLE_*`, parts without a `kind`) and A2A 0.3 JSON (`kind` discriminators, lower-case states), chosen per
// request by the A2A-Version header. The task model inside is the CKP interop model (CKP-A2A profile §6.3, §7).
import { TERMINAL_STATES, type A2aTask, type TaskArtifact, type TaskState, type TaskMessage, type TaskPart } from './types.ts';

export type WireVersion = '1.0' | '0.3';

const MAX_ID_CHARS = 200;
/** Parts of one message and the length of a media type: bounded like ids, so nothing a caller sends is kept unbounded. */
const MAX_PARTS = 64;
const MAX_MEDIA_TYPE_CHARS = 255;

/** CKP interop state → A2A 1.0 TaskState (1:1, profile §6.3). */
const STATE_1_0: Record<TaskState, string> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  input_required: 'TASK_STATE_INPUT_REQUIRED',
  auth_required: 'TASK_STATE_AUTH_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
  rejected: 'TASK_STATE_REJECTED',
};
/** A2A 0.3 spells the same states in kebab case. */
const STATE_0_3: Record<TaskState, string> = {
  submitted: 'submitted',
  working: 'working',
  input_required: 'input-required',
  auth_required: 'auth-required',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
  rejected: 'rejected',
};

export const TASK_STATES = Object.keys(STATE_1_0) as TaskState[];

export function wireState(s: TaskState, v: WireVersion): string {
  return v === '1.0' ? STATE_1_0[s] : STATE_0_3[s];
}

/** A state filter as a client sends it (either spelling, or the CKP name); undefined when unknown. */
export function parseState(x: unknown): TaskState | undefined {
  if (typeof x !== 'string') return undefined;
  for (const s of TASK_STATES) if (x === s || x === STATE_1_0[s] || x === STATE_0_3[s]) return s;
  return undefined;
}

function wirePart(p: TaskPart, v: WireVersion): Record<string, unknown> {
  const meta = p.mediaType ? (v === '1.0' ? { mediaType: p.mediaType } : {}) : {};
  if (p.type === 'text') return v === '1.0' ? { text: p.text, ...meta } : { kind: 'text', text: p.text };
  if (p.type === 'data') return v === '1.0' ? { data: p.data, ...meta } : { kind: 'data', data: p.data };
  if (p.type === 'url') return v === '1.0' ? { url: p.url, ...meta } : { kind: 'file', file: { uri: p.url, ...(p.mediaType ? { mimeType: p.mediaType } : {}) } };
  return v === '1.0' ? { raw: p.raw, ...meta } : { kind: 'file', file: { bytes: p.raw, ...(p.mediaType ? { mimeType: p.mediaType } : {}) } };
}

export function wireMessage(m: TaskMessage, v: WireVersion, taskId?: string): Record<string, unknown> {
  const role = v === '1.0' ? (m.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT') : m.role;
  return {
    ...(v === '0.3' ? { kind: 'message' } : {}),
    messageId: m.messageId,
    ...(m.contextId ? { contextId: m.contextId } : {}),
    ...(taskId ? { taskId } : {}),
    role,
    parts: m.parts.map((p) => wirePart(p, v)),
  };
}

/** A task's TaskStatus: its state, the short status message if any, when it last changed. */
export function wireStatus(t: A2aTask, v: WireVersion): Record<string, unknown> {
  return {
    state: wireState(t.state, v),
    ...(t.statusMessage ? { message: wireMessage({ role: 'agent', messageId: `${t.id}-status`, parts: [{ type: 'text', text: t.statusMessage }] }, v, t.id) } : {}),
    timestamp: new Date(t.updatedAt).toISOString(),
  };
}

export function wireArtifact(a: TaskArtifact, v: WireVersion): Record<string, unknown> {
  return { artifactId: a.artifactId, ...(a.name ? { name: a.name } : {}), parts: a.parts.map((p) => wirePart(p, v)) };
}

/** A task as an A2A client reads it; `historyLength` 0 leaves the history out (A2A 1.0 GetTask). */
export function wireTask(t: A2aTask, v: WireVersion, o: { historyLength?: number; artifacts?: boolean } = {}): Record<string, unknown> {
  const history = o.historyLength === undefined ? t.history : o.historyLength <= 0 ? [] : t.history.slice(-o.historyLength);
  const out: Record<string, unknown> = { ...(v === '0.3' ? { kind: 'task' } : {}), id: t.id, contextId: t.contextId, status: wireStatus(t, v) };
  if (o.artifacts !== false && t.artifacts.length > 0) out.artifacts = t.artifacts.map((a) => wireArtifact(a, v));
  if (history.length > 0) out.history = history.map((m) => wireMessage(m, v, t.id));
  return out;
}

/** Where a stream of a task's updates ends (A2A 1.0 §3.1.2, §11.7): a terminal or an interrupted state. */
export const streamEndsAt = (s: TaskState): boolean => TERMINAL_STATES.has(s) || s === 'input_required' || s === 'auth_required';

/**
 * One stream event (A2A 1.0 StreamResponse: `{task}` / `{statusUpdate}` / `{artifactUpdate}`; 0.3: the object with
 * its `kind`, and `final` on the status update that ends the stream). No `artifact` and no `status`: the snapshot
 * every stream starts with (1.0 §3.1.6: the Task first).
 */
export function wireStreamEvent(t: A2aTask, v: WireVersion, e: { snapshot?: boolean; artifact?: TaskArtifact }): Record<string, unknown> {
  if (e.snapshot) return v === '1.0' ? { task: wireTask(t, v) } : wireTask(t, v);
  const ids = { taskId: t.id, contextId: t.contextId };
  if (e.artifact) {
    // The whole artifact in one event: this runtime does not produce partial artifacts.
    const a = { ...ids, artifact: wireArtifact(e.artifact, v), lastChunk: true };
    return v === '1.0' ? { artifactUpdate: a } : { kind: 'artifact-update', ...a };
  }
  return v === '1.0' ? { statusUpdate: { ...ids, status: wireStatus(t, v) } } : { kind: 'status-update', ...ids, status: wireStatus(t, v), final: streamEndsAt(t.state) };
}

/**
 * A message as a client sent it, either version: 1.0 parts (`text` / `data` / `url` / `raw`) or 0.3 parts
 * (`kind`: text / data / file). Returns a reason string for a message this runtime cannot take.
 */
export function parseMessage(x: unknown): TaskMessage | string {
  if (!x || typeof x !== 'object' || Array.isArray(x)) return 'message must be an object';
  const m = x as Record<string, unknown>;
  if (typeof m.messageId !== 'string' || m.messageId === '') return 'message.messageId is required';
  if (m.messageId.length > MAX_ID_CHARS) return `message.messageId must be at most ${MAX_ID_CHARS} characters`;
  if (m.taskId !== undefined && (typeof m.taskId !== 'string' || m.taskId.length > MAX_ID_CHARS)) return `message.taskId must be a string of at most ${MAX_ID_CHARS} characters`;
  if (m.role !== 'ROLE_USER' && m.role !== 'user') return 'message.role must be ROLE_USER (user)';
  if (!Array.isArray(m.parts) || m.parts.length === 0) return 'message.parts must be a non-empty array';
  if (m.parts.length > MAX_PARTS) return `message.parts: at most ${MAX_PARTS} parts`;
  // A contextId names a conversation kept on this agent: bounded like any key a caller chooses.
  if (m.contextId !== undefined && (typeof m.contextId !== 'string' || m.contextId.length > MAX_ID_CHARS)) return `message.contextId must be a string of at most ${MAX_ID_CHARS} characters`;
  const parts: TaskPart[] = [];
  for (const raw of m.parts) {
    if (!raw || typeof raw !== 'object') return 'each part must be an object';
    const p = raw as Record<string, unknown>;
    const mediaType = typeof p.mediaType === 'string' ? p.mediaType : undefined;
    const fileType = p.file && typeof p.file === 'object' ? (p.file as Record<string, unknown>).mimeType : undefined;
    if ((mediaType ?? (typeof fileType === 'string' ? fileType : '')).length > MAX_MEDIA_TYPE_CHARS) return `a part's media type must be at most ${MAX_MEDIA_TYPE_CHARS} characters`;
    if (typeof p.text === 'string') parts.push({ type: 'text', text: p.text, ...(mediaType ? { mediaType } : {}) });
    else if ('data' in p && (p.kind === undefined || p.kind === 'data')) parts.push({ type: 'data', data: p.data });
    else if (typeof p.url === 'string') parts.push({ type: 'url', url: p.url, ...(mediaType ? { mediaType } : {}) });
    else if (typeof p.raw === 'string') parts.push({ type: 'raw', raw: p.raw, ...(mediaType ? { mediaType } : {}) });
    else if (p.kind === 'file' && p.file && typeof p.file === 'object') {
      const f = p.file as Record<string, unknown>;
      const mt = typeof f.mimeType === 'string' ? f.mimeType : undefined;
      if (typeof f.uri === 'string') parts.push({ type: 'url', url: f.uri, ...(mt ? { mediaType: mt } : {}) });
      else if (typeof f.bytes === 'string') parts.push({ type: 'raw', raw: f.bytes, ...(mt ? { mediaType: mt } : {}) });
      else return 'a file part needs uri or bytes';
    } else return 'unsupported part: expected text, data, url or raw';
  }
  return {
    role: 'user',
    messageId: m.messageId,
    parts,
    ...(typeof m.contextId === 'string' && m.contextId !== '' ? { contextId: m.contextId } : {}),
    ...(typeof m.taskId === 'string' && m.taskId !== '' ? { taskId: m.taskId } : {}),
  };
}

/**
 * The text an agent turn sees: text parts as they are, data parts as JSON, file references by URL. Raw bytes are
 * not given to the model (named only), since a text-only provider cannot read them.
 */
export function turnText(m: TaskMessage): string {
  return m.parts
    .map((p) => (p.type === 'text' ? p.text : p.type === 'data' ? JSON.stringify(p.data) : p.type === 'url' ? `[file: ${p.url}]` : `[binary content${p.mediaType ? ` ${p.mediaType}` : ''} omitted]`))
    .join('\n');
}
