// The task service (CKP-A2A profile §6; docs/a2a.md "Tasks"): one task per message sent, run as one agent turn
// in the conversation its contextId names. claw.task.* (a2a/task-methods.ts) and the A2A JSON-RPC
// binding (rpc-route.ts) are two views of it. A task still `submitted` or `working` when the process died is
// `failed` at the next open: nothing resumes a turn half done (its tool calls may have run).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChannelAgent } from '../channels/types.ts';
import type { Logger } from '../kernel/ports.ts';
import { WallAges } from '../kernel/wall-age.ts';
import { ClawError, ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { A2aAccess } from './access.ts';
import { TooManyRequests } from './errors.ts';
import type { TaskStore } from './task-store.ts';
import { TERMINAL_STATES, type A2aTask, type TaskArtifact, type TaskMessage, type TaskState } from './types.ts';
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
  /** Tasks one A2A caller may hold (config a2a.max_tasks_per_caller; default a tenth of maxTasks). */
  maxTasksPerCaller?: number;
  /**
   * Agent turns running at once (config a2a.max_concurrent_tasks; default DEFAULT_MAX_CONCURRENT): a caller's
   * message that would start one more is refused, so N callers cannot run N turns (memory, model calls) at once.
   */
  maxConcurrent?: number;
  /** Largest message, all parts counted (config a2a.max_message_bytes; messageBytes). */
  maxMessageBytes?: number;
  /** Finished tasks older than this (by their last change) are dropped; 0 = no age limit. */
  maxAgeMs?: number;
  /** Monotonic ms (default performance.now()): the age of what this process changed, whatever the wall clock did. */
  monotonic?: () => number;
  /** claw.tool.approve / claw.tool.deny for a pending approval (the A2A caller's answer). */
  decide?: (requestId: string, decision: 'approved' | 'denied', reason?: string) => Promise<unknown>;
  /** Resolves when the pending approval `requestId` is decided by anyone (operator, caller, timeout). */
  approvalSettled?: (requestId: string) => Promise<unknown> | undefined;
  /** The A2A channel's gate (access.ts); without it a caller's message is refused (nothing runs unchecked). */
  access?: () => A2aAccess | undefined;
}

/**
 * Who asks: an A2A caller's user id (access.ts), or undefined for the operator (claw.task.*, already past the CKP
 * transport's own authentication). A caller sees and continues only its own tasks and conversations.
 */
export type Caller = string | undefined;

/** claw.tool.approval_requested params (docs/tools.md "Approval"). */
export interface ApprovalRequest {
  request_id: string;
  tool: string;
}

export interface ListQuery {
  contextId?: string;
  state?: TaskState;
  pageSize?: number;
  pageToken?: string;
  /** A task's JSON length as answered: a page stops before MAX_PAGE_CHARS (at least one task), the rest on the next page. */
  weigh?: (t: A2aTask) => number;
}

export interface TaskPage {
  tasks: A2aTask[];
  nextPageToken: string;
  totalSize: number;
}

/** A change to a task: `artifact` set when one was added, else its status changed (streams, rpc-route.ts). */
export interface TaskEvent {
  task: A2aTask;
  artifact?: TaskArtifact;
}

export const RESTART_MESSAGE = 'the agent runtime stopped while this task was running';
const DEFAULT_MAX_TASKS = 1000;
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;
/** What a refused task keeps of its message (rejected, auth_required): it never ran, so it holds little. */
export const REFUSED_EXCERPT_BYTES = 1024;
export const DEFAULT_MAX_TASK_AGE_MS = 30 * 24 * 3600_000;
/** Turns at once on a board of 256 MB: each holds a conversation and a model call. */
export const DEFAULT_MAX_CONCURRENT = 4;
/** Retry-After of a refusal for concurrency: a turn takes seconds. */
const BUSY_RETRY_S = 2;
const MAX_PAGE = 100;
/**
 * A page's JSON length as answered. A caller's 100 tasks of 64 KiB messages would be a 6–9 MB answer to one small request,
 * held in memory until the client reads it: one that never reads, on each connection it may hold, would take 300 MB.
 */
