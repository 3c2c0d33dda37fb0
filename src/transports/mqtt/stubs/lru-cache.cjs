// Bundle stub for `lru-cache` (build.config.mjs alias): mqtt.js uses it only for the MQTT 5 topic-alias table
// (topic-alias-send.js: get, set, size, clear, keys). This Map keeps the same semantics in ~30 lines instead of
// the package's 16 KB: get refreshes recency, set evicts the least recently used past `max`, keys() yields the
// most recently used first (as lru-cache does).
'use strict';
class LRUCache {
  constructor(opts) {
    this.max = opts && opts.max > 0 ? opts.max : Infinity;
    this.map = new Map();
  }
  get size() {
    return this.map.size;
  }
  get(k) {
    if (!this.map.has(k)) return undefined;
    const v = this.map.get(k);
    this.map.delete(k);
    this.map.set(k, v);
    return v;
  }
  has(k) {
    return this.map.has(k);
  }
  set(k, v) {
    this.map.delete(k);
    this.map.set(k, v);
    while (this.map.size > this.max) this.map.delete(this.map.keys().next().value);
    return this;
  }
  delete(k) {
    return this.map.delete(k);
  }
  clear() {
    this.map.clear();
  }
  *keys() {
    yield* [...this.map.keys()].reverse();
  }
}
exports.LRUCache = LRUCache;
exports.default = LRUCache;
