// STARTING step 3 (spec §8, "validate auth"): tell the operator early which provider secret_refs do
// not resolve. Only names are logged; the provider call that needs a secret fails on its own later.
import type { KernelModule } from '../kernel/agent.ts';
import type { Logger } from '../kernel/ports.ts';
import type { SecretResolver } from '../kernel/secrets.ts';

export function secretsPreflight(secrets: SecretResolver, log: Logger): KernelModule {
  return {
    name: 'secrets-preflight',
    async start(session) {
      for (const p of session.manifest.providers) {
        const ref = p.spec.auth?.type !== 'none' ? p.spec.auth?.secret_ref : undefined;
        if (typeof ref !== 'string') continue;
        try {
          await secrets.resolve(ref);
        } catch {
          log.warn('provider secret not resolvable yet', { provider: p.name, secret_ref: ref });
        }
      }
    },
  };
}