export const MAX_PAGE_CHARS = 1024 * 1024;
/** Refusals before the task produced anything (CKP-A2A profile §6.3 `rejected`): policy, sandbox, quota. */
const REFUSALS = new Set<number>([ErrorCode.PolicyDenied, ErrorCode.SandboxDenied, ErrorCode.ProviderQuotaExceeded]);

/** The A2A caller's answer to input_required (docs/a2a.md "Approvals"): a data part, else one word. */
export function approvalAnswer(m: TaskMessage): { approve: boolean; reason?: string } | undefined {
  for (const p of m.parts) {
    if (p.type === 'data' && p.data !== null && typeof p.data === 'object' && typeof (p.data as { approve?: unknown }).approve === 'boolean') {
      const d = p.data as { approve: boolean; reason?: unknown };
      return { approve: d.approve, ...(typeof d.reason === 'string' ? { reason: d.reason.slice(0, 200) } : {}) };
    }
  }
  const words = m.parts.flatMap((p) => (p.type === 'text' ? [p.text.trim().toLowerCase().replace(/[.!]$/, '')] : []));
  if (words.length !== 1) return undefined;
  if (['approve', 'approved', 'yes'].includes(words[0])) return { approve: true };
  if (['deny', 'denied', 'no'].includes(words[0])) return { approve: false };
  return undefined;
}
/** A message's size as kept and run: its ids, text and URL bytes, raw parts decoded, data parts as JSON, media types. */
export function messageBytes(m: TaskMessage): number {
  let n = Buffer.byteLength(m.messageId) + Buffer.byteLength(m.contextId ?? '') + Buffer.byteLength(m.taskId ?? '');
  for (const p of m.parts) {
    if ('mediaType' in p && typeof p.mediaType === 'string') n += Buffer.byteLength(p.mediaType);
    if (p.type === 'text') n += Buffer.byteLength(p.text);
    else if (p.type === 'url') n += Buffer.byteLength(p.url);
    else if (p.type === 'raw') n += Buffer.byteLength(p.raw, 'base64');
    else n += Buffer.byteLength(JSON.stringify(p.data) ?? '');
  }
  return n;
}

/**
 * What a refused task keeps: a new message of the id and the turn text, cut to REFUSED_EXCERPT_BYTES characters and
 * marked `…` when longer — never the parts as sent (their other fields included).
 */
function excerptOf(m: TaskMessage): { message: TaskMessage; cut: boolean } {
  const whole = turnText(m);
  const cut = messageBytes(m) > REFUSED_EXCERPT_BYTES;
  const text = cut ? `${whole.slice(0, REFUSED_EXCERPT_BYTES).replace(/[\ud800-\udbff]$/, '')}…` : whole;
  return { message: { role: m.role, messageId: m.messageId, parts: [{ type: 'text', text }] }, cut };
}

