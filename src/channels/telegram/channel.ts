// A `type: telegram` Channel (docs/channels.md "Telegram"): the Bot API with long polling (getUpdates; no
// inbound port, the board stays behind NAT). Each text message becomes a `channel.message` frame for the
// channel runner (the same access gate, trigger scheduler and agent turn as a queue), and the answer goes
// back with sendMessage, split at 4096 characters, with a typing indicator while the turn runs. A tool call
// that needs approval asks the approving user with inline buttons; the press is decided through
// claw.tool.approve / claw.tool.deny. Updates are handled exactly once across restarts (./state.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { InboundFrame, Logger, Transport, Clock } from '../../kernel/ports.ts';
import type { SecretResolver } from '../../kernel/secrets.ts';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.ts';
import { ClawError } from '../../protocol/errors.ts';
import { hostAllowed } from '../../net/host-allowlist.ts';
import { netPolicy, type NetworkCaps } from '../../net/net-policy.ts';
import type { TelegramBinding } from '../config.ts';
import type { ChannelGate } from '../access.ts';
import type { DecideApproval } from '../runner.ts';
import type { ChannelSpec } from '../types.ts';
import { toWellFormed } from '../../protocol/well-formed.ts';
import { timerDelay } from '../../protocol/delay.ts';
import { nodeCrypto } from '../../node/lazy.ts';
import { MAX_ANSWER_BYTES, telegramApi, TelegramError, type TelegramApi, type TelegramFetch } from './api.ts';
import { splitMessage } from './split.ts';
import { checkUpdate, hasUpdateId, type CallbackQuery, type Update } from './update.ts';
import { fileTelegramState, telegramStateDir, type TelegramState } from './state.ts';

export const DEFAULT_TELEGRAM_API = 'https://api.telegram.org';
/** Telegram shows "typing…" for about 5 s; renewed a little sooner while the turn runs. */
const TYPING_EVERY_MS = 4500;
const SEND_ATTEMPTS = 5;
/**
 * Updates taken from one getUpdates answer (the Bot API's own `limit` maximum), and answers in flight before the
 * next poll: each update costs two fsynced writes and an answer, so a server answering thousands at once must not
 * hold the event loop or open a request per entry. What is left stays on the server, fetched by the next poll.
 */
const BATCH = 100;

export interface TelegramChannelOptions {
  channel: string;
  spec: ChannelSpec;
  binding: TelegramBinding;
  log: Logger;
  dataDir: string;
  secrets?: SecretResolver;
  decide?: DecideApproval;
  clock: Clock;
  /** Injected in unit tests; production uses the network guard's fetch. */
  fetch?: TelegramFetch;
  state?: TelegramState;
}

export interface TelegramChannel extends Transport {
  /** The gate the runner must use: it tells this channel which senders were let through (typing, approvals). */
  observe(gate: ChannelGate): ChannelGate;
}

interface Approval {
  requestId: string;
  tool: string;
  approvers: Set<string>;
  asked: { chat_id: number; message_id: number }[];
  timer: ReturnType<typeof setTimeout>;
}

/** The network guard's settings: the operator's, else only the API host with SSRF protection on. */
function networkOf(b: TelegramBinding, apiUrl: string): NetworkCaps {
  return b.network ?? { mode: 'allowlist', allowed_hosts: [new URL(apiUrl).hostname], ssrf_protection: { enabled: true, block_private_ips: true, dns_pinning: true } };
}

