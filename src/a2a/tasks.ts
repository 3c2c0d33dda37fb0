// The task service (CKP-A2A profile §6; docs/a2a.md "Tasks"): one task per message sent, run as one agent turn
// in the conversation its contextId names. claw.task.* (a2a/task-methods.ts) and the A2A JSON-RPC
// binding (rpc-route.ts) are two views of it. A task still `submitted` or `working` when the process died is
// `failed` at the next open: nothing resumes a turn half done (its tool calls may have run).
import type { ChannelAgent } from '../channels/types.ts';
import type { Logger } from '../kernel/ports.ts';
import { ClawError } from '../protocol/errors.ts';
import type { TaskStore } from './task-store.ts';
import { TERMINAL_STATES, type A2aTask, type TaskMessage, type TaskState } from './types.ts';
import { turnText } from './wire.ts';

export interface TaskServiceDeps {
  store: TaskStore;
  /** The agent loop's per-conversation agent; undefined while no session runs. */
  getAgent: () => ChannelAgent | undefined;
  /** A2A callers' turns may use tools (config a2a.tools, default false). */
  tools: boolean;
  newId: () => string;
  now: () => number;
  log: Logger;
  maxTasks?: number;
  /** Finished tasks older than this (by their last change) are dropped; 0 = no age limit. */
  maxAgeMs?: number;
}

export interface ListQuery {
  contextId?: string;
  state?: TaskState;
  pageSize?: number;
  pageToken?: string;
}

export interface TaskPage {
  tasks: A2aTask[];
  nextPageToken: string;
  totalSize: number;
}

export const RESTART_MESSAGE = 'the agent runtime stopped while this task was running';
const DEFAULT_MAX_TASKS = 1000;
export const DEFAULT_MAX_TASK_AGE_MS = 30 * 24 * 3600_000;
const MAX_PAGE = 100;

export class TaskService {
  private readonly tasks = new Map<string, A2aTask>();
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private saving: Promise<void> = Promise.resolve();
  private opened = false;

  constructor(private readonly d: TaskServiceDeps) {}

  /** Loads the kept tasks; the ones a previous process left running become `failed`. */
  async open(): Promise<void> {
    if (this.opened) return;
    this.opened = true;
    let loaded: A2aTask[] = [];
    try {
      loaded = await this.d.store.load();
    } catch (e) {
      this.d.log.warn('a2a task store unreadable; starting with no tasks', { error: (e as Error).message });
    }
    let interrupted = 0;
    for (const t of loaded) {
      this.tasks.set(t.id, t);
      if (!TERMINAL_STATES.has(t.state)) {
        this.set(t, 'failed', RESTART_MESSAGE);
        interrupted++;
      }
    }
    if (interrupted > 0) this.d.log.warn('a2a tasks interrupted by a restart marked failed', { tasks: interrupted });
    this.evict();
    await this.saving;
  }

  /**
   * One message → one new task, its turn started at once. `wait`: resolve when the task is terminal (A2A blocking
   * send); else as soon as it is `working`. A message naming an existing task cannot continue it (no
   * input_required yet): the client sends a new message in the same contextId.
   */
  async create(message: TaskMessage, o: { wait: boolean }): Promise<A2aTask> {
    if (message.taskId !== undefined) {
      if (!this.tasks.has(message.taskId)) throw new ClawError('task.not_found', `no task ${message.taskId}`);
      throw new ClawError('task.unsupported', `task ${message.taskId} cannot take another message: send a new message with its contextId`);
    }
    const agent = this.d.getAgent();
    if (!agent) throw new ClawError('task.unavailable', 'the agent is not running (no session started)');
    const now = this.d.now();
    const contextId = message.contextId ?? this.d.newId();
    const task: A2aTask = {
      id: this.d.newId(),
      contextId,
      state: 'submitted',
      history: [{ ...message, contextId }],
      artifacts: [],
      createdAt: now,
      updatedAt: now,
    };
    this.tasks.set(task.id, task);
    this.evict();
    const abort = new AbortController();
    this.set(task, 'working');
    const done = this.run(agent, task, message, abort.signal).finally(() => this.running.delete(task.id));
    this.running.set(task.id, { abort, done });
    if (o.wait) await done;
    // The answer is given once what it says is stored (a restart then reports this task, not an older state).
    await this.saving;
    return task;
  }

