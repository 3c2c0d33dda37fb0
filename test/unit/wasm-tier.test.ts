// The memory budget → V8 compiler tier decision for sql.js (docs/memory.md "Memory budget").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { budgetFromEnv, cgroupMemoryLimit, chooseWasmTier, machineWasmTier, v8FlagsFor } from '../../src/node/wasm-tier.ts';

const GB = 1024 ** 3;
const MB = 1024 ** 2;

test('no budget given (no variable, no cgroup limit): the physical memory decides', () => {
  assert.equal(chooseWasmTier({ physicalBytes: 24 * GB }), { tier: 'optimizing', budgetMb: 24576, source: 'physical' });
  assert.equal(chooseWasmTier({ physicalBytes: 512 * MB }), { tier: 'baseline', budgetMb: 512, source: 'physical' });
  assert.equal(chooseWasmTier({}), { tier: 'baseline', source: 'none' });
});

test('a budget given in the environment: optimizing from 1024 MB, capped by physical memory; it wins over a cgroup limit', () => {
  assert.equal(chooseWasmTier({ configuredMb: 1024, physicalBytes: 24 * GB }), { tier: 'optimizing', budgetMb: 1024, source: 'env' });
  assert.equal(chooseWasmTier({ configuredMb: 1023, physicalBytes: 24 * GB }), { tier: 'baseline', budgetMb: 1023, source: 'env' });
  assert.equal(chooseWasmTier({ configuredMb: 4096, physicalBytes: 512 * MB }), { tier: 'baseline', budgetMb: 512, source: 'env' });
  assert.equal(chooseWasmTier({ configuredMb: 256, cgroupLimitBytes: 8 * GB, physicalBytes: 24 * GB }).tier, 'baseline');
});

test('a cgroup limit is a budget: 256 MB → baseline, 2 GB → optimizing', () => {
  assert.equal(chooseWasmTier({ cgroupLimitBytes: 256 * MB, physicalBytes: 24 * GB }), { tier: 'baseline', budgetMb: 256, source: 'cgroup' });
  assert.equal(chooseWasmTier({ cgroupLimitBytes: 2 * GB, physicalBytes: 24 * GB }), { tier: 'optimizing', budgetMb: 2048, source: 'cgroup' });
});

const files = (m: Record<string, string>) => (p: string) => m[p];

test('cgroup v2: memory.max of the process group; "max" is no limit', () => {
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/system.slice/claw.service\n', '/sys/fs/cgroup/system.slice/claw.service/memory.max': '268435456\n' })), 256 * MB);
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/user.slice\n', '/sys/fs/cgroup/user.slice/memory.max': 'max\n' })), undefined);
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '536870912' })), 512 * MB);
});

test('cgroup v1: memory.limit_in_bytes of the memory controller group; the "unlimited" value is no limit', () => {
  const cg = '4:memory:/process_api/abc\n3:cpuset:/\n';
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': cg, '/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': '134217728\n' })), 128 * MB);
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': cg, '/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes': '9223372036854771712\n' })), undefined);
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '5:cpu,memory:/\n', '/sys/fs/cgroup/memory/memory.limit_in_bytes': '1073741824' })), GB);
});

test('cgroup: a limit on an ancestor group binds the whole subtree (a systemd slice, a container parent); the smallest wins', () => {
  // v2: MemoryMax= on board.slice, the service's own group unlimited
  const v2 = '0::/board.slice/claw.service\n';
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': v2, '/sys/fs/cgroup/board.slice/claw.service/memory.max': 'max\n', '/sys/fs/cgroup/board.slice/memory.max': String(128 * MB) })), 128 * MB);
  assert.is(
    cgroupMemoryLimit(files({ '/proc/self/cgroup': v2, '/sys/fs/cgroup/board.slice/claw.service/memory.max': String(512 * MB), '/sys/fs/cgroup/board.slice/memory.max': String(128 * MB) })),
    128 * MB,
  );
  // v1 (as on this host: a child group of a limited one, the child unlimited)
  const v1 = '4:memory:/claw-probe/child\n3:cpuset:/\n';
  const unlimited = '9223372036854771712\n';
  assert.is(
    cgroupMemoryLimit(files({ '/proc/self/cgroup': v1, '/sys/fs/cgroup/memory/claw-probe/child/memory.limit_in_bytes': unlimited, '/sys/fs/cgroup/memory/claw-probe/memory.limit_in_bytes': String(128 * MB), '/sys/fs/cgroup/memory/memory.limit_in_bytes': unlimited })),
    128 * MB,
  );
  // a container that mounts its own group at the root: the long name in /proc/self/cgroup is not under the mount
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '4:memory:/docker/0123abcd\n', '/sys/fs/cgroup/memory/memory.limit_in_bytes': String(256 * MB) })), 256 * MB);
  // hybrid: both hierarchies present, the smaller one binds
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '4:memory:/a\n0::/a\n', '/sys/fs/cgroup/memory/a/memory.limit_in_bytes': String(300 * MB), '/sys/fs/cgroup/a/memory.max': String(200 * MB) })), 200 * MB);
});

test('cgroup: nothing readable, or garbage, is no limit', () => {
  assert.is(cgroupMemoryLimit(() => undefined), undefined);
  assert.is(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/x\n', '/sys/fs/cgroup/x/memory.max': 'lots' })), undefined);
});

test('CLAW_MEMORY_BUDGET_MB: a positive integer, else ignored', () => {
  assert.is(budgetFromEnv({ CLAW_MEMORY_BUDGET_MB: '256' }), 256);
  assert.is(budgetFromEnv({ CLAW_MEMORY_BUDGET_MB: ' 2048 ' }), 2048);
  for (const bad of ['', '0', '-5', '1.5', 'lots', '1e3']) assert.is(budgetFromEnv({ CLAW_MEMORY_BUDGET_MB: bad }), undefined, bad);
  assert.is(budgetFromEnv({}), undefined);
});

test('machineWasmTier: the environment wins over the cgroup; baseline is --liftoff-only, optimizing sets nothing', () => {
  const io = (env: Record<string, string>) => ({ env, readText: files({ '/proc/self/cgroup': '0::/a\n', '/sys/fs/cgroup/a/memory.max': String(256 * MB) }), totalmem: () => 24 * GB });
  assert.equal(machineWasmTier(io({})), { tier: 'baseline', budgetMb: 256, source: 'cgroup' });
  assert.equal(machineWasmTier(io({ CLAW_MEMORY_BUDGET_MB: '4096' })), { tier: 'optimizing', budgetMb: 4096, source: 'env' });
  assert.is(v8FlagsFor('baseline'), '--liftoff-only');
  assert.is(v8FlagsFor('optimizing'), undefined);
});

test.run();
