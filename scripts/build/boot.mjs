// Code-cache build (docs/startup.md): assembles dist/claw.mjs from the boot loader (targets/boot.ts) and the
// cold build's output (scripts/build/cold.mjs with externalPayloads, hot code as a CommonJS body). Layout:
//
//   #!/usr/bin/env node
//   <boot loader, minified ESM>
//   /*claw-hot <id>
//   (function(require,module,exports,__claw_url,__claw_payload){"use strict";<hot code>
//   })
//   claw-cold <id>
//   <group 0 base64>
//   ...
//   */
//
// One comment holds everything but the loader: Node's ESM parser skips it at scanner speed, and the loader
// reads the hot code back from the file for vm.Script, which can take a V8 code cache (an ES module cannot on
// Node 20). The payloads stay on disk until a group is first needed. A "*" + "/" inside the hot code is stored
// as "*" + NUL (same length, so columns in stack traces hold; NUL never occurs in esbuild's ASCII output).
import { build } from 'esbuild';
import { createHash } from 'node:crypto';

const PLACEHOLDER = '__CLAW_BOOT__';
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
  return code;
}

/**
 * The text of dist/claw.mjs. `hotCode`: the CommonJS hot bundle (expects require, module, exports, __claw_url,
 * __claw_payload); `payloads`: the cold groups' base64 text.
 */
export async function assembleBoot(base, { hotCode, payloads }) {
  const body = `(function(require,module,exports,__claw_url,__claw_payload){"use strict";${hotCode.trimEnd()}\n})`;
  // ASCII only: the loader slices bytes as latin1, and a non-ASCII character would make Node hold the whole
  // file as a two-byte string. NUL is the escape of "*/".
  if (/[^\x01-\x7f]/.test(body)) throw new Error('boot build: the hot code contains NUL or a non-ASCII character');
  for (const p of payloads) if (!/^[A-Za-z0-9+/=]*$/.test(p)) throw new Error('boot build: a payload is not base64');
  const esc = body.includes('*/');
  const stored = esc ? body.replaceAll('*/', '*\0') : body;
  const id = createHash('sha256').update(stored).update('\n').update(payloads.join('\n')).digest('hex').slice(0, 16);

  const loader = await loaderCode(base);
  const literal = (v) =>
    `{id:${JSON.stringify(id)},hot:[${v.hot.map(pad).join(',')}],esc:${esc},coldMark:${pad(v.coldMark)},cold:[${v.cold.map((c) => `[${c.map(pad).join(',')}]`).join(',')}]}`;
  const zero = { hot: [0, 0, 0, 0], coldMark: 0, cold: payloads.map(() => [0, 0]) };
  const head = (v) => `#!/usr/bin/env node\n${loader.replace(PLACEHOLDER, literal(v))}\n/*claw-hot `;
  // Offsets: the head's length does not depend on the values (fixed-width numbers).
  let at = head(zero).length;
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
  const values = { hot: [hotMark, hotStart, hotEnd, line], coldMark, cold };
  const text = `${head(values)}${id}\n${stored}\nclaw-cold ${id}\n${payloads.join('\n')}\n*/\n`;
  if (head(values).length !== prefix.length) throw new Error('boot build: loader length changed with the offsets');
  if (text.slice(hotStart, hotEnd) !== stored || text.slice(coldMark, coldMark + id.length) !== id) throw new Error('boot build: offsets do not match');
  return { text, id, loaderBytes: loader.length, escaped: esc };
}
