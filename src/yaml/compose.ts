// From nodes to the JS value (what `yaml`'s toJS gives: plain objects with own data properties,
// arrays, shared values for aliases), and locate(path) over the same nodes.
import { YamlError } from './errors.ts';
import type { YNode } from './nodes.ts';

/**
 * The alias cap against "billion laughs" documents, counted exactly as `yaml` counts with
 * maxAliasCount 100 (the limit source.ts used): each use of an anchor multiplies its count by how
 * many aliases its node already expands to; above the limit the document is refused.
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * Our own cap, whatever `yaml`'s heuristic says (it lets aliases of empty collections through in any
 * number): the nodes that aliases add when the value is walked (each alias counts its target's
 * whole size) stay under this, so nothing after parsing (depth check, validation, JSON) can blow up.
 */
export const MAX_ALIAS_EXPANSION = 100_000;

interface AnchorData {
  count: number;
  aliasCount: number;
}

export function toValue(root: YNode | undefined): unknown {
  if (!root) return null;
  const data = new Map<YNode, AnchorData>();
  const values = new Map<YNode, unknown>();

  // Node counts of subtrees as a consumer walking the value sees them (an alias counts its target).
  const sizes = new Map<YNode, number>();
  const size = (node: YNode): number => {
    if (node.k === 'a') return size(node.target);
    if (node.k === 's') return 1;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    let n = 1;
    for (const it of node.k === 'q' ? node.items : node.vals) n += size(it);
    sizes.set(node, n);
    return n;
  };
  let expansion = 0;

  const aliasCount = (node: YNode): number => {
    if (node.k === 'a') {
      const d = data.get(node.target);
      return d && d.aliasCount > 0 ? d.count * d.aliasCount : 0;
    }
    if (node.k === 'q' || node.k === 'm') {
      let max = 0;
      const items = node.k === 'q' ? node.items : node.vals;
      for (const it of items) max = Math.max(max, aliasCount(it), node.k === 'm' ? 1 : 0);
      return max;
    }
    return 1;
  };

  const build = (node: YNode): unknown => {
    if (node.k === 'a') {
      const d = data.get(node.target);
      if (!d) throw new YamlError(`unknown anchor "${node.name}"`, node.pos);
      d.count += 1;
      // `yaml` recomputes a zero count at every alias; a zero stays zero (only empty collections
      // count 0, and their aliases too), so computing it once gives the same answers in linear time.
      if (d.aliasCount === -1) d.aliasCount = aliasCount(node.target);
      if (d.count * d.aliasCount > MAX_ALIAS_COUNT) {
        throw new YamlError('too many alias expansions: refused as a resource exhaustion ("billion laughs") attack', node.pos, 'alias-limit');
      }
      expansion += size(node.target);
      if (expansion > MAX_ALIAS_EXPANSION) {
        throw new YamlError(`aliases expand to more than ${MAX_ALIAS_EXPANSION} nodes: refused as a resource exhaustion ("billion laughs") attack`, node.pos, 'alias-limit');
      }
      return values.get(node.target);
    }
    if (node.anchor !== undefined) data.set(node, { count: 1, aliasCount: -1 });
    let v: unknown;
    if (node.k === 's') v = node.v;
    else if (node.k === 'q') {
      const arr: unknown[] = [];
      for (const it of node.items) arr.push(build(it));
      v = arr;
    } else {
      const obj: Record<string, unknown> = {};
      for (let j = 0; j < node.keys.length; j++) {
        const key = node.keys[j];
        const kn = node.keyNodes[j];
        if (kn.anchor !== undefined) {
          data.set(kn, { count: 1, aliasCount: -1 });
          values.set(kn, kn.v);
        }
        const value = build(node.vals[j]);
        // An own data property, `__proto__` included (as `yaml`'s toJS does).
        if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
        else obj[key] = value;
      }
      v = obj;
    }
    if (node.anchor !== undefined) values.set(node, v);
    return v;
  };
  return build(root);
}

/**
 * The offset of the node at `segments` (a key's own offset for a mapping entry, the item's for a
 * sequence entry), or of its closest existing ancestor. Aliases are not followed: the alias is the
 * position in this file that holds the value.
 */
export function locateOffset(root: YNode | undefined, segments: readonly (string | number)[]): number | undefined {
  let node = root;
  let best = root?.pos;
  for (const seg of segments) {
    if (node?.k === 'm') {
      const j = node.keys.indexOf(String(seg));
      if (j === -1 || typeof seg !== 'string') break;
      best = node.keyNodes[j].pos;
      node = node.vals[j];
    } else if (node?.k === 'q' && typeof seg === 'number') {
      const it = node.items[seg];
      if (!it) break;
      best = it.pos;
      node = it;
    } else break;
  }
  return best;
}
