// A kernel module whose implementation loads with import() at STARTING, only for a session that needs it
// (docs/startup.md): code reachable only through import() is a chunk of its own in the
// build, read and compiled only when first needed (docs/startup.md). The method table (names,
// level, states) is static, so the Agent's method map, runtimeLevel() and supportedGroups() (§11, §9.3.1)
// see the same groups as before; each handler is replaced in place by the implementation's once it is
// loaded, so a call costs no extra promise or indirection after that.
import { ErrorCode, ProtocolError } from '../protocol/errors.ts';
import type { AgentCore, KernelModule, Session } from '../kernel/agent.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';

/** A method as the kernel sees it before its implementation is loaded. */
export type MethodShape = Pick<MethodSpec, 'level' | 'states'>;

export interface LazyModuleOptions<M extends KernelModule> {
  name: string;
  methods?: Record<string, MethodShape>;
  /** Whether this session needs the implementation: false leaves it unloaded and its start skipped. */
  needed(s: Session): boolean;
  load(): Promise<M>;
}

export interface LazyModule<M extends KernelModule> extends KernelModule {
  /** The implementation once a session has needed it (undefined before). */
  impl(): M | undefined;
}

export function lazyModule<M extends KernelModule>(o: LazyModuleOptions<M>): LazyModule<M> {
  let impl: M | undefined;
  let loading: Promise<M> | undefined;
  /** Whether this session started the implementation (so only then is it stopped). */
  let running = false;
  const methods: Record<string, MethodSpec> = {};
  for (const [name, shape] of Object.entries(o.methods ?? {})) {
    methods[name] = {
      level: shape.level,
      states: shape.states,
      // Reached only when a session that did not need the module dispatches one of its methods; the
      // `needed` predicates cover every session whose level lets the kernel dispatch these methods.
      handler() {
        throw new ProtocolError(ErrorCode.InternalError, `Internal error: ${name} is not available in this session`);
      },
    };
  }
  const ensure = async (): Promise<M> => {
    if (impl) return impl;
    loading ??= o.load().then((m) => {
      for (const [name, spec] of Object.entries(methods)) {
        const real = m.methods?.[name];
        // The static table must describe the implementation exactly (a mismatch is a programming error).
        if (!real || real.level !== spec.level || real.states.join() !== spec.states.join()) throw new Error(`lazy module ${o.name}: method ${name} does not match its implementation`);
        spec.handler = real.handler;
      }
      return (impl = m);
    });
    try {
      return await loading;
    } catch (e) {
      loading = undefined;
      throw e;
    }
  };
  return {
    name: o.name,
    methods,
    impl: () => impl,
    async start(s: Session, core: AgentCore) {
      running = false;
      if (!o.needed(s)) return;
      const m = await ensure();
      await m.start?.(s, core);
      running = true;
    },
    async stop(s: Session) {
      if (!running) return;
      running = false;
      await impl?.stop?.(s);
    },
  };
}
