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
