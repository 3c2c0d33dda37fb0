// Shared set-up for the provider tests: deps with a real clock (timeouts are real), a SecretResolver
// over a fake environment, an in-memory ledger, and a sleep that records the waits instead of waiting.
import { TokenLedger } from '../../src/kernel/ledger.ts';
import type { ChatMessage } from '../../src/kernel/ports.ts';
import { SecretResolver } from '../../src/kernel/secrets.ts';
import { Redactor } from '../../src/log/redactor.ts';
import { systemClock } from '../../src/node/clock.ts';
import type { ProviderDeps } from '../../src/provider/deps.ts';
import type { ResolvedPrimitive } from '../../src/manifest/resolved.ts';
import { captureLogger, makeManifest, primitive } from './helpers/fakes.ts';
import { MemLedgerStore } from './helpers/gate-fakes.ts';

export const SECRET = 'sk-test-Zq8v1c2TOPSECRET';

export const prov = (name: string, spec: Record<string, unknown>): ResolvedPrimitive => primitive('Provider', name, spec);

export function setup(providers: ResolvedPrimitive[], over: Partial<ProviderDeps> = {}) {
  const sleeps: number[] = [];
  const log = captureLogger();
  const redactor = new Redactor();
  const store = new MemLedgerStore();
  const deps: ProviderDeps = {
    manifest: makeManifest(1, { providers }),
    ledger: new TokenLedger(store, systemClock),
    secrets: new SecretResolver({ env: { LLM_KEY: SECRET } }, redactor),
    clock: systemClock,
    log,
    random: () => 0.5,
    sleep: async (ms) => void sleeps.push(ms),
    timeoutMs: 3000,
    ...over,
  };
  return { deps, sleeps, log, store, redactor };
}

export const sys = (content: string): ChatMessage => ({ role: 'system', content });
export const user = (content: string): ChatMessage => ({ role: 'user', content });
export const assistant = (content: string): ChatMessage => ({ role: 'assistant', content });

export const signal = () => new AbortController().signal;

/** The rejection of a promise (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
