// `--listen http://127.0.0.1:8080/ckp` / claw.runtime.yaml `transports: [{ listen: https://…, http: {...} }]`.
// Settings and the safety rules first (a refused configuration is a usage error before anything binds), then
// secrets (bearer tokens by secret_ref, registered with the log redactor) and TLS files, then the bind.
import type { ListenContext, TransportEntry } from '../listen.ts';
import { ClawError } from '../../protocol/errors.ts';
import { httpModule, httpsModule, nodeCrypto } from '../../node/lazy.ts';
import { parseHttpUrl, resolveHttpSettings } from './settings.ts';
import type { HttpOptionsInput } from './options.ts';
import { createAuthenticator } from './auth.ts';
import { createRateLimiter } from './limits.ts';
import { createHttpServer } from './server.ts';
import { createHttpTransport, type HttpTransport } from './transport.ts';

export async function createHttpListener(entry: TransportEntry & { http?: HttpOptionsInput }, ctx: ListenContext): Promise<HttpTransport> {
  const settings = resolveHttpSettings(parseHttpUrl(entry.listen), entry.http, ctx.maxFrameBytes);
  const tokens: { ref: string; value: string; caller: boolean }[] = [];
  for (const [refs, caller] of [[settings.tokenRefs, false], [settings.callerTokenRefs, true]] as const) {
    for (const ref of refs) {
      if (!ctx.secrets) throw new ClawError('secret-unresolved', `bearer token ref "${ref}" needs the runtime's secret resolver`);
      tokens.push({ ref, value: await ctx.secrets.resolve(ref), caller });
    }
  }
  // A token is one principal: the same value under two refs (an operator's and a partner's) would be whichever
  // matched first, an operator (docs/a2a.md "Security").
  tokens.forEach((t, i) => {
    const twin = tokens.findIndex((u, j) => j > i && u.value === t.value);
    if (twin >= 0) throw new ClawError('usage', `secret_refs "${t.ref}" and "${tokens[twin].ref}" hold the same token: give each credential its own`);
  });
  let tls: { cert: string; key: string; ca?: string } | undefined;
  if (settings.endpoint.tls) {
    const read = readerIn(ctx.baseDir);
    tls = { cert: await read(settings.certFile!, 'tls.cert_file'), key: await read(settings.keyFile!, 'tls.key_file') };
    if (settings.clientCaFile) tls.ca = await read(settings.clientCaFile, 'tls.client_ca_file');
  }
  const auth = createAuthenticator(tokens, settings.clientCaFile !== undefined, settings.operatorCns);
  const server = createHttpServer({
    settings,
    auth,
    servesA2a: ctx.servesA2a === true,
    // Monotonic: a board without an RTC boots at 1970 and NTP steps the clock; a wall-clock window would reset
    // (a flood gets a fresh minute) or stall at each step (docs/boards.md "Clock").
    limiter: createRateLimiter(settings.requestsPerMinute, () => ctx.clock.monotonic()),
    monotonic: () => ctx.clock.monotonic(),
    log: ctx.log,
    tls,
    http: await httpModule(),
    https: tls ? await httpsModule() : undefined,
  });
  try {
    await server.listen();
  } catch (e) {
    throw new ClawError('usage', `cannot listen on ${entry.listen}: ${(e as Error).message}`, { cause: e });
  }
  const transport = createHttpTransport({ server, settings, log: ctx.log, epoch: nodeCrypto().randomBytes(4).toString('hex') });
  ctx.log.info('http transport listening', { url: transport.url, auth: auth.configured ? 'required' : 'none (loopback)', tls: settings.endpoint.tls });
  return transport;
}

/** Reads a PEM file relative to the config's directory; the error names the option and path, never content. */
function readerIn(baseDir: string) {
  return async (file: string, option: string): Promise<string> => {
    const path = file.startsWith('/') ? file : `${baseDir.replace(/\/$/, '')}/${file}`;
    try {
      return await (await import('node:fs/promises')).readFile(path, 'utf8');
    } catch (e) {
      throw new ClawError('usage', `cannot read ${option} ${path}: ${(e as NodeJS.ErrnoException).code ?? 'unreadable'}`);
    }
  };
}
