// claw.task.create / get / list / cancel (CKP-A2A profile §6.1; docs/a2a.md "claw.task.*"): the operator's view
// of the A2A task service, answered with CKP error codes (-32602 with data.reason) rather than A2A's, whose
// numbers mean other things in CKP's catalog. claw.task.subscribe is a long poll: a request/response transport
// (stdio, fs, mqtt, a CKP POST) carries one answer per request, so it answers with the task once it changed.
import * as v from 'valibot';
import { ClawError, ErrorCode, ProtocolError } from '../protocol/errors.ts';
import { issuesData } from '../protocol/wire.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { TaskService } from './tasks.ts';
import type { A2aTask, TaskMessage } from './types.ts';
import { streamEndsAt, TASK_STATES } from './wire.ts';

const partSchema = v.union([
  v.strictObject({ type: v.literal('text'), text: v.string(), mediaType: v.optional(v.string()) }),
  v.strictObject({ type: v.literal('data'), data: v.unknown(), mediaType: v.optional(v.string()) }),
  v.strictObject({ type: v.literal('url'), url: v.string(), mediaType: v.optional(v.string()) }),
  v.strictObject({ type: v.literal('raw'), raw: v.string(), mediaType: v.optional(v.string()) }),
]);

const createParams = v.strictObject({
  /** A plain text message, or parts (profile §7). */
  text: v.optional(v.pipe(v.string(), v.minLength(1))),
  parts: v.optional(v.pipe(v.array(partSchema), v.minLength(1))),
  context_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  /** Wait for the task to finish (default true); false answers as soon as it is working. */
  wait: v.optional(v.boolean()),
});
const idParams = v.strictObject({ task_id: v.pipe(v.string(), v.minLength(1)) });
const subscribeParams = v.strictObject({
  task_id: v.pipe(v.string(), v.minLength(1)),
  /** The `updated_at` of the task the caller holds: a task changed since answers at once. */
  since: v.optional(v.string()),
  /** How long to wait for a change (default and most 25 s: under the 30 s an HTTP client or proxy commonly waits). */
  wait_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(25_000))),
});
/** Long polls waiting at once, all transports together: each holds a listener and a timer. */
const MAX_WAITING = 32;
const listParams = v.strictObject({
  context_id: v.optional(v.string()),
  state: v.optional(v.picklist(TASK_STATES)),
  page_size: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(100))),
  page_token: v.optional(v.string()),
});

/** The CKP shape of a task: snake_case, states as in profile §6.3. */
export function ckpTask(t: A2aTask): Record<string, unknown> {
  return {
    task_id: t.id,
    context_id: t.contextId,
    state: t.state,
    // The operator sees which A2A caller a task is from (the token's secret_ref name, never a value).
    ...(t.owner !== undefined ? { caller: t.owner } : {}),
    ...(t.statusMessage ? { status_message: t.statusMessage } : {}),
    artifacts: t.artifacts.map((a) => ({ artifact_id: a.artifactId, ...(a.name ? { name: a.name } : {}), parts: a.parts })),
    history: t.history.map((m) => ({ role: m.role, message_id: m.messageId, parts: m.parts })),
    created_at: new Date(t.createdAt).toISOString(),
    updated_at: new Date(t.updatedAt).toISOString(),
  };
}

function parse<S extends v.GenericSchema>(schema: S, method: string, params: unknown): v.InferOutput<S> {
  const p = v.safeParse(schema, params ?? {});
  if (!p.success) throw new ProtocolError(ErrorCode.InvalidParams, `Invalid params for ${method}`, issuesData(p.issues));
  return p.output;
}

/** A task service error → a CKP error: unknown task and wrong state are bad params; no agent is internal. */
function ckpError(e: unknown): never {
  if (e instanceof ClawError && e.code.startsWith('task.')) {
    const reason = e.code.slice(5);
    throw new ProtocolError(reason === 'unavailable' ? ErrorCode.InternalError : ErrorCode.InvalidParams, e.message, { reason });
  }
  throw e;
}

export function taskMethods(service: () => TaskService | undefined, newId: () => string): Record<string, MethodSpec> {
  const svc = (): TaskService => {
    const s = service();
    if (!s) throw new ProtocolError(ErrorCode.InternalError, 'the task service is not running', { reason: 'unavailable' });
    return s;
  };
  let waiting = 0;
  return {
    'claw.task.create': {
      level: 1,
      states: ['READY'],
      async handler(params) {
        const p = parse(createParams, 'claw.task.create', params);
        if ((p.text === undefined) === (p.parts === undefined)) {
          throw new ProtocolError(ErrorCode.InvalidParams, 'Invalid params for claw.task.create', { issues: [{ path: 'text', message: 'give exactly one of text or parts' }] });
        }
        const message: TaskMessage = {
          role: 'user',
          messageId: newId(),
          parts: p.parts ?? [{ type: 'text', text: p.text! }],
          ...(p.context_id ? { contextId: p.context_id } : {}),
        };
        try {
          return ckpTask(await svc().create(message, { wait: p.wait !== false }));
        } catch (e) {
          return ckpError(e);
        }
      },
    },
    'claw.task.get': {
      level: 1,
      states: ['READY'],
      handler(params) {
        const p = parse(idParams, 'claw.task.get', params);
        try {
          return ckpTask(svc().get(p.task_id));
        } catch (e) {
          return ckpError(e);
        }
      },
    },
    'claw.task.list': {
      level: 1,
      states: ['READY'],
      handler(params) {
        const p = parse(listParams, 'claw.task.list', params);
        try {
          const page = svc().list({ contextId: p.context_id, state: p.state, pageSize: p.page_size, pageToken: p.page_token });
          return { tasks: page.tasks.map(ckpTask), next_page_token: page.nextPageToken, total: page.totalSize };
        } catch (e) {
          return ckpError(e);
        }
      },
    },
    // Profile §6.1: answers the task when it differs from `since` (or no `since`: when it next changes), when its
    // state ends a stream (terminal, input_required, auth_required), or after wait_ms with the task as it is.
    'claw.task.subscribe': {
      level: 1,
      states: ['READY'],
      async handler(params) {
        const p = parse(subscribeParams, 'claw.task.subscribe', params);
        try {
          const s = svc();
          const t = s.get(p.task_id);
          if (streamEndsAt(t.state) || (p.since !== undefined && p.since !== new Date(t.updatedAt).toISOString())) return ckpTask(t);
          if (waiting >= MAX_WAITING) throw new ProtocolError(ErrorCode.InternalError, 'too many claw.task.subscribe calls waiting', { reason: 'busy' });
          waiting++;
          try {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(done, p.wait_ms ?? 25_000);
              const unsubscribe = s.subscribe(t.id, done);
              function done() {
                clearTimeout(timer);
                unsubscribe();
                resolve();
              }
            });
          } finally {
            waiting--;
          }
          return ckpTask(s.get(p.task_id));
        } catch (e) {
          return ckpError(e);
        }
      },
    },
    'claw.task.cancel': {
      level: 1,
      states: ['READY'],
      handler(params) {
        const p = parse(idParams, 'claw.task.cancel', params);
        try {
          return ckpTask(svc().cancel(p.task_id));
        } catch (e) {
          return ckpError(e);
        }
      },
    },
  };
}
