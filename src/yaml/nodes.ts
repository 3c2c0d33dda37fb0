// The reader's document model: just enough to build the JS value and to answer locate(path).
// `pos` is the UTF-16 offset where the node's content starts (after its anchor/tag), which is where
// `yaml` starts a node's range, so positions in issues are unchanged.

export interface YScalar {
  k: 's';
  pos: number;
  v: unknown;
  /** The text before typing, for a tag written on an earlier line (`key: !!str` then the value below). */
  src?: string;
  anchor?: string;
}

export interface YMap {
  k: 'm';
  pos: number;
  /** Keys as JS property names (a null key is '', other scalars String(value), as `yaml`'s toJS does). */
  keys: string[];
  /** The key scalars, for their positions (and anchors: `&k key: v` anchors the key). */
  keyNodes: YScalar[];
  vals: YNode[];
  anchor?: string;
}

export interface YSeq {
  k: 'q';
  pos: number;
  items: YNode[];
  anchor?: string;
}

export interface YAlias {
  k: 'a';
  pos: number;
  name: string;
  target: YNode;
  anchor?: undefined;
}

export type YNode = YScalar | YMap | YSeq | YAlias;
