// sandbox.schema.json `spec` (spec §5.8) — identical in 0.2.0 and 0.3.0.
import * as v from 'valibot';
import { bool, int0, str, strList, strict, lazySchema } from './helpers.ts';

export const SANDBOX_LEVELS = ['none', 'process', 'wasm', 'container', 'vm'] as const;

// Built on first use, not at import (docs/startup.md): a `claw run` whose manifest has no such primitive
// never constructs these valibot schemas (~830 were built before the first reply, most for primitives the
// manifest did not have).
const build = () => {
  const capabilities = strict({
    network: v.optional(
      strict({
        mode: v.optional(v.picklist(['deny', 'allowlist', 'allow-all'])),
        allowed_hosts: v.optional(strList),
        ssrf_protection: v.optional(
          strict({ enabled: v.optional(bool), block_private_ips: v.optional(bool), dns_pinning: v.optional(bool) }),
        ),
      }),
    ),
    filesystem: v.optional(
      strict({
        mode: v.optional(v.picklist(['deny', 'read-only', 'scoped', 'full'])),
        mount_paths: v.optional(v.array(strict({ path: str, permissions: v.picklist(['ro', 'rw']) }))),
        denied_paths: v.optional(strList),
      }),
    ),
    secrets: v.optional(
      strict({
        injection: v.optional(v.picklist(['host-boundary', 'environment', 'file-mount'])),
        encryption: v.optional(str),
        leak_detection: v.optional(strict({ enabled: v.optional(bool), patterns: v.optional(int0) })),
      }),
    ),
    shell: v.optional(
      strict({
        mode: v.optional(v.picklist(['deny', 'restricted', 'full'])),
        blocked_commands: v.optional(strList),
        blocked_patterns: v.optional(strList),
      }),
    ),
  });

  const sandboxSpec = strict({
    level: v.picklist(SANDBOX_LEVELS),
    runtime: v.optional(v.picklist(['docker', 'apple-container', 'wasmtime', 'firecracker', 'gvisor', 'native'])),
    capabilities: v.optional(capabilities),
    resource_limits: v.optional(
      strict({
        memory_mb: v.optional(int0),
        cpu_shares: v.optional(int0),
        max_processes: v.optional(int0),
        max_open_files: v.optional(int0),
        timeout_ms: v.optional(int0),
        max_output_bytes: v.optional(int0),
      }),
    ),
  });
  return { sandboxSpec };
};
let built: ReturnType<typeof build> | undefined;
const parts = () => (built ??= build());

export const sandboxSpec = lazySchema(() => parts().sandboxSpec);
