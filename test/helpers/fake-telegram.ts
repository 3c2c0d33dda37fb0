// A fake Telegram Bot API server on loopback for tests (docs/channels.md "Telegram"): POST
// /bot{token}/{method} with a JSON body, answered like the real API ({ok, result} or {ok: false,
// error_code, description, parameters}). Each token is its own bot with its own update queue. It records
// every request, serves updates to getUpdates (long polling, the offset confirming earlier ones as Telegram
// does), and can be told to answer the next call of a method with a 429 (retry_after), a 500, or a dropped
// connection, or to forget confirmations (serve already-confirmed updates again, as after a lost ack).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface RecordedCall {
  token: string;
  method: string;
  params: Record<string, any>;
  at: number;
}

export type Fault = { kind: '429'; retryAfter: number } | { kind: '500' } | { kind: 'drop' } | { kind: '400'; description?: string };

interface Bot {
  updates: any[];
  confirmed: number;
  nextUpdateId: number;
  nextMessageId: number;
  waiters: Set<() => void>;
  /** Per method, what its next calls meet: a fault, or null (served normally). */
  faults: Map<string, (Fault | null)[]>;
  /** Groups upgraded to supergroups: old chat id → new one. */
  migrated: Map<number, number>;
}

export interface FakeTelegram {
  url: string;
  calls: RecordedCall[];
  /** Queue a text message from user `from` (private chat: chat id = user id unless given). */
  message(token: string, from: number, text: string, chat?: number): number;
  /**
   * Queue a text message whose update carries `bytes` more of JSON (a long `entities` list, as a message full of
   * links or formatting has): for answers larger than the client reads.
   */
  bulky(token: string, from: number, text: string, bytes: number): number;
  /** Queue a press of an inline button. */
  press(token: string, from: number, data: string, message: { chat_id: number; message_id: number }): number;
  /** The next `count` calls of `method` fail this way (after `after` calls served normally). */
  fail(token: string, method: string, fault: Fault, count?: number, after?: number): void;
  /** Serve every update again from `fromId` on, as if Telegram had lost the confirmations. */
  forget(token: string, fromId: number): void;
  /**
   * The bot's update queue starts over with ids from `firstId` (Bot API, Update.update_id: after a week without
   * updates the next id is chosen at random, lower than the last one as often as not). Queued updates are dropped.
   */
  restartQueue(token: string, firstId: number): void;
  /**
   * The group `from` is upgraded to the supergroup `to`: as Telegram, a send to the old id is refused with 400
   * and `parameters.migrate_to_chat_id` (Bot API, ResponseParameters), and the group's messages come from `to`.
   */
  migrateChat(token: string, from: number, to: number): void;
  sent(token: string, chat?: number): RecordedCall[];
  waitFor(pred: (c: RecordedCall[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startFakeTelegram(): Promise<FakeTelegram> {
  const bots = new Map<string, Bot>();
  const calls: RecordedCall[] = [];
  const sockets = new Set<Socket>();
  const bot = (token: string): Bot => {
    let b = bots.get(token);
    if (!b) bots.set(token, (b = { updates: [], confirmed: 0, nextUpdateId: 500, nextMessageId: 9000, waiters: new Set(), faults: new Map(), migrated: new Map() }));
    return b;
  };
  const push = (b: Bot, u: Record<string, unknown>) => {
    const id = b.nextUpdateId++;
    b.updates.push({ update_id: id, ...u });
    for (const w of [...b.waiters]) w();
    return id;
  };
  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const m = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(req.url ?? '');
    let raw = '';
    for await (const c of req) raw += c;
    if (!m || req.method !== 'POST') return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = m;
    let params: Record<string, any> = {};
    try {
      params = raw ? JSON.parse(raw) : {};
    } catch {
      return reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
    }
    calls.push({ token, method, params, at: Date.now() });
    const b = bot(token);
    const fault = b.faults.get(method)?.shift();
    if (fault?.kind === '429') return reply(res, 429, { ok: false, error_code: 429, description: `Too Many Requests: retry after ${fault.retryAfter}`, parameters: { retry_after: fault.retryAfter } });
    if (fault?.kind === '500') return reply(res, 500, { ok: false, error_code: 500, description: 'Internal Server Error' });
    if (fault?.kind === 'drop') return req.socket.destroy();
    if (fault?.kind === '400') return reply(res, 400, { ok: false, error_code: 400, description: fault.description ?? 'Bad Request' });
    const movedTo = typeof params.chat_id === 'number' ? b.migrated.get(params.chat_id) : undefined;
    if (movedTo !== undefined && method !== 'getUpdates')
      return reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: group chat was upgraded to a supergroup chat', parameters: { migrate_to_chat_id: movedTo } });
    switch (method) {
      case 'getUpdates': {
        const offset = typeof params.offset === 'number' ? params.offset : 0;
        // As Telegram's update queue (tdlib TQueue behind telegram-bot-api): an offset within the queue confirms
        // every update below it, for good; one past the queue's tail (more than 10 ids ahead) or far behind its
        // head is refused and the queue is served from its head, without confirming anything.
        const tail = b.nextUpdateId;
        const head = b.updates.find((u) => u.update_id >= b.confirmed)?.update_id ?? tail;
        let from = offset;
        if (offset <= 0 || offset > tail + 10 || offset < head - 100_000) from = head;
        else if (offset > b.confirmed) b.confirmed = offset;
        const ready = () => b.updates.filter((u) => u.update_id >= b.confirmed && u.update_id >= from);
        const timeoutMs = Math.min(Number(params.timeout ?? 0), 2) * 1000;
        if (ready().length === 0 && timeoutMs > 0) {
          await new Promise<void>((resolve) => {
            const done = () => (clearTimeout(t), b.waiters.delete(done), resolve());
            const t = setTimeout(done, timeoutMs);
            b.waiters.add(done);
            req.socket.once('close', done);
          });
        }
        if (res.destroyed || res.writableEnded) return;
        // Bot API getUpdates: `limit` 1-100, default 100.
        const limit = Math.min(Math.max(Number(params.limit ?? 100) || 100, 1), 100);
        return reply(res, 200, { ok: true, result: ready().slice(0, limit) });
      }
      case 'sendMessage':
        // As Telegram: the text is taken without its leading and trailing white space; nothing left is refused.
        if (typeof params.text !== 'string' || params.text.trim().length === 0) return reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
        // As Telegram: text must be UTF-8, and a "\ud800" escape of a lone surrogate is not.
        if (/\p{Cs}/u.test(params.text)) return reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: text must be encoded in UTF-8' });
        if (params.text.length > 4096) return reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
        return reply(res, 200, { ok: true, result: { message_id: b.nextMessageId++, chat: { id: params.chat_id }, date: Math.floor(Date.now() / 1000), text: params.text } });
      case 'sendChatAction':
      case 'answerCallbackQuery':
      case 'editMessageText':
        return reply(res, 200, { ok: true, result: true });
      default:
        return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
    }
  };

  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  server.on('connection', (s) => (sockets.add(s), s.on('close', () => sockets.delete(s))));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const api: FakeTelegram = {
    url,
    calls,
    message: (token, from, text, chat = from) =>
      push(bot(token), { message: { message_id: Math.floor(Math.random() * 1e6), from: { id: from, is_bot: false, first_name: `u${from}` }, chat: { id: chat, type: chat === from ? 'private' : 'group' }, date: Math.floor(Date.now() / 1000), text } }),
    bulky: (token, from, text, bytes) =>
      push(bot(token), {
        message: {
          message_id: Math.floor(Math.random() * 1e6),
          from: { id: from, is_bot: false, first_name: `u${from}` },
          chat: { id: from, type: 'private' },
          date: Math.floor(Date.now() / 1000),
          text,
          entities: Array.from({ length: Math.ceil(bytes / 40) }, (_, i) => ({ type: 'bold', offset: i % 4096, length: 1 })),
        },
      }),
    press: (token, from, data, message) =>
      push(bot(token), { callback_query: { id: `cb-${Math.random().toString(36).slice(2)}`, from: { id: from, is_bot: false, first_name: `u${from}` }, chat_instance: 'x', data, message: { message_id: message.message_id, chat: { id: message.chat_id, type: 'private' }, date: 0 } } }),
    fail(token, method, fault, count = 1, after = 0) {
      const b = bot(token);
      const list = b.faults.get(method) ?? [];
      for (let i = 0; i < after; i++) list.push(null);
      for (let i = 0; i < count; i++) list.push(fault);
      b.faults.set(method, list);
    },
    forget(token, fromId) {
      bot(token).confirmed = fromId;
    },
    restartQueue(token, firstId) {
      const b = bot(token);
      b.updates = [];
      b.nextUpdateId = firstId;
      b.confirmed = firstId;
    },
    migrateChat(token, from, to) {
      bot(token).migrated.set(from, to);
    },
    sent: (token, chat) => calls.filter((c) => c.token === token && c.method === 'sendMessage' && (chat === undefined || c.params.chat_id === chat)),
    async waitFor(pred, timeoutMs = 15_000, what = 'condition') {
      const until = Date.now() + timeoutMs;
      while (!pred(calls)) {
        if (Date.now() > until) throw new Error(`fake telegram: timed out waiting for ${what}; calls: ${JSON.stringify(calls.filter((c) => c.method !== 'getUpdates').slice(-10))}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      for (const b of bots.values()) for (const w of [...b.waiters]) w();
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  return api;
}
