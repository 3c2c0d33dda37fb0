// The A2A client's public surface, one module to import() lazily (the CLI commands, the a2a-send port).
export { A2aClient, cardUrlOf, fetchCard, DEFAULT_SEND_TIMEOUT_MS, type A2aReply, type SendOptions } from './client.ts';
export { A2aClientError } from './errors.ts';
export { guardedNet, type A2aNet } from './net.ts';
export type { RemoteCard } from './card.ts';
