// Relevance ranking shared by the semantic store. One formula on every engine: Okapi BM25 exactly as FTS5's
// bm25() computes it (k1 = 1.2, b = 0.75, idf = ln((N − n + 0.5) / (n + 0.5)) floored at 1e-6), so a score
// means the same on node:sqlite (FTS5 bm25()), sql.js (FTS4 matchinfo('pcnalx') → the same sum in JS) and the
// no-FTS fallback (the same sum over JS tokens).
//
// Normalisation to [0, 1]: s = x / (1 + x) where x ≥ 0 is the BM25 sum (FTS5: x = −bm25()). Monotonic, so the
// ranking is BM25's; absolute, so a score does not depend on the other hits of the query (0.5 ⇔ BM25 = 1).
// Hybrid search fuses the full-text and the vector ranking with reciprocal-rank fusion,
// rrf(d) = Σ_lists 1 / (60 + rank_list(d)) (ranks from 1), normalised by its maximum (lists × 1/61), so a
// document first in both lists scores 1. Vector-only scores are (cosine + 1) / 2.

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const RRF_K = 60;

/** Lower-cased word tokens (letters and digits), close to SQLite's unicode61 tokenizer. */
export function tokenize(text: string): string[] {
  return (text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) as string[];
}

/**
 * Distinct query terms ranked on, in the order of their first use. A query is a question, not a document: past
 * this, FTS4 refuses the OR expression (its tree may be at most 12 deep, ~4,000 phrases) and every term costs a
 * lookup per segment and a matchinfo column per hit (3,000 terms: 130 ms a query on sql.js).
 */
export const MAX_QUERY_TERMS = 128;

/**
 * Characters of a query text read for its terms: tokenizing costs ~250 ms per MB (NFKD, then the word regex), and a
 * frame may hold a 4 MB query; 128 distinct words of prose fit in a few KB.
 */
export const MAX_QUERY_CHARS = 16384;

/** The first MAX_QUERY_TERMS distinct tokens of a query text, on every engine (one formula everywhere). */
export function queryTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const t of tokenize(text.slice(0, MAX_QUERY_CHARS))) if (terms.add(t).size === MAX_QUERY_TERMS) break;
  return [...terms];
}

/**
 * A safe MATCH expression for free text: each query term quoted (no operator or column syntax from the
 * user reaches the engine), OR-ed so partial matches rank too. `undefined` when the text has no token.
 */
export function matchExpression(text: string): string | undefined {
  const terms = queryTerms(text);
  return terms.length === 0 ? undefined : terms.map((t) => `"${t}"`).join(' OR ');
}

export function idf(nRows: number, nHit: number): number {
  const v = Math.log((nRows - nHit + 0.5) / (nHit + 0.5));
  return v <= 0 ? 1e-6 : v;
}

export function bm25Term(tf: number, idfValue: number, docLen: number, avgLen: number): number {
  if (tf === 0) return 0;
  const norm = avgLen > 0 ? docLen / avgLen : 1;
  return (idfValue * (tf * (BM25_K1 + 1))) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * norm));
}

/**
 * BM25 from FTS4 `matchinfo(t, 'pcnalx')` (uint32 array in native byte order): p phrases, c columns, n rows,
 * a[c] average tokens per column (an integer in FTS4: the only difference from FTS5's average), l[c] tokens in
 * this row, then per (phrase, column) three values: hits in this row, hits in all rows, rows with a hit.
 */
export function bm25FromMatchinfo(blob: Uint8Array): number {
  const u = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  const at = (i: number) => u.getUint32(i * 4, true);
  const p = at(0);
  const c = at(1);
  const n = at(2);
  let sum = 0;
  for (let col = 0; col < c; col++) {
    const avg = at(3 + col);
    const len = at(3 + c + col);
    for (let ph = 0; ph < p; ph++) {
      const base = 3 + 2 * c + 3 * (col + ph * c);
      sum += bm25Term(at(base), idf(n, at(base + 2)), len, avg);
    }
  }
  return sum;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The same sum as `bm25FromMatchinfo`, for the many rows of one query, from `matchinfo(t, 'pcnax')` — the same
 * layout without l[c] — and each row's token counts per column given by the caller (the semantic store keeps them
 * from the index's %_docsize: asking matchinfo for `l` costs FTS4 one %_docsize lookup per hit, ~40% of a query
 * at 100k entries). n and the per-phrase "rows with a hit" are query-global in FTS4's
 * matchinfo, so each phrase's idf is computed once and reused while they stay the same (checked per row: a changed
 * value recomputes). Same operations in the same order → the same doubles. Aligned little-endian blobs (sql.js
 * hands out fresh copies) are read through a Uint32Array view.
 */
