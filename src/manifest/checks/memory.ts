// Memory rules (spec §5.6) and WorldModel rules (spec §5.7).
import type { Checker } from './context.ts';
import { describe, isObj, specOf } from './context.ts';

const MEMORY = '§5.6';
const WORLD = '§5.7';

export function checkMemory(c: Checker): void {
  const mem = c.m.memory;
  const spec = specOf(mem);
  if (!mem || !spec || !Array.isArray(spec.stores)) return;

  const seen = new Map<string, number>();
  spec.stores.forEach((store: unknown, i: number) => {
    if (!isObj(store)) return;
    // Stores are addressed by name (claw.memory.* `store` param, spec §9.3.4): two stores with one
    // name make those calls ambiguous.
    if (typeof store.name === 'string') {
      const first = seen.get(store.name);
      if (first !== undefined) {
        c.report(mem, ['stores', i, 'name'], 'memory-store-name-duplicate', MEMORY, `${describe(mem)}: store name '${store.name}' is already used by stores[${first}]`);
      } else seen.set(store.name, i);
    }
    // embedding.provider_ref "References a Provider primitive".
    if (isObj(store.embedding) && store.embedding.provider_ref !== undefined) {
      c.ref(mem, ['stores', i, 'embedding', 'provider_ref'], 'Provider', store.embedding.provider_ref, MEMORY);
    }
  });
}

export function checkWorldModels(c: Checker): void {
  for (const w of c.m.worldModels) {
    const spec = specOf(w);
    if (!spec) continue;
    // "If memory_ref is present, it MUST resolve to a declared Memory primitive."
    if (spec.memory_ref !== undefined) c.ref(w, ['memory_ref'], 'Memory', spec.memory_ref, WORLD);
    // "If constraints.policy_ref is present, it MUST resolve to a declared Policy primitive."
    if (isObj(spec.constraints) && spec.constraints.policy_ref !== undefined) {
      c.ref(w, ['constraints', 'policy_ref'], 'Policy', spec.constraints.policy_ref, WORLD);
    }
    // backend.ref names a Tool or a Provider according to backend.type (§4.2 "WorldModel
    // references → Tool | Provider"); type 'custom' is runtime-specific and not checked.
    if (isObj(spec.backend)) {
      const kind = spec.backend.type === 'tool' ? 'Tool' : spec.backend.type === 'provider' ? 'Provider' : undefined;
      if (kind) c.ref(w, ['backend', 'ref'], kind, spec.backend.ref, WORLD);
    }
  }
}
