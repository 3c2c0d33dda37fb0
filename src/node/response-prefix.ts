// Reading an HTTP answer from a server the runtime does not control: at most `cap` bytes are taken, and the
// download is cancelled there, so an endless or huge body costs `cap` bytes of memory and no more time.

/** The first `cap` bytes of a fetch Response's body; `truncated` when the body went on past them. */
export async function readResponsePrefix(res: Response, cap: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(0), truncated: false };
  const parts: Uint8Array[] = [];
  let n = 0;
  let truncated = false;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (n + value.length > cap) {
        parts.push(value.subarray(0, cap - n));
        n = cap;
        truncated = true;
        break;
      }
      parts.push(value);
      n += value.length;
    }
  } finally {
    if (truncated) reader.cancel().catch(() => {});
    else reader.releaseLock();
  }
  const bytes = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, truncated };
}
