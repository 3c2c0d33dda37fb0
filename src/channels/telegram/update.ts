// The shape check every getUpdates entry passes before it is used (Bot API "Update": an update_id and at
// most one of message, callback_query, …; a Message has chat.id, a CallbackQuery has from). Only the two
// requested kinds are served, so an entry needs exactly one of them. The server is trusted for transport,
// not for shape: an entry that does not fit is skipped, never allowed to stop polling.

export interface Message {
  message_id: number;
  from?: { id: number; is_bot?: boolean };
  chat: { id: number };
  text?: unknown;
}
export interface CallbackQuery {
  id: string;
  from: { id: number };
  data?: string;
}
export type Update = { update_id: number } & ({ message: Message; callback_query?: never } | { callback_query: CallbackQuery; message?: never });

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is number => Number.isSafeInteger(v);

/** An entry whose update_id can confirm it (offset = update_id + 1). */
export const hasUpdateId = (u: unknown): u is Obj & { update_id: number } => isObj(u) && isId(u.update_id);

/** The update, or why it is skipped (a fixed phrase: never any of the update's text). */
export function checkUpdate(u: Obj & { update_id: number }): Update | string {
  const kinds = Object.keys(u).filter((k) => k !== 'update_id');
  if (kinds.length !== 1) return kinds.length ? 'several kinds in one update' : 'empty update';
  const { message: m, callback_query: q } = u;
  if (isObj(m)) {
    if (!isObj(m.chat) || !isId(m.chat.id) || !isId(m.message_id)) return 'message without chat.id or message_id';
    return m.from === undefined || (isObj(m.from) && isId(m.from.id)) ? (u as Update) : 'message with a malformed from';
  }
  if (isObj(q)) {
    return typeof q.id === 'string' && isObj(q.from) && isId(q.from.id) && (q.data === undefined || typeof q.data === 'string') ? (u as Update) : 'callback_query without id or from';
  }
  return 'neither a message nor a callback_query';
}
