// `input_validation` of a Policy (spec §5.9 schema), applied to a tool call's `arguments`.
//
// Checks, in this order; the first failure is returned (rule ids in brackets):
//   [input_validation.max_size_bytes]   byte length of the UTF-8 encoding of JSON.stringify(args)
//        is at most max_size_bytes. Taken literally: 0 rejects every call (even `{}` is 2 bytes).
//        Arguments that cannot be serialized (cycles, BigInt) fail this rule.
//   Then every string (object keys included), depth-first (walk.ts), is checked for:
//   [input_validation.null_byte_detection]  (when true) the character U+0000.
//   [input_validation.encoding]   encoding "utf-8"/"utf8" (case-insensitive): no lone surrogate
//        (a UTF-16 high surrogate not followed by a low one, or a low one not preceded by a
//        high one) — such a string has no UTF-8 encoding. "ascii"/"us-ascii": only U+0000–U+007F.
//        Any other encoding name is not supported and rejects every call (fail closed); the
//        loader can call unsupportedEncoding() to refuse it at start instead.
//   [input_validation.whitespace_analysis]  (when true) none of these invisible / bidirectional
//        control characters (used to hide text from a human reviewer — "Trojan Source"):
//          U+200B–U+200F  zero width space, ZWNJ, ZWJ, LRM, RLM
//          U+202A–U+202E  LRE, RLE, PDF, LRO, RLO
//          U+2066–U+2069  LRI, RLI, FSI, PDI
//          U+FEFF         zero width no-break space / BOM
//          U+061C         ALM, the Arabic letter mark (the third implicit bidi mark beside LRM, RLM)
//          U+E0000–U+E007F  the tag characters: an invisible copy of ASCII that a model reads as text
//                         ("ASCII smuggling": instructions no reviewer sees); no text needs them but
//                         emoji subdivision flags, which an argument can spell without hiding
//        Nothing else: ordinary whitespace (tabs, newlines, NBSP, ideographic space) is allowed.
//   [input_validation.walk_limit]  when any string check is on and the arguments exceed the walk
//        bounds of walk.ts (nesting depth 128, 1,000,000 values): they cannot be checked, so fail.
// Messages name the rule and the argument path, never the offending content.
import type { PolicySpec } from '../manifest/schema/index.ts';
import { walkStrings } from './walk.ts';

export type InputValidationConfig = PolicySpec['input_validation'];

export interface InputViolation {
  rule: string;
  message: string;
}

const UTF8 = new Set(['utf-8', 'utf8']);
const ASCII = new Set(['ascii', 'us-ascii']);

/** The encoding name when it is set and not supported (so the loader can refuse it). */
export function unsupportedEncoding(cfg: InputValidationConfig): string | undefined {
  const enc = cfg?.encoding;
  if (enc === undefined) return undefined;
  const e = enc.toLowerCase();
  return UTF8.has(e) || ASCII.has(e) ? undefined : enc;
}

/** UTF-8 byte length of a string (a lone surrogate counts as U+FFFD, 3 bytes). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** True when the string holds a lone (unpaired) surrogate. */
export function hasLoneSurrogate(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdfff) continue;
    if (c <= 0xdbff) {
      const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) {
        i++;
        continue;
      }
    }
    return true;
  }
  return false;
}

/** The invisible / bidi control characters of whitespace_analysis (see header). */
export const INVISIBLE_CHARS = /[\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF\u061C\u{E0000}-\u{E007F}]/u;

export function validateInput(args: unknown, cfg: InputValidationConfig): InputViolation | undefined {
  if (!cfg) return undefined;

  if (cfg.max_size_bytes !== undefined) {
    let json: string | undefined;
    try {
      json = JSON.stringify(args);
    } catch {
      return { rule: 'input_validation.max_size_bytes', message: 'arguments cannot be serialized as JSON' };
    }
    const size = json === undefined ? 0 : utf8Length(json);
    if (size > cfg.max_size_bytes) {
      return {
        rule: 'input_validation.max_size_bytes',
        message: `arguments are ${size} bytes, over the policy limit of ${cfg.max_size_bytes}`,
      };
    }
  }

  const nul = cfg.null_byte_detection === true;
  const ws = cfg.whitespace_analysis === true;
  let enc: 'utf8' | 'ascii' | undefined;
  if (cfg.encoding !== undefined) {
    const e = cfg.encoding.toLowerCase();
    if (UTF8.has(e)) enc = 'utf8';
    else if (ASCII.has(e)) enc = 'ascii';
    else return { rule: 'input_validation.encoding', message: `encoding '${cfg.encoding}' is not supported (utf-8, ascii)` };
  }
  if (!nul && !ws && !enc) return undefined;

  let found: InputViolation | undefined;
  const outcome = walkStrings(args, (s) => {
    const what = s.where === 'key' ? 'argument key at' : 'argument';
    if (nul && s.text.includes('\0')) {
      found = { rule: 'input_validation.null_byte_detection', message: `${what} ${s.path()} contains a null byte (U+0000)` };
    } else if (enc === 'utf8' && hasLoneSurrogate(s.text)) {
      found = { rule: 'input_validation.encoding', message: `${what} ${s.path()} is not valid UTF-8 (lone surrogate)` };
    } else if (enc === 'ascii' && /[^\x00-\x7f]/.test(s.text)) {
      found = { rule: 'input_validation.encoding', message: `${what} ${s.path()} is not ASCII` };
    } else if (ws && INVISIBLE_CHARS.test(s.text)) {
      found = {
        rule: 'input_validation.whitespace_analysis',
        message: `${what} ${s.path()} contains an invisible or bidirectional control character`,
      };
    }
    if (found) return false;
  });
  if (found) return found;
  if (outcome === 'limit') {
    return { rule: 'input_validation.walk_limit', message: 'arguments are too deeply nested or too large to be checked' };
  }
  return undefined;
}