export function matchinfoScorer(): (blob: Uint8Array, lengths: ArrayLike<number>) => number {
  let idfs: Float64Array = new Float64Array(0);
  let keyN = -1;
  let keyHits: Uint32Array = new Uint32Array(0);
  return (blob, lengths) => {
    let at: (i: number) => number;
    if (LITTLE_ENDIAN && blob.byteOffset % 4 === 0 && blob.byteLength % 4 === 0) {
      const u = new Uint32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
      at = (i) => u[i];
    } else {
      const v = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
      at = (i) => v.getUint32(i * 4, true);
    }
    const p = at(0);
    const c = at(1);
    const n = at(2);
    const pairs = p * c;
    if (keyHits.length !== pairs) {
      keyHits = new Uint32Array(pairs);
      idfs = new Float64Array(pairs);
      keyN = -1;
    }
    let sum = 0;
    for (let col = 0; col < c; col++) {
      const avg = at(3 + col);
      const len = lengths[col];
      for (let ph = 0; ph < p; ph++) {
        const k = col + ph * c;
        const base = 3 + c + 3 * k;
        const nHit = at(base + 2);
        if (n !== keyN || keyHits[k] !== nHit) {
          if (n !== keyN) {
            keyN = n;
            keyHits.fill(0xffffffff); // every other phrase's idf is stale too
          }
          keyHits[k] = nHit;
          idfs[k] = idf(n, nHit);
        }
        sum += bm25Term(at(base), idfs[k], len, avg);
      }
    }
    return sum;
  };
}

/** The token count of column 0 in an FTS4 %_docsize blob: one varint per column (7 bits a byte, low first). */
export function docsizeColumn0(blob: Uint8Array): number {
  let v = 0;
  let shift = 0;
  for (let i = 0; i < blob.length && shift < 35; i++) {
    const b = blob[i];
    v += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) return v;
    shift += 7;
  }
  return v;
}

/**
 * The first `limit` items of `items` in `cmp` order, as `items.sort(cmp).slice(0, limit)` gives them when `cmp`
 * is a total order (no ties: the semantic store breaks score ties by seq), without sorting every hit.
 */
export function topK<T>(items: Iterable<T>, limit: number, cmp: (a: T, b: T) => number): T[] {
  const out: T[] = [];
  if (limit <= 0) return out;
  for (const it of items) {
    if (out.length === limit && cmp(it, out[limit - 1]) >= 0) continue;
    // binary search for the insertion point (after equals: stable, like Array.prototype.sort)
    let lo = 0;
    let hi = out.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (cmp(it, out[m]) < 0) hi = m;
      else lo = m + 1;
    }
    out.splice(lo, 0, it);
    if (out.length > limit) out.pop();
  }
  return out;
}

/** BM25 over in-memory documents (for a database without FTS). Returns x per document, 0 = no match. */
export function bm25Js(docs: string[], query: string): number[] {
  const terms = queryTerms(query);
  const index = new Map(terms.map((t, i) => [t, i]));
  const toks = docs.map(tokenize);
  const avg = toks.reduce((s, t) => s + t.length, 0) / (toks.length || 1);
  // Term frequencies in one pass over each document: a scan of the document per term was terms × tokens (10,000
  // terms over a 500-entry conversation: 2 s).
  const tfs = toks.map((t) => {
    const tf = new Uint32Array(terms.length);
    for (const x of t) {
      const i = index.get(x);
      if (i !== undefined) tf[i]++;
    }
    return tf;
  });
  const hits = terms.map((_, i) => tfs.reduce((n, tf) => n + (tf[i] > 0 ? 1 : 0), 0));
  return toks.map((t, d) => terms.reduce((s, _term, i) => s + bm25Term(tfs[d][i], idf(docs.length, hits[i]), t.length, avg), 0));
}

/** BM25 sum (≥ 0) → [0, 1). */
export function normaliseBm25(x: number): number {
  return x > 0 ? x / (1 + x) : 0;
}

/** Reciprocal-rank fusion of ranked id lists; scores normalised so 1 = first in every list. Ties: first seen. */
export function reciprocalRankFusion<T>(lists: T[][]): { id: T; score: number }[] {
  const acc = new Map<T, number>();
  for (const list of lists) list.forEach((id, i) => acc.set(id, (acc.get(id) ?? 0) + 1 / (RRF_K + i + 1)));
  const max = lists.length / (RRF_K + 1);
  return [...acc.entries()].map(([id, s]) => ({ id, score: Math.min(1, s / max) })).sort((a, b) => b.score - a.score);
}

export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

export function vectorToBlob(v: number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(v).buffer);
}

export function blobToVector(b: Uint8Array): Float32Array {
  // Copy: the blob's buffer may be shared or unaligned.
  return new Float32Array(b.slice().buffer);
}
