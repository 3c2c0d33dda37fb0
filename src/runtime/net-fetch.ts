// http-fetch's network access: guardedFetch (allowlist, SSRF guard, DNS pinning, redirect checks),
// with a refusal turned into a sandbox violation so the gate answers -32010.
import { guardedFetch, NetworkDenied } from '../net/guarded-fetch.ts';
import { SandboxViolation } from '../tools/types.ts';
import type { NetworkFetch } from '../tools/builtins/http-fetch.ts';

export const sandboxedFetch: NetworkFetch = async (url, init, network) => {
  try {
    return await guardedFetch(url, init, network);
  } catch (e) {
    if (e instanceof NetworkDenied) throw new SandboxViolation(`network.${e.reason}`, e.message);
    throw e;
  }
};
