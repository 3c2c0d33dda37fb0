// The raw source text of one value inside a JSON document, by path. Used where an API embeds a
// tool call's arguments as a JSON value (Anthropic `input`, some servers' `arguments`): the
// validator must see the model's text as sent (duplicate keys, number spelling, escapes), which
// JSON.parse + JSON.stringify would silently normalize. The text must already be valid JSON.
type Seg = string | number;

const isWs = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

function ws(t: string, i: number): number {
  while (i < t.length && isWs(t.charCodeAt(i))) i++;
  return i;
}

function endOfString(t: string, i: number): number {
  for (i++; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) return i + 1;
  }
  return t.length;
}

/**
 * Deepest nesting a provider's JSON may have: past the FemtoClaw validator's own ceiling (strict-json.ts
 * MAX_DEPTH_CEILING, 1000) with room for the API's envelope, so nothing it could accept is refused here.
 */
export const MAX_NESTING = 1024;

/**
 * Whether objects and arrays in `t` nest deeper than `limit` (strings skipped), in one linear pass. JSON.parse
 * takes 6-9 times longer per byte on deep nesting than on flat JSON: one 4 MB event of `[[[…` held the event
 * loop 1.3-1.8 s, and a stream may bring several.
 */
export function deeperThan(t: string, limit: number): boolean {
  let d = 0;
  for (let i = 0; i < t.length; i++) {
    const c = t.charCodeAt(i);
    if (c === 34) i = endOfString(t, i) - 1;
    else if (c === 123 || c === 91) {
      if (++d > limit) return true;
    } else if (c === 125 || c === 93) d--;
  }
  return false;
}

/** JSON.parse, refusing (throwing) nesting deeper than MAX_NESTING before it starts. */
export function parseJson(t: string): unknown {
  if (deeperThan(t, MAX_NESTING)) throw new SyntaxError('too deep');
  return JSON.parse(t);
}

/** Index just past the value starting at `i` (after whitespace). */
function endOfValue(t: string, i: number): number {
  i = ws(t, i);
  const c = t.charCodeAt(i);
  if (c === 34) return endOfString(t, i);
  if (c === 123 || c === 91) {
    let depth = 0;
    for (; i < t.length; i++) {
      const d = t.charCodeAt(i);
      if (d === 34) i = endOfString(t, i) - 1;
      else if (d === 123 || d === 91) depth++;
      else if ((d === 125 || d === 93) && --depth === 0) return i + 1;
    }
    return t.length;
  }
  while (i < t.length && !isWs(t.charCodeAt(i)) && !',]}'.includes(t[i])) i++;
  return i;
}

/** Raw text of the value at `path`, or undefined when the path does not exist. Last duplicate key wins, like JSON.parse. */
export function rawValueAt(text: string, path: readonly Seg[]): string | undefined {
  let start = ws(text, 0);
  for (const seg of path) {
    const open = text.charCodeAt(start);
    let found = -1;
    let i = ws(text, start + 1);
    let index = 0;
    if (open === 123 && typeof seg === 'string') {
      while (text.charCodeAt(i) === 34) {
        const keyEnd = endOfString(text, i);
        const key = JSON.parse(text.slice(i, keyEnd)) as string;
        const valStart = ws(text, ws(text, keyEnd) + 1); // past ':'
        if (key === seg) found = valStart;
        i = ws(text, endOfValue(text, valStart));
        if (text.charCodeAt(i) !== 44) break;
        i = ws(text, i + 1);
      }
    } else if (open === 91 && typeof seg === 'number') {
      while (i < text.length && text.charCodeAt(i) !== 93) {
        if (index++ === seg) {
          found = i;
          break;
        }
        i = ws(text, endOfValue(text, i));
        if (text.charCodeAt(i) !== 44) break;
        i = ws(text, i + 1);
      }
    }
    if (found < 0) return undefined;
    start = found;
  }
  return text.slice(start, endOfValue(text, start));
}

/** The raw text of each element of the array at `path`, in one pass over the array (undefined if none is there). */
export function rawElementsAt(text: string, path: readonly Seg[]): string[] | undefined {
  const arr = rawValueAt(text, path);
  if (arr === undefined || arr.charCodeAt(0) !== 91) return undefined;
  const out: string[] = [];
  let i = ws(arr, 1);
  while (i < arr.length && arr.charCodeAt(i) !== 93) {
    const end = endOfValue(arr, i);
    out.push(arr.slice(i, end));
    i = ws(arr, end);
    if (arr.charCodeAt(i) !== 44) break;
    i = ws(arr, i + 1);
  }
  return out;
}
