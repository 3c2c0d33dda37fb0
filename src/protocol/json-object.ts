// A JSON object from the wire, passed through as it came. valibot's `record()` builds a copy without the keys
// `__proto__`, `constructor` and `prototype`, so `{"constructor": "Ford"}` was acknowledged and handled as `{}`.
// JSON.parse made each an own property; JSON.stringify keeps every own key, so they reach storage and tools.
import * as v from 'valibot';

export const jsonObject = v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'must be an object');
