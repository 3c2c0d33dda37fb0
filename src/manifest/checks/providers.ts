// Provider rules, spec §5.2.
import { resolveRef } from '../refs.ts';
import type { Checker } from './context.ts';
import { describe, findCycles, isBlank, isObj, specOf } from './context.ts';

const S = '§5.2';

export function checkProviders(c: Checker): void {
  const m = c.m;

  // "A Claw manifest MUST include at least one Provider primitive": the manifest schema's
  // minItems 1; an entry that resolves to nothing (empty glob, missing file) is reported by the loader.

  for (const p of m.providers) {
    const spec = specOf(p);
    if (!spec) continue;

    // "When auth.type is not none, auth.secret_ref MUST be present." The Provider schema (applied to
    // every provider, inline ones included) catches a missing one; a whitespace-only secret_ref
    // passes its minLength 1 while naming no secret, so that case is ours.
    if (isObj(spec.auth) && spec.auth.type !== 'none' && typeof spec.auth.secret_ref === 'string' && isBlank(spec.auth.secret_ref)) {
      c.report(p, ['auth', 'secret_ref'], 'provider-secret-ref', S, `${describe(p)}: auth.secret_ref is blank; it must name a secret when auth.type is '${spec.auth.type}'`);
    }

    if (Array.isArray(spec.fallback)) {
      spec.fallback.forEach((f: unknown, i: number) => {
        if (!isObj(f)) return;
        const rel = ['fallback', i, 'provider_ref'];
        const target = c.ref(p, rel, 'Provider', f.provider_ref, S);
        if (target === p) {
          c.report(p, rel, 'provider-fallback-self', S, `${describe(p)}: fallback[${i}] refers to the provider itself`);
        }
      });
    }
  }

  // Fallback cycles (a → b → a): a chain that loops back would be retried forever. Self-references
  // are reported above, so only cycles through at least two providers are reported here.
  const edges = (name: string) => {
    const p = m.providers.find((x) => x.name === name);
    const spec = specOf(p);
    if (!p || !spec || !Array.isArray(spec.fallback)) return [];
    const out: { to: string; index: number }[] = [];
    spec.fallback.forEach((f: unknown, index: number) => {
      if (!isObj(f) || typeof f.provider_ref !== 'string') return;
      const r = resolveRef(m, 'Provider', f.provider_ref);
      if (r.ok && r.primitive !== p) out.push({ to: r.primitive.name, index });
    });
    return out;
  };
  findCycles(
    m.providers.map((p) => p.name),
    edges,
    (from, edge, path) => {
      const p = m.providers.find((x) => x.name === from)!;
      c.report(p, ['fallback', edge.index, 'provider_ref'], 'provider-fallback-cycle', S, `${describe(p)}: fallback chain loops: ${path.join(' → ')}`);
    },
  );
}