export class TaskService {
  private readonly tasks = new Map<string, A2aTask>();
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void>; interrupted: Set<() => void> }>();
  /** Which task a turn belongs to, seen from inside it: an approval request announced by its tool gate. */
  private readonly turnOf = new AsyncLocalStorage<string>();
  /** The pending approval of a task in input_required. */
  private readonly pendingApproval = new Map<string, ApprovalRequest>();
  private readonly listeners = new Map<string, Set<(e: TaskEvent) => void>>();
  private saving: Promise<void> = Promise.resolve();
  /**
   * Tasks whose latest state the store refused (a full disk), written again before the next change and at close:
   * a store that writes one row per change (the Memory-backed one) would otherwise never hold a finished task whose
   * only write failed, though its caller was told it.
   */
  private readonly unsaved = new Map<string, A2aTask>();
  private opened = false;
  /** Ages of `updatedAt` stamps across wall-clock steps (NTP's first answer on a board without an RTC). */
  private readonly ages: WallAges;

  constructor(private readonly d: TaskServiceDeps) {
    this.ages = new WallAges({ now: d.now, monotonic: d.monotonic ?? (() => performance.now()) });
  }

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
      if (!TERMINAL_STATES.has(t.state) && t.state !== 'auth_required') {
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
  async create(message: TaskMessage, o: { wait: boolean; caller?: Caller }): Promise<A2aTask> {
    const max = this.d.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    const size = messageBytes(message);
    if (size > max) throw new ClawError('task.invalid_input', `message too large: ${size} bytes, all parts counted (a2a.max_message_bytes: ${max})`);
    if (message.taskId !== undefined) return this.answer(message.taskId, message, o);
    const agent = this.d.getAgent();
    if (!agent) throw new ClawError('task.unavailable', 'the agent is not running (no session started)');
    if (o.caller !== undefined) this.checkQuota(o.caller);
    // The gate first (rate, length, access, injection): a refusal creates a task that never runs.
    const admission = this.admit(o.caller, message);
    // Before the task exists: a refused message leaves nothing behind (no task, no store write).
    if (admission.run) this.checkBusy(o.caller);
    const now = this.d.now();
    const contextId = message.contextId ?? this.d.newId();
    // A refused task keeps an excerpt only: refusals are cheap to send and must not be a way to store data here.
    const kept = admission.run ? { message, cut: false } : excerptOf(message);
    const task: A2aTask = {
      id: this.d.newId(),
      contextId,
      state: 'submitted',
      history: [{ ...kept.message, contextId }],
      artifacts: [],
      createdAt: now,
      updatedAt: now,
      ...(o.caller !== undefined ? { owner: o.caller } : {}),
      ...(kept.cut ? { excerpt: true } : {}),
    };
    this.tasks.set(task.id, task);
    this.evict(o.caller);
    if (!admission.run) this.set(task, admission.state, admission.message);
    else this.start(agent, task, message, admission.tools);
    const r = this.running.get(task.id);
    if (o.wait && r) await this.untilSettled(task.id, r.done);
    // The answer is given once what it says is stored (a restart then reports this task, not an older state).
    await this.saving;
    return task;
  }

  /** An operator's message runs as configured; a caller's passes the A2A channel's gate (access.ts). */
  private admit(caller: Caller, message: TaskMessage): { run: true; tools: boolean } | { run: false; state: 'rejected' | 'auth_required'; message: string } {
    if (caller === undefined) return { run: true, tools: this.d.tools };
    const access = this.d.access?.();
    if (!access) throw new ClawError('task.unavailable', 'no A2A channel is open');
    const a = access.admit(caller, turnText(message));
    return a.run ? { run: true, tools: this.d.tools && a.tools } : a;
  }

  private start(agent: ChannelAgent, task: A2aTask, message: TaskMessage, tools: boolean): void {
    const abort = new AbortController();
    this.set(task, 'working');
    const done = this.turnOf.run(task.id, () => this.run(agent, task, message, tools, abort.signal)).finally(() => {
      this.running.delete(task.id);
      this.pendingApproval.delete(task.id);
    });
    this.running.set(task.id, { abort, done, interrupted: new Set() });
  }

  /** A blocking send returns at a terminal state or an interruption (input_required), as A2A 1.0 asks. */
  private async untilSettled(id: string, done: Promise<void>): Promise<void> {
    const r = this.running.get(id);
    if (!r) return done;
    let wake!: () => void;
    const interrupted = new Promise<void>((res) => (wake = res));
    r.interrupted.add(wake);
    await Promise.race([done, interrupted]);
    r.interrupted.delete(wake);
  }

  /**
   * A message on an existing task (the caller's own): on a task in auth_required it is the retry after pairing
   * (the gate is asked again; passed, the task's first message runs); on a task in input_required it must be the
   * approval's answer (approvalAnswer), given through claw.tool.approve / claw.tool.deny as an operator's would be.
   */
  private async answer(id: string, message: TaskMessage, o: { wait: boolean; caller?: Caller }): Promise<A2aTask> {
    const t = this.get(id, o.caller);
    // auth_required (pairing): once the caller is paired, a message on the task runs its first message.
    if (t.state === 'auth_required') {
      const agent = this.d.getAgent();
      if (!agent) throw new ClawError('task.unavailable', 'the agent is not running (no session started)');
      const first = t.history[0];
      if (t.excerpt) {
        this.set(t, 'rejected', 'the message was too large to keep until pairing: send it again');
        await this.saving;
        return t;
      }
      const admission = this.admit(o.caller, first);
      // Refused for concurrency, the task stays auth_required: the caller's retry runs it.
      if (admission.run) this.checkBusy(o.caller);
      if (!admission.run) this.set(t, admission.state, admission.message);
      else this.start(agent, t, first, admission.tools);
      const r = this.running.get(id);
      if (o.wait && r) await this.untilSettled(id, r.done);
      await this.saving;
      return t;
    }
    if (o.caller !== undefined) {
      const a = this.admit(o.caller, message);
      if (!a.run) throw new ClawError('task.unsupported', a.message);
    }
    const pending = this.pendingApproval.get(id);
    if (t.state !== 'input_required' || !pending || !this.d.decide) throw new ClawError('task.unsupported', `task ${id} is ${t.state} and takes no message: send a new message with its contextId`);
    const a = approvalAnswer(message);
    if (!a) throw new ClawError('task.invalid_input', `task ${id} waits for an approval: send "approve" or "deny", or a data part {"approve": true|false}`);
    t.history.push({ ...message, contextId: t.contextId });
    this.pendingApproval.delete(id);
    this.set(t, 'working');
    const r = this.running.get(id);
    await this.d.decide?.(pending.request_id, a.approve ? 'approved' : 'denied', a.reason ?? (a.approve ? undefined : 'denied by the A2A caller'));
    if (o.wait && r) await this.untilSettled(id, r.done);
    await this.saving;
    return t;
  }

  /**
   * claw.tool.approval_requested (every notification reaches the service): when announced from inside one of its
   * turns, that task is input_required until the approval is decided — by the caller, the operator or the timeout.
   */
  onNotification(n: { method: string; params?: unknown }): void {
    if (n.method !== 'claw.tool.approval_requested') return;
    const id = this.turnOf.getStore();
    const t = id === undefined ? undefined : this.tasks.get(id);
    if (!t || TERMINAL_STATES.has(t.state)) return;
    const req = n.params as ApprovalRequest;
    this.pendingApproval.set(t.id, req);
    this.set(t, 'input_required', `approval needed: the agent asks to run the tool "${req.tool}". Answer on this task with "approve" or "deny" (or a data part {"approve": true|false})`);
    for (const wake of this.running.get(t.id)?.interrupted ?? []) wake();
    void this.d.approvalSettled?.(req.request_id)?.then(() => {
      if (this.pendingApproval.get(t.id)?.request_id !== req.request_id) return;
      this.pendingApproval.delete(t.id);
      if (t.state === 'input_required') this.set(t, 'working');
    });
  }

  private async run(agent: ChannelAgent, task: A2aTask, message: TaskMessage, tools: boolean, signal: AbortSignal): Promise<void> {
    try {
      const r = await agent.turn(turnText(message), signal, { ...this.conversationOf(task), tools });
      if (task.state === 'canceled') return;
      if (r.outcome !== 'message') {
        this.set(task, 'failed', r.outcome === 'step_limit' ? 'the agent used too many tool calls for this message' : 'the agent could not produce a valid answer');
        return;
      }
      const parts = [{ type: 'text' as const, text: r.reply }];
      const artifact = { artifactId: this.d.newId(), name: 'reply', parts };
      task.artifacts.push(artifact);
      this.emit({ task, artifact });
      task.history.push({ role: 'agent', messageId: this.d.newId(), contextId: task.contextId, parts });
      this.set(task, 'completed');
    } catch (e) {
      if (task.state === 'canceled') return;
      // A policy / sandbox / quota refusal before any answer: the task was refused, not failed (profile §6.3).
      if (e instanceof ProtocolError && REFUSALS.has(e.code) && task.artifacts.length === 0) {
        this.set(task, 'rejected', `refused (${e.code})`);
        return;
      }
      // The reason's code only: an error's message may carry a provider's URL or a path (profile §8).
      const code = e instanceof ClawError ? e.code : (e as { code?: unknown })?.code;
      this.d.log.warn('a2a task failed', { task: task.id, error: (e as Error)?.message });
      this.set(task, 'failed', `the agent turn failed${typeof code === 'string' || typeof code === 'number' ? ` (${code})` : ''}`);
    }
  }

  /**
   * The turn's channel, user and conversation. The conversation is the contextId's *within its caller*: a follow-up
   * in the same context continues the same history, and another caller naming that contextId starts its own
   * (the user id is percent-encoded, so no pair of user and contextId reads as another's).
   */
  private conversationOf(t: A2aTask): { channel: string; user: string; conversation: string } {
    if (t.owner === undefined) return { channel: 'a2a', user: 'a2a', conversation: `a2a:${t.contextId}` };
    const channel = this.d.access?.()?.channel ?? 'a2a';
    return { channel, user: t.owner, conversation: `${channel}:${encodeURIComponent(t.owner)}:${t.contextId}` };
  }

  /** A caller's view: another caller's task does not exist for it (the operator, `caller` undefined, sees all). */
  get(id: string, caller?: Caller): A2aTask {
    const t = this.tasks.get(id);
    if (!t || (caller !== undefined && t.owner !== caller)) throw new ClawError('task.not_found', `no task ${id}`);
    return t;
  }

  /** Newest first; the page token is the offset (opaque to clients). */
  list(q: ListQuery = {}, caller?: Caller): TaskPage {
    const all = [...this.tasks.values()].filter((t) => (caller === undefined || t.owner === caller) && (q.contextId === undefined || t.contextId === q.contextId) && (q.state === undefined || t.state === q.state));
    all.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? -1 : 1));
    const start = q.pageToken ? Number.parseInt(q.pageToken, 10) : 0;
    if (!Number.isInteger(start) || start < 0) throw new ClawError('task.bad_page_token', 'invalid page token');
    const size = Math.min(Math.max(q.pageSize ?? 50, 1), MAX_PAGE);
    let tasks = all.slice(start, start + size);
    let chars = 0;
    const weigh = q.weigh ?? (() => 0);
    const over = tasks.findIndex((t) => (chars += weigh(t)) > MAX_PAGE_CHARS);
    if (over > 0) tasks = tasks.slice(0, over);
    const end = start + tasks.length;
    return { tasks, nextPageToken: end < all.length ? String(end) : '', totalSize: all.length };
  }

  /** Best effort (profile §6.2): the turn is aborted; a terminal task cannot be canceled. */
  cancel(id: string, caller?: Caller): A2aTask {
    const t = this.get(id, caller);
    if (TERMINAL_STATES.has(t.state)) throw new ClawError('task.not_cancelable', `task ${id} is already ${t.state}`);
    this.set(t, 'canceled', 'canceled by the client');
    this.running.get(id)?.abort.abort(new ClawError('task.canceled', 'task canceled'));
    return t;
  }

  /**
   * Calls `listener` on every change of task `id` until the returned function is called. Called in the same tick
   * as the change: a caller that reads the task and subscribes without awaiting in between misses nothing.
   */
  subscribe(id: string, listener: (e: TaskEvent) => void): () => void {
    this.get(id);
    let set = this.listeners.get(id);
    if (!set) this.listeners.set(id, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(id) === set) this.listeners.delete(id);
    };
  }

  private emit(e: TaskEvent): void {
    for (const l of [...(this.listeners.get(e.task.id) ?? [])]) {
      try {
        l(e);
      } catch (err) {
        this.d.log.warn('a2a task listener failed', { task: e.task.id, error: (err as Error).message });
      }
    }
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
    if (this.unsaved.size > 0) {
      this.write(async () => {});
      await this.saving;
      if (this.unsaved.size > 0) this.d.log.warn('a2a tasks not stored (lost at this restart)', { count: this.unsaved.size, ids: [...this.unsaved.keys()].slice(0, 20) });
    }
  }

  private set(t: A2aTask, state: TaskState, statusMessage?: string): void {
    t.state = state;
    t.statusMessage = statusMessage;
    t.updatedAt = this.d.now();
    this.unsaved.delete(t.id); // this write carries its latest state
    this.write(() => this.d.store.put(t), t);
    this.emit({ task: t });
  }

  /** Writes are chained in the order of the changes: the store ends up with each task's latest state. */
  private write(op: () => Promise<void>, task?: A2aTask): void {
    this.saving = this.saving
      .then(async () => {
        for (const [id, t] of this.unsaved) {
          await this.d.store.put(t);
          this.unsaved.delete(id);
        }
        await op();
      })
      .catch((e) => {
        if (task && this.tasks.get(task.id) === task) this.unsaved.set(task.id, task);
        this.d.log.warn('a2a task store write failed', { error: (e as Error).message, unsaved: this.unsaved.size });
      });
  }

  private quota(): number {
    const max = this.d.maxTasks ?? DEFAULT_MAX_TASKS;
    return Math.min(max, this.d.maxTasksPerCaller ?? Math.max(1, Math.floor(max / 10)));
  }

  // auth_required never started a turn: it goes like a finished one (a caller cannot pin memory by not pairing).
  private evictable = (t: A2aTask): boolean => TERMINAL_STATES.has(t.state) || (t.state === 'auth_required' && !this.running.has(t.id));

  /** A caller whose quota is all tasks still in progress gets no more (nothing of its own can make room). */
  private checkQuota(caller: string): void {
    const quota = this.quota();
    let active = 0;
    for (const t of this.tasks.values()) if (t.owner === caller && !this.evictable(t)) active++;
    if (active >= quota) throw new TooManyRequests(`too many tasks in progress for this caller (a2a.max_tasks_per_caller: ${quota})`, 5);
  }

  /**
   * A caller's message that would start a turn while max_concurrent_tasks run (any origin's, input_required ones
   * included: they hold a turn) is refused: HTTP 429 with Retry-After, JSON-RPC -32603 (A2A 1.0 has no code for
   * back-pressure; docs/a2a.md "Limits"). The operator's claw.task.create is not refused (it is not untrusted input).
   */
  private checkBusy(caller: Caller): void {
    const max = this.d.maxConcurrent ?? DEFAULT_MAX_CONCURRENT;
    if (caller !== undefined && this.running.size >= max) throw new TooManyRequests(`too many tasks running (a2a.max_concurrent_tasks: ${max}): retry in ${BUSY_RETRY_S} s`, BUSY_RETRY_S);
  }

  /**
   * Retention (config a2a.max_tasks, a2a.max_tasks_per_caller, a2a.max_task_age_ms): finished tasks past the age
   * limit go; then `owner`'s oldest finished ones while it is over its quota; then, while over the count, the
   * oldest finished ones — `owner`'s first, so one caller's volume costs its own history, not another's. Running
   * ones are never dropped.
   */
  private evict(owner?: Caller): void {
    const max = this.d.maxTasks ?? DEFAULT_MAX_TASKS;
    const maxAge = this.d.maxAgeMs ?? DEFAULT_MAX_TASK_AGE_MS;
    // A stamp this process wrote is aged on the monotonic clock, one read from the store by the wall clock (an
    // unset-clock one as old as this process): a step to the real time does not make a minute-old task 56 years old.
    const ageOf = this.ages.ages();
    const tooOld = (t: A2aTask): boolean => maxAge > 0 && ageOf(t.updatedAt) > maxAge;
    // Oldest first by that age too: after a backward step the smallest stamp is not the oldest task.
    const done = [...this.tasks.values()].filter(this.evictable).map((t) => [ageOf(t.updatedAt), t] as const).sort((x, y) => y[0] - x[0]).map(([, t]) => t);
    const own = owner === undefined ? [] : done.filter((t) => t.owner === owner);
    const quota = this.quota();
    let mine = owner === undefined ? 0 : [...this.tasks.values()].filter((t) => t.owner === owner).length;
    const dropped: string[] = [];
    // `owner`'s own first: a task listed twice is dropped once (delete answers false the second time).
    for (const t of [...own, ...done]) {
      if ((tooOld(t) || this.tasks.size > max || (owner !== undefined && t.owner === owner && mine > quota)) && this.tasks.delete(t.id)) {
        dropped.push(t.id);
        if (owner !== undefined && t.owner === owner) mine--;
      }
    }
    for (const id of dropped) this.unsaved.delete(id);
    if (dropped.length > 0) this.write(() => this.d.store.remove(dropped));
  }
}
