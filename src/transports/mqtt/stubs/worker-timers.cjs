// Bundle stub for `worker-timers` (build.config.mjs alias): mqtt.js uses it only in browsers; on Node and Bun
// it picks native timers, so the Web Worker timer implementation is never needed.
'use strict';
exports.setInterval = (fn, ms) => setInterval(fn, ms);
exports.clearInterval = (id) => clearInterval(id);
exports.setTimeout = (fn, ms) => setTimeout(fn, ms);
exports.clearTimeout = (id) => clearTimeout(id);