export async function openTelegramChannel(o: TelegramChannelOptions): Promise<TelegramChannel> {
  const { channel, log, binding: b } = o;
  const apiUrl = b.api_url ?? DEFAULT_TELEGRAM_API;
  const network = networkOf(b, apiUrl);
  const policy = netPolicy(network);
  const host = new URL(apiUrl).hostname;
  if (policy.mode === 'deny' || (policy.mode === 'allowlist' && !hostAllowed(host, policy.allowedHosts))) {
    throw new ClawError('config', `channel ${channel}: the Telegram API host ${host} is not allowed by claw.runtime.yaml channels.${channel}.telegram.network`);
  }
  if (!o.secrets) throw new ClawError('config', `channel ${channel}: no secret resolver for the bot token`);
  const token = await o.secrets.resolve(o.spec.auth.secret_ref);
  const api: TelegramApi = telegramApi({ apiUrl, token, network, fetch: o.fetch });
  const state = o.state ?? fileTelegramState(telegramStateDir(o.dataDir, channel));
  const pollTimeoutS = b.poll_timeout_s ?? 30;
  const retryMin = b.retry?.initial_delay_ms ?? 1000;
  const retryMax = Math.max(retryMin, b.retry?.max_delay_ms ?? 60_000);
  const typing = o.spec.processing?.typing_indicator !== false;
  const ac = o.spec.access_control;
  const admins = ac?.mode === 'role-based' ? (ac.roles ?? []).filter((r) => r.role === 'admin').map((r) => r.id) : undefined;

  const stop = new AbortController();
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  const sends = new Set<Promise<unknown>>();
  /** Messages handed to the runner and not answered yet, by update id. */
  const inflight = new Map<number, { chat: number; user: string; allowed: boolean; stopTyping?: () => void }>();
  const approvals = new Map<string, Approval>();
  /**
   * The update whose turn is running, in that turn's async context: approvals are announced to every transport
   * (gates/approval-gate.ts) from inside the call's turn, so this tells whose call one is — or that no turn of
   * this channel made it (an operator's, an A2A task's), which no Telegram user may see or decide.
   */
  const turnOf = new AsyncLocalStorage<number>();
  let approvalSeq = 0;
  /**
   * Names this run's questions: their buttons outlive the process in the chat, and a press on one asked
   * before a restart must not decide the new question that got the same number.
   */
  const run = nodeCrypto().randomBytes(6).toString('hex');
  let lastAllowed: string | undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (stop.signal.aborted) return resolve();
      const t = setTimeout(done, timerDelay(ms));
      function done() {
        clearTimeout(t);
        stop.signal.removeEventListener('abort', done);
        resolve();
      }
      stop.signal.addEventListener('abort', done, { once: true });
    });

  /** Groups that became supergroups (a chat id the API answered with migrate_to_chat_id): old id → new id. */
  const movedChats = new Map<number, number>();
  /** One API call, retried on 429 (retry_after) and network errors; false when it finally failed. */
  const send = (method: string, params: Record<string, unknown>): Promise<unknown> => {
    const p = (async () => {
      let delay = retryMin;
      for (let attempt = 1; ; attempt++) {
        const chat = params.chat_id;
        if (typeof chat === 'number' && movedChats.has(chat)) params = { ...params, chat_id: movedChats.get(chat) };
        try {
          return await api.call(method, params, { timeoutMs: 30_000 });
        } catch (e) {
          const f = e instanceof TelegramError ? e.failure : { kind: 'network' as const, message: String(e) };
          // Bot API, ResponseParameters: a group upgraded to a supergroup has a new id, and what was sent to the
          // old one goes there. Once per chat: a server naming a chat already moved to is not followed round.
          if (f.kind === 'api' && f.migrateTo !== undefined && typeof chat === 'number' && ![...movedChats.values()].includes(chat)) {
            // Another send may have learnt it meanwhile: then the next attempt just uses it.
            if (!movedChats.has(chat)) {
              log.info('telegram group became a supergroup; sending to its new id', { channel, chat_id: chat, migrate_to_chat_id: f.migrateTo });
              movedChats.set(chat, f.migrateTo);
            }
            continue;
          }
          // An answer too large to read came from a request the server took: sent again, it would be sent twice.
          if (f.kind === 'api' || f.kind === 'denied' || f.kind === 'oversize' || attempt >= SEND_ATTEMPTS || (stop.signal.aborted && f.kind !== 'flood')) {
            log.warn('telegram request failed', { channel, method, error: f.message });
            return undefined;
          }
          // At STOPPING, answers still go out, but a flood wait is not sat through.
          if (stop.signal.aborted) return undefined;
          await sleep(f.kind === 'flood' ? f.retryAfterMs : delay);
          delay = Math.min(delay * 2, retryMax);
        }
      }
    })();
    sends.add(p);
    void p.finally(() => sends.delete(p));
    return p;
  };

  /**
   * `text`, or `blank` when it is only white space: Telegram strips it and refuses what is left empty (400). A
   * lone surrogate (a model's reply cut inside an emoji) becomes U+FFFD: the Bot API takes UTF-8 only and refuses
   * the whole message for one.
   */
  const sendText = async (chat: number, text: string, extra: Record<string, unknown> = {}, blank = '(no reply)') => {
    let last: unknown;
    for (const part of splitMessage(toWellFormed(text.trim() ? text : blank))) {
      last = await send('sendMessage', { chat_id: chat, text: part, ...extra });
      // A piece that did not go out ends the reply: the rest after a hole would read as if nothing were missing.
      if (last === undefined) break;
    }
    return last as { message_id?: number } | undefined;
  };

  /** One "typing…" ticker per chat, however many of its messages wait: each tick counts against the chat's flood limit. */
  const typers = new Map<number, { turns: number; timer: ReturnType<typeof setInterval> }>();
  const startTyping = (chat: number): (() => void) => {
    if (!typing) return () => {};
    let t = typers.get(chat);
    if (!t) {
      // One attempt each: a lost "typing…" is renewed by the next tick, never worth a retry queue.
      const tick = () => void api.call('sendChatAction', { chat_id: chat, action: 'typing' }, { timeoutMs: TYPING_EVERY_MS }).catch(() => {});
      tick();
      typers.set(chat, (t = { turns: 0, timer: setInterval(tick, TYPING_EVERY_MS) }));
    }
    const mine = t;
    mine.turns++;
    let stopped = false;
    return () => {
      if (stopped) return;
      stopped = true;
      if (--mine.turns > 0) return;
      clearInterval(mine.timer);
      if (typers.get(chat) === mine) typers.delete(chat);
    };
  };

  /** The runner's answer to one message, as Telegram messages. */
  const answer = (updateId: number, m: JsonRpcMessage) => {
    const f = inflight.get(updateId);
    inflight.delete(updateId);
    f?.stopTyping?.();
    const done = () => state.answered(updateId);
    if (!f) return done();
    // An answer that could not go out because the channel is stopping keeps its journal entry: the next start
    // tells the user it was cut off (state.ts) instead of the message being lost without a word.
    const sent = (r: unknown) => (r !== undefined || !stop.signal.aborted ? done() : log.warn('telegram answer not sent before stop; the next start says so', { channel, update_id: updateId }));
    const msg = m as { result?: { reply?: unknown }; error?: { message?: string; data?: { reason?: unknown } } };
    if (msg.result) return void sendText(f.chat, typeof msg.result.reply === 'string' ? msg.result.reply : '').then(sent, done);
    const reason = msg.error?.data?.reason;
    // A stranger learns nothing from the bot, not even that it is one (pairing off): no answer at all.
    if (reason === 'not_allowed' || reason === 'bad_user') {
      log.info('telegram message from a sender without access: not answered', { channel });
      return done();
    }
    void sendText(f.chat, typeof msg.error?.message === 'string' ? msg.error.message : '', {}, 'Internal error').then(sent, done);
  };

  const onMessage = (u: Update, deliver: (f: InboundFrame) => void) => {
    const m = u.message!;
    const chat = m.chat.id;
    if (!m.from || m.from.is_bot) return state.answered(u.update_id);
    const user = String(m.from.id);
    // Files, voice, stickers: not served (features.* are refused at STARTING); dropped unanswered.
    if (typeof m.text !== 'string' || m.text === '') return state.answered(u.update_id);
    inflight.set(u.update_id, { chat, user, allowed: false });
    lastAllowed = undefined;
    turnOf.run(u.update_id, () => deliver({
      payload: { text: JSON.stringify({ jsonrpc: '2.0', id: `tg-${u.update_id}`, method: 'channel.message', params: { from: user, text: m.text } }) },
      reply: (r) => answer(u.update_id, (Array.isArray(r) ? r[0] : r) as JsonRpcMessage),
    }));
    // The runner checked the gate synchronously inside deliver: only a let-through sender sees "typing…".
    const f = inflight.get(u.update_id);
    if (f && lastAllowed === user) {
      f.allowed = true;
      f.stopTyping = startTyping(chat);
    }
  };

  const onCallback = async (q: CallbackQuery) => {
    const [verb, key] = (q.data ?? '').split(':');
    const a = approvals.get(key ?? '');
    const presser = String(q.from.id);
    if (!a || (verb !== 'ok' && verb !== 'no')) return void send('answerCallbackQuery', { callback_query_id: q.id, text: 'This approval is no longer open.' });
    if (!a.approvers.has(presser)) return void send('answerCallbackQuery', { callback_query_id: q.id, text: 'You may not decide this approval.' });
    approvals.delete(key);
    clearTimeout(a.timer);
    const approved = verb === 'ok';
    let acknowledged = false;
    try {
      acknowledged = (await o.decide?.(a.requestId, approved ? 'approved' : 'denied', approved ? undefined : `denied on Telegram by ${presser}`)) === true;
    } catch (e) {
      log.warn('telegram approval decision failed', { channel, request_id: a.requestId, error: e instanceof Error ? e.message : String(e) });
    }
    log.info('telegram approval decision', { channel, request_id: a.requestId, decision: approved ? 'approved' : 'denied', acknowledged });
    const outcome = !acknowledged ? `This approval is no longer open (tool ${a.tool}).` : approved ? `Approved: tool ${a.tool} runs.` : `Denied: tool ${a.tool} does not run.`;
    void send('answerCallbackQuery', { callback_query_id: q.id, text: outcome.slice(0, 200) });
    for (const m of a.asked) void send('editMessageText', { chat_id: m.chat_id, message_id: m.message_id, text: outcome });
  };

  /** claw.tool.approval_requested: ask whoever may decide, with inline buttons. */
  const askApproval = async (p: { request_id?: unknown; tool?: unknown; arguments?: unknown; reason?: unknown; timeout_seconds?: unknown }) => {
    if (typeof p.request_id !== 'string' || !o.decide) return;
    // Only an approval that belongs to a turn of this channel is asked here (another origin has its own
    // operator); role-based channels ask their admins, the others the user whose turn it is.
    const id = turnOf.getStore();
    const turn = id === undefined ? undefined : inflight.get(id);
    if (!turn?.allowed) return;
    const approvers = admins ?? [turn.user];
    if (approvers.length === 0) return;
    const key = `${run}.${++approvalSeq}`;
    const timeoutMs = typeof p.timeout_seconds === 'number' && p.timeout_seconds > 0 ? p.timeout_seconds * 1000 : 300_000;
    const a: Approval = { requestId: p.request_id, tool: String(p.tool), approvers: new Set(approvers), asked: [], timer: setTimeout(() => approvals.delete(key), timerDelay(timeoutMs)) };
    a.timer.unref?.();
    approvals.set(key, a);
    const args = JSON.stringify(p.arguments ?? {});
    const text = `Approval needed: tool ${a.tool} ${args.length > 1000 ? `${args.slice(0, 1000)}…` : args}${typeof p.reason === 'string' ? ` (${p.reason})` : ''}`;
    const markup = { inline_keyboard: [[{ text: 'Approve', callback_data: `ok:${key}` }, { text: 'Deny', callback_data: `no:${key}` }]] };
    // A user's private chat with the bot has the user's id: admins are asked there.
    const chats = admins ? admins.map(Number).filter(Number.isSafeInteger) : [turn.chat];
    for (const chat of chats) {
      const sent = (await sendText(chat, text, { reply_markup: markup })) as { message_id?: number } | undefined;
      if (sent?.message_id !== undefined) a.asked.push({ chat_id: chat, message_id: sent.message_id });
    }
  };

  const poll = async (deliver: (f: InboundFrame) => void) => {
    // Accepted by an earlier run and never answered: say so, once (never run again, never silently lost).
    // One the offset had not yet moved past was never confirmed: the server serves it again, and it runs then.
    for (const p of state.interrupted()) {
      if (p.update_id >= state.offset()) {
        state.answered(p.update_id);
        continue;
      }
      void sendText(p.chat_id, 'The agent restarted before answering your message, and did not finish it. Please send it again.', { reply_parameters: { message_id: p.message_id, allow_sending_without_reply: true } }).finally(() => state.answered(p.update_id));
    }
    let delay = retryMin;
    // How many updates to ask for: halved while answers are too large to read, doubled back after each answer.
    let limit = BATCH;
    while (!stop.signal.aborted) {
      while (sends.size >= BATCH && !stop.signal.aborted) await Promise.race(sends);
      let updates: unknown;
      try {
        updates = await api.call('getUpdates', { offset: state.offset(), limit, timeout: pollTimeoutS, allowed_updates: ['message', 'callback_query'] }, { timeoutMs: (pollTimeoutS + 15) * 1000, signal: stop.signal });
        delay = retryMin;
        limit = Math.min(limit * 2, BATCH);
      } catch (e) {
        if (stop.signal.aborted) break;
        const f = e instanceof TelegramError ? e.failure : { kind: 'network' as const, message: String(e) };
        if (f.kind === 'oversize') {
          // The same request would bring the same answer: ask for fewer. One update alone too large is skipped
          // (confirmed unread: nothing of it can be answered), or the bot would ask for it for ever.
          if (limit > 1) {
            limit = Math.ceil(limit / 2);
            log.warn('telegram getUpdates answer too large; asking for fewer updates', { channel, limit });
            continue;
          }
          const id = Number(/"update_id"\s*:\s*(\d+)/.exec(f.head)?.[1]);
          if (Number.isSafeInteger(id)) {
            log.warn('telegram update too large to read skipped', { channel, update_id: id, max_bytes: MAX_ANSWER_BYTES });
            // Below the offset, the update ids started over (as for a readable answer, below).
            if (id < state.offset()) state.restart(id + 1);
            else state.advance(id + 1);
            continue;
          }
        }
        const wait = f.kind === 'flood' ? f.retryAfterMs : delay;
        log.warn('telegram getUpdates failed; retrying', { channel, kind: f.kind, error: f.message, retry_in_ms: wait });
        await sleep(wait);
        if (f.kind !== 'flood') delay = Math.min(delay * 2, retryMax);
        continue;
      }
      const batch: unknown[] = Array.isArray(updates) ? updates : [updates];
      const usable = batch.filter(hasUpdateId).sort((x, y) => x.update_id - y.update_id);
      // Without an update_id no offset can confirm an entry: it is skipped, and a batch of nothing else is
      // paced like an empty short poll instead of being fetched again at once.
      if (usable.length < batch.length) log.warn('telegram update without a usable update_id skipped', { channel, count: batch.length - usable.length });
      if (usable.length === 0 && (batch.length > 0 || pollTimeoutS === 0)) await sleep(1000);
      // Bot API (getUpdates, Update.update_id): an offset inside the update queue is answered with updates at or
      // above it. Only a queue that started over (after a week without updates the next id is random, as often
      // lower as higher) refuses an offset past its tail and serves from its head: an answer wholly below the
      // offset holds new updates, and the offset follows the server. In an answer that mixes both, what is below
      // the offset was seen before and is skipped.
      const highest = usable[usable.length - 1]?.update_id;
      if (highest !== undefined && highest < state.offset()) {
        log.warn('telegram update ids started over below the offset; following the server', { channel, offset: state.offset(), update_id: usable[0].update_id });
        state.restart(usable[0].update_id);
      }
      // What is below the offset (or repeated in this answer) was seen before: never twice.
      const fresh: typeof usable = [];
      let next = state.offset();
      for (const raw of usable.slice(0, BATCH)) {
        if (raw.update_id < next) continue;
        fresh.push(raw);
        next = raw.update_id + 1;
      }
      const checked = fresh.map((raw) => checkUpdate(raw));
      checked.forEach((u, i) => typeof u === 'string' && log.warn('telegram update skipped', { channel, update_id: fresh[i].update_id, reason: u }));
      // The whole answer is journaled, then confirmed: two syncs, however many updates it holds.
      state.accept(checked.flatMap((u) => (typeof u !== 'string' && u.message ? [{ update_id: u.update_id, chat_id: u.message.chat.id, message_id: u.message.message_id }] : [])));
      state.advance(next);
      for (const u of checked) {
        if (typeof u === 'string') continue;
        try {
          if (u.message) onMessage(u, deliver);
          else void onCallback(u.callback_query).catch((e) => log.error('telegram callback failed', { channel, update_id: u.update_id, error: String(e) }));
        } catch (e) {
          log.error('telegram update failed', { channel, update_id: u.update_id, error: e instanceof Error ? e.message : String(e) });
        }
      }
    }
  };

  return {
    name: `channel:${channel}`,
    closed,
    observe(gate) {
      return {
        channel: gate.channel,
        check(user, text) {
          const v = gate.check(user, text);
          if (v.allow) lastAllowed = v.user;
          return v;
        },
      };
    },
    start(deliver) {
      void poll(deliver).catch((e) => log.error('telegram poller stopped', { channel, error: e instanceof Error ? e.message : String(e) }));
    },
    notify(n) {
      const m = n as { method?: string; params?: Record<string, unknown> };
      if (m.method === 'claw.tool.approval_requested' && m.params) void askApproval(m.params);
    },
    async close() {
      stop.abort();
      for (const f of inflight.values()) f.stopTyping?.();
      for (const a of approvals.values()) clearTimeout(a.timer);
      approvals.clear();
      // Answers already on their way get a bounded moment to go out.
      await Promise.race([Promise.allSettled([...sends]), new Promise((r) => setTimeout(r, 5000).unref?.())]);
      closedResolve();
    },
  };
}
