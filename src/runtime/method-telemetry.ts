// §5.11 `memory_ops` and `swarm_ops`: every claw.memory.* / claw.swarm.* call reported with its
// duration and outcome. One wrapper around a module's method table, so the modules stay unaware of
// telemetry and no call path is missed. Only names, durations and codes are reported: never entries'
// content or task payloads.
import { ProtocolError } from '../protocol/errors.ts';
import type { KernelModule } from '../kernel/agent.ts';
import type { MethodSpec } from '../kernel/methods/index.ts';
import type { Clock } from '../kernel/ports.ts';
import { timed } from './timed.ts';

export function withMethodTelemetry<M extends KernelModule>(module: M, category: 'memory_ops' | 'swarm_ops', clock: Clock): M {
  const methods: Record<string, MethodSpec> = {};
  for (const [name, spec] of Object.entries(module.methods ?? {})) {
    const event = name.startsWith('claw.') ? name.slice(5) : name; // claw.memory.store → memory.store
    methods[name] = {
      ...spec,
      handler(params, ctx, agent) {
        return timed(
          clock,
          () => spec.handler(params, ctx, agent),
          (duration_ms, _v, err) => {
            agent.telemetry.latency(event, duration_ms);
            const store = (params as { store?: unknown } | undefined)?.store;
            agent.telemetry.emit(category, event, {
              ...(typeof store === 'string' ? { store } : {}),
              duration_ms,
              status: err ? 'error' : 'ok',
              ...(err instanceof ProtocolError ? { code: err.code } : {}),
            });
          },
        );
      },
    };
  }
  // Same module object (its accessors keep working), method table replaced.
  return Object.assign(module, { methods });
}
