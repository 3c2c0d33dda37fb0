// Bundle stub for `debug` (build.config.mjs alias): mqtt.js logs through it; the runtime logs through its own
// logger, so every debug namespace is a no-op here and the package's ~10 KB never ship.
'use strict';
function createDebug() {
  const noop = () => {};
  noop.enabled = false;
  noop.extend = createDebug;
  return noop;
}
createDebug.enable = () => {};
createDebug.disable = () => '';
createDebug.enabled = () => false;
module.exports = createDebug;
module.exports.default = createDebug;
