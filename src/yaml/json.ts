// The JSON shortcut of the manifest reader: JSON text (a manifest written as JSON, or sent inline)
// is read with the native JSON.parse, plus a duplicate-key scan (YAML rejects duplicates, JSON.parse
// keeps the last value). YAML 1.2 is a JSON superset, so src/yaml reads the same text to the same
// value; it runs instead when this shortcut declines (undefined) and, lazily, for positions.
// Checked differentially against `yaml` in test/unit/fast-yaml.test.ts.

/**
 * True when the text has a character that JSON.parse and YAML could read differently: C0 controls
 * other than tab/LF/CR-LF, DEL and C1, line/paragraph separators, a BOM, non-characters.
 */
function hasOddChar(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) continue;
    if (c === 0x0a || c === 0x09) continue;
    if (c === 0x0d) {
      if (text.charCodeAt(i + 1) === 0x0a) continue;
      return true;
    }
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) return true;
  }
  return false;
}

/** The value of a JSON object or array text, or undefined when the YAML reader must decide. */
export function parseJsonText(text: string): { value: unknown } | undefined {
  let i = 0;
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  if ((text[i] !== '{' && text[i] !== '[') || hasOddChar(text)) return undefined;
  return parseJson(text);
}

function parseJson(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return uniqueJsonKeys(text) ? { value } : undefined;
}

/** True when no object in this (valid) JSON text repeats a key. */
function uniqueJsonKeys(text: string): boolean {
  const stack: (Set<string> | undefined)[] = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      let escaped = false;
      for (;;) {
        const d = text.charCodeAt(j);
        if (d === 0x22) break;
        if (d === 0x5c /* \ */) {
          escaped = true;
          j += 2;
        } else j++;
      }
      const keys = stack[stack.length - 1];
      if (keys) {
        let k = j + 1;
        while (k < n) {
          const w = text.charCodeAt(k);
          if (w !== 0x20 && w !== 0x0a && w !== 0x0d && w !== 0x09) break;
          k++;
        }
        if (text.charCodeAt(k) === 0x3a /* : */) {
          const key = escaped ? (JSON.parse(text.slice(i, j + 1)) as string) : text.slice(i + 1, j);
          if (keys.has(key)) return false;
          keys.add(key);
        }
      }
      i = j;
    } else if (c === 0x7b /* { */) stack.push(new Set());
    else if (c === 0x5b /* [ */) stack.push(undefined);
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) stack.pop();
  }
  return true;
}
