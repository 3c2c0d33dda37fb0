// `--listen <uri>` and claw.runtime.yaml `transports:`: which transports a runtime serves besides
// stdio (spec §9.2, runtime profile §6). A table maps a URI scheme to a factory (the runtime's is
// LISTEN_SCHEMES in src/runtime/schemes.ts); each factory loads its adapter lazily.
import type { Clock, Logger, Transport } from '../kernel/ports.ts';
import type { RuntimeConfig } from '../config/runtime-config.ts';
import type { SecretResolver } from '../kernel/secrets.ts';
import { ClawError } from '../protocol/errors.ts';

/** One entry of claw.runtime.yaml `transports:` (a `--listen` URI is an entry with only `listen`). */
export type TransportEntry = NonNullable<RuntimeConfig['transports']>[number];

export interface ListenContext {
  log: Logger;
  clock: Clock;
  /** Relative paths in the URI resolve against this (cwd for --listen, the config's directory for the file). */
  baseDir: string;
  /** The runtime's state directory (data_dir). */
  dataDir: string;
  maxFrameBytes?: number;
  secrets?: SecretResolver;
  /** The launch manifest's agent name, when there is one (topic and presence naming). */
  agentName?: string;
  /**
   * The runtime serves A2A (`a2a.enabled`): its routes join the HTTP listeners after they bind, and client
   * certificates must be told apart as operators or callers from the first request (docs/a2a.md "Security").
   */
  servesA2a?: boolean;
}

/** Builds a transport for one entry; throws ClawError('usage') for a URI it cannot serve. */
export type TransportFactory = (entry: TransportEntry, ctx: ListenContext) => Promise<Transport>;

/** Scheme → factory (src/runtime/schemes.ts holds the runtime's). */
export type ListenTable = Readonly<Record<string, TransportFactory>>;

/** `fs:/dir` → `fs`, `mqtts://h` → `mqtts`; undefined when the string has no scheme. */
export function schemeOf(uri: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*):/i.exec(uri);
  return m ? m[1].toLowerCase() : undefined;
}

/**
 * The transports to serve: every configured entry, then each `--listen` URI not already configured
 * (a --listen naming a configured URI is that entry, options included). Order is kept.
 */
export function listenEntries(cli: readonly string[], config: RuntimeConfig): { entry: TransportEntry; fromConfig: boolean }[] {
  const out: { entry: TransportEntry; fromConfig: boolean }[] = (config.transports ?? []).map((entry) => ({ entry, fromConfig: true }));
  for (const uri of cli) {
    if (out.some((e) => e.entry.listen === uri)) continue;
    out.push({ entry: { listen: uri }, fromConfig: false });
  }
  return out;
}

/** Check every URI's scheme before anything starts (a typo is a usage error, exit 2). */
export function checkSchemes(entries: readonly { entry: TransportEntry }[], table: ListenTable): void {
  for (const { entry } of entries) {
    const scheme = schemeOf(entry.listen);
    if (!scheme || !Object.hasOwn(table, scheme)) {
      const known = Object.keys(table).map((s) => `${s}:`).join(', ');
      throw new ClawError('usage', `cannot listen on "${entry.listen}": unknown transport scheme (known: ${known})`);
    }
  }
}

/** Open every transport; on a failure the ones already open are closed again. */
export async function openTransports(
  entries: readonly { entry: TransportEntry; fromConfig: boolean }[],
  ctx: ListenContext & { configDir?: string },
  table: ListenTable,
): Promise<Transport[]> {
  checkSchemes(entries, table);
  const open: Transport[] = [];
  try {
    for (const { entry, fromConfig } of entries) {
      const factory = table[schemeOf(entry.listen)!];
      open.push(await factory(entry, { ...ctx, baseDir: fromConfig && ctx.configDir ? ctx.configDir : ctx.baseDir }));
    }
  } catch (e) {
    await Promise.all(open.map((t) => t.close().catch(() => {})));
    throw e;
  }
  return open;
}
