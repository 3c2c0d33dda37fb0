// Code-cache build (docs/startup.md): assembles dist/claw.mjs from the boot loader (targets/boot.ts) and the
// cold build's output (scripts/build/cold.mjs with externalPayloads, hot code as a CommonJS body). Layout:
//
//   #!/usr/bin/env node
//   <boot loader, minified ESM>
//   function __CLAW_HOT__(){/*claw-hot <id>
//   (function(require,module,exports,__claw_url,__claw_payload,__claw_boot){"use strict";<hot code>
//   })
//   claw-cold <id>
//   <group 0 base64>
//   ...
//   */}
//
// One comment holds everything but the loader: Node's ESM parser skips it at scanner speed. It is the body of a
// function the loader never calls: that function's source text (Function.prototype.toString) is a slice of the
// module source V8 already holds, so the loader cuts the hot code for vm.Script (which can take a V8 code
// cache; an ES module cannot on Node 20) and, when first needed, a cold group out of it without reading the
// file again or copying (it still can read the file, where an engine's toString is not the exact text).
// A "*" + "/" inside the hot code is stored as "*" + NUL (same length, so columns in stack traces hold; NUL never
// occurs in esbuild's ASCII output); that costs a copy of the hot code at start, so the build says when it
// happens (the sources avoid it).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';

const PLACEHOLDER = '__CLAW_BOOT__';
/** The function whose body is the comment (targets/boot.ts declares it). */
const HOT_FN = '__CLAW_HOT__';
const pad = (n) => String(n).padStart(10);

/** The loader bundle, minified, with `__CLAW_BOOT__` left as a global to substitute. */
async function loaderCode(base) {
  const r = await build({
    ...base,
    entryPoints: ['targets/boot.ts'],
    format: 'esm',
    banner: undefined,
    define: {},
    supported: {},
    write: false,
    metafile: false,
    outfile: 'boot.mjs',
    plugins: [],
  });
  const code = r.outputFiles[0].text.trimEnd();
  if (code.split(PLACEHOLDER).length !== 2) throw new Error(`boot build: expected one ${PLACEHOLDER} in the loader`);
  if (!code.includes(HOT_FN)) throw new Error(`boot build: the loader does not refer to ${HOT_FN}`);
  return code;
}

/**
 * The text of dist/claw.mjs. `hotCode`: the CommonJS hot bundle (expects require, module, exports, __claw_url,
 * __claw_payload, __claw_boot: src/node/boot-info.ts); `payloads`: the cold groups' base64 text.
 */
export async function assembleBoot(base, { hotCode, payloads }) {
  const body = `(function(require,module,exports,__claw_url,__claw_payload,__claw_boot){"use strict";${hotCode.trimEnd()}\n})`;
  // ASCII only: the loader slices bytes as latin1, and a non-ASCII character would make Node hold the whole
  // file as a two-byte string. NUL is the escape of "*/".
  if (/[^\x01-\x7f]/.test(body)) throw new Error('boot build: the hot code contains NUL or a non-ASCII character');
  for (const p of payloads) if (!/^[A-Za-z0-9+/=]*$/.test(p)) throw new Error('boot build: a payload is not base64');
  const esc = body.includes('*/');
  const stored = esc ? body.replaceAll('*/', '*\0') : body;
  const id = createHash('sha256').update(stored).update('\n').update(payloads.join('\n')).digest('hex').slice(0, 16);

  const loader = await loaderCode(base);
  const literal = (v) =>
    `{id:${JSON.stringify(id)},fn:${pad(v.fn)},hot:[${v.hot.map(pad).join(',')}],esc:${esc},coldMark:${pad(v.coldMark)},cold:[${v.cold.map((c) => `[${c.map(pad).join(',')}]`).join(',')}]}`;
  const zero = { fn: 0, hot: [0, 0, 0, 0], coldMark: 0, cold: payloads.map(() => [0, 0]) };
  const FN = `function ${HOT_FN}(){`;
  const head = (v) => `#!/usr/bin/env node\n${loader.replace(PLACEHOLDER, literal(v))}\n${FN}/*claw-hot `;
  // Offsets: the head's length does not depend on the values (fixed-width numbers).
  let at = head(zero).length;
  const fn = at - FN.length - '/*claw-hot '.length;
  const hotMark = at;
  at += id.length + 1; // id + "\n"
  const hotStart = at;
  at += stored.length;
  const hotEnd = at;
  at += '\nclaw-cold '.length;
  const coldMark = at;
  at += id.length + 1;
  const cold = payloads.map((p) => {
    const c = [at, at + p.length];
    at += p.length + 1;
    return c;
  });
  const prefix = head(zero);
  const line = (prefix.match(/\n/g)?.length ?? 0) + 1; // the hot code starts on the line after "/*claw-hot <id>"
  const values = { fn, hot: [hotMark, hotStart, hotEnd, line], coldMark, cold };
  const text = `${head(values)}${id}\n${stored}\nclaw-cold ${id}\n${payloads.join('\n')}\n*/}\n`;
  if (head(values).length !== prefix.length) throw new Error('boot build: loader length changed with the offsets');
  if (!text.startsWith(FN, fn) || text.slice(hotStart, hotEnd) !== stored || text.slice(coldMark, coldMark + id.length) !== id) throw new Error('boot build: offsets do not match');
  return { text, id, loaderBytes: loader.length, escaped: esc };
}
