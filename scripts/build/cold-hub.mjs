// Runtime half of the cold-code build (scripts/build/cold.mjs), bundled into the hot part of claw.mjs.
// Not imported by anything but that build, which substitutes the compressed groups for the placeholder below.
// How to get a require rooted at the bundle: the inline build imports node:module; the code-cache build
// (scripts/build/boot.mjs) substitutes the require its loader passes in, so node:module is not loaded at start.
__CLAW_HUB_REQUIRE__

// The inline build: an array of base64 strings. The code-cache build (scripts/build/boot.mjs): a function that
// reads group g's base64 text from the bundle file when it is first needed, so no payload is held in memory before.
const payloads = __CLAW_COLD_PAYLOADS__;
const loaded = [];
let hot;
let req;

/** Called once by the bundle's entry, after the hot modules have been evaluated. */
export function __claw_register(namespaces) {
  hot = namespaces;
}

function group(g) {
  if (loaded[g]) return loaded[g];
  // The entry registers after its own evaluation; only a top-level await in hot code could get here first.
  if (!hot) throw new Error('claw: cold code requested before the bundle finished loading');
  // node:zlib only now: a start-up that never touches cold code does not load it.
  req ??= hubRequire();
  const code = req('node:zlib').brotliDecompressSync(Buffer.from(typeof payloads === 'function' ? payloads(g) : payloads[g], 'base64')).toString('utf8');
  // The cold code's require: hot module namespaces by registry slot, everything else (node built-ins the
  // CommonJS dependencies ask for) from a real require rooted at this bundle, as the banner's require is.
  const coldRequire = (id) => (id.startsWith('claw-hot:') ? hot[+id.slice(9)] : req(id));
  coldRequire.resolve = req.resolve;
  coldRequire.cache = req.cache;
  const module = { exports: {} };
  // Same realm (new Function, not vm): instanceof and globals are shared with the hot code. Strict, as the
  // ESM bundle it was cut from.
  let body;
  try {
    body = new Function('require', 'module', 'exports', '__claw_url', `"use strict";${code}`);
  } catch (e) {
    // node --disallow-code-generation-from-strings forbids this; say so rather than a bare EvalError.
    if (e instanceof EvalError) throw new Error('claw: code generation from strings is disallowed (--disallow-code-generation-from-strings), but this bundle evaluates its compressed modules with new Function; run without that flag or use a --no-cold build', { cause: e });
    throw e;
  }
  body(coldRequire, module, module.exports, import.meta.url);
  return (loaded[g] = module.exports);
}

/** Stands in for `import(<cold module>)`: resolves to that module's namespace, evaluating it on first use. */
export function __claw_cold(g, id) {
  // Asynchronous like import(): by then the entry has registered the hot namespaces.
  return Promise.resolve().then(() => group(g)[id]());
}