  private async run(agent: ChannelAgent, task: A2aTask, message: TaskMessage, signal: AbortSignal): Promise<void> {
    try {
      // The conversation is the contextId's: a follow-up in the same context continues the same history.
      const r = await agent.turn(turnText(message), signal, { channel: 'a2a', user: 'a2a', conversation: `a2a:${task.contextId}`, tools: this.d.tools });
      if (task.state === 'canceled') return;
      if (r.outcome !== 'message') {
        this.set(task, 'failed', r.outcome === 'step_limit' ? 'the agent used too many tool calls for this message' : 'the agent could not produce a valid answer');
        return;
      }
      const parts = [{ type: 'text' as const, text: r.reply }];
      task.artifacts.push({ artifactId: this.d.newId(), name: 'reply', parts });
      task.history.push({ role: 'agent', messageId: this.d.newId(), contextId: task.contextId, parts });
      this.set(task, 'completed');
    } catch (e) {
      if (task.state === 'canceled') return;
      // The reason's code only: an error's message may carry a provider's URL or a path (profile §8).
      const code = e instanceof ClawError ? e.code : (e as { code?: unknown })?.code;
      this.d.log.warn('a2a task failed', { task: task.id, error: (e as Error)?.message });
      this.set(task, 'failed', `the agent turn failed${typeof code === 'string' || typeof code === 'number' ? ` (${code})` : ''}`);
    }
  }

  get(id: string): A2aTask {
    const t = this.tasks.get(id);
    if (!t) throw new ClawError('task.not_found', `no task ${id}`);
    return t;
  }

  /** Newest first; the page token is the offset (opaque to clients). */
  list(q: ListQuery = {}): TaskPage {
    const all = [...this.tasks.values()].filter((t) => (q.contextId === undefined || t.contextId === q.contextId) && (q.state === undefined || t.state === q.state));
    all.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
    const start = q.pageToken ? Number.parseInt(q.pageToken, 10) : 0;
    if (!Number.isInteger(start) || start < 0) throw new ClawError('task.bad_page_token', 'invalid page token');
    const size = Math.min(Math.max(q.pageSize ?? 50, 1), MAX_PAGE);
    const tasks = all.slice(start, start + size);
    return { tasks, nextPageToken: start + size < all.length ? String(start + size) : '', totalSize: all.length };
  }

  /** Best effort (profile §6.2): the turn is aborted; a terminal task cannot be canceled. */
  cancel(id: string): A2aTask {
    const t = this.get(id);
    if (TERMINAL_STATES.has(t.state)) throw new ClawError('task.not_cancelable', `task ${id} is already ${t.state}`);
    this.set(t, 'canceled', 'canceled by the client');
    this.running.get(id)?.abort.abort(new ClawError('task.canceled', 'task canceled'));
    return t;
  }

  /** Aborts running turns (their tasks fail: the runtime is stopping) and waits for the last write. */
  async close(): Promise<void> {
    for (const [id, r] of this.running) {
      const t = this.tasks.get(id);
      if (t && !TERMINAL_STATES.has(t.state)) this.set(t, 'failed', RESTART_MESSAGE);
      r.abort.abort(new ClawError('task.stopping', 'runtime stopping'));
    }
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
    await this.saving;
  }

  private set(t: A2aTask, state: TaskState, statusMessage?: string): void {
    t.state = state;
    t.statusMessage = statusMessage;
    t.updatedAt = this.d.now();
    this.write(() => this.d.store.put(t));
  }

  /** Writes are chained in the order of the changes: the store ends up with each task's latest state. */
  private write(op: () => Promise<void>): void {
    this.saving = this.saving.then(op).catch((e) => this.d.log.warn('a2a task store write failed', { error: (e as Error).message }));
  }

  /**
   * Retention (config a2a.max_tasks, a2a.max_task_age_ms): finished tasks past the age limit go, then the oldest
   * finished ones while over the count; running ones are never dropped.
   */
  private evict(): void {
    const max = this.d.maxTasks ?? DEFAULT_MAX_TASKS;
    const maxAge = this.d.maxAgeMs ?? DEFAULT_MAX_TASK_AGE_MS;
    const oldest = maxAge > 0 ? this.d.now() - maxAge : -Infinity;
    const done = [...this.tasks.values()].filter((t) => TERMINAL_STATES.has(t.state)).sort((a, b) => a.updatedAt - b.updatedAt);
    const dropped: string[] = [];
    for (const t of done) {
      if (this.tasks.size <= max && t.updatedAt >= oldest) break;
      this.tasks.delete(t.id);
      dropped.push(t.id);
    }
    if (dropped.length > 0) this.write(() => this.d.store.remove(dropped));
  }
}
