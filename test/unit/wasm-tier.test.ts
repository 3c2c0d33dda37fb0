// The memory budget → V8 compiler tier decision for sql.js (docs/memory.md "Memory budget").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyWasmTier, cgroupMemoryLimit, chooseWasmTier, resetAppliedWasmTier } from '../../src/node/wasm-tier.ts';

const GB = 1024 ** 3;
const MB = 1024 ** 2;

test('no budget given (no config, no cgroup limit): baseline, whatever the physical memory', () => {
  assert.equal(chooseWasmTier({ physicalBytes: 24 * GB }), { tier: 'baseline', source: 'none' });
  assert.equal(chooseWasmTier({}), { tier: 'baseline', source: 'none' });
});

test('a configured budget: optimizing from 1024 MB, capped by physical memory; it wins over a cgroup limit', () => {
  assert.equal(chooseWasmTier({ configuredMb: 1024, physicalBytes: 24 * GB }), { tier: 'optimizing', budgetMb: 1024, source: 'config' });
  assert.equal(chooseWasmTier({ configuredMb: 1023, physicalBytes: 24 * GB }), { tier: 'baseline', budgetMb: 1023, source: 'config' });
  assert.equal(chooseWasmTier({ configuredMb: 4096, physicalBytes: 512 * MB }), { tier: 'baseline', budgetMb: 512, source: 'config' });
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

test('applyWasmTier: baseline sets --liftoff-only once; the first decision holds for the process', () => {
  resetAppliedWasmTier();
  const set: string[] = [];
  assert.is(applyWasmTier('baseline', (f) => set.push(f)), 'baseline');
  assert.is(applyWasmTier('optimizing', (f) => set.push(f)), 'baseline');
  assert.equal(set, ['--liftoff-only']);
  resetAppliedWasmTier();
  assert.is(applyWasmTier('optimizing', (f) => set.push(f)), 'optimizing');
  assert.equal(set, ['--liftoff-only'], 'optimizing sets no flag (V8 tiers up by default)');
  resetAppliedWasmTier();
});

test.run();
