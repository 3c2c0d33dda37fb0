// Splits the module graph of a bundle into hot code (reachable from the entry through static imports/requires,
// i.e. everything that may run at start-up) and cold code (reachable only through a dynamic import()), from
// esbuild's metafile. Cold modules are grouped so that groups share no module: two dynamic-import targets whose
// cold closures intersect land in the same group, so every cold module exists exactly once (module identity).
import { build } from 'esbuild';

/** Runs an analysis build (no output) and returns the metafile inputs plus the entry's metafile key. */
export async function analyse(opts) {
  const r = await build({ ...opts, write: false, metafile: true, outfile: 'cold-analysis.mjs' });
  return { inputs: r.metafile.inputs, output: Object.values(r.metafile.outputs)[0] };
}

export function splitGraph(inputs, entryKey) {
  const hot = new Set();
  const stack = [entryKey];
  while (stack.length) {
    const f = stack.pop();
    if (hot.has(f)) continue;
    hot.add(f);
    for (const i of inputs[f].imports) if (!i.external && i.kind !== 'dynamic-import') stack.push(i.path);
  }
  // Hot files whose import() reaches cold code: these calls get rewritten to the cold loader.
  const edges = []; // { from, spec, target }
  for (const f of hot) {
    for (const i of inputs[f].imports) {
      if (i.kind !== 'dynamic-import' || i.external || hot.has(i.path)) continue;
      if (!edges.some((e) => e.from === f && e.target === i.path)) edges.push({ from: f, spec: i.original, target: i.path });
    }
  }
  // Cold closure of each target: every cold module reachable through any edge kind (cold-to-cold import()
  // included, so a lazily imported module stays in its importer's group).
  const closure = (t) => {
    const seen = new Set();
    const st = [t];
    while (st.length) {
      const f = st.pop();
      if (seen.has(f) || hot.has(f)) continue;
      seen.add(f);
      for (const i of inputs[f].imports) if (!i.external) st.push(i.path);
    }
    return seen;
  };
  const targets = [...new Set(edges.map((e) => e.target))];
  let groups = targets.map((t) => ({ targets: [t], modules: closure(t) }));
  // Merge intersecting groups until they are disjoint.
  for (let merged = true; merged; ) {
    merged = false;
    outer: for (let a = 0; a < groups.length; a++) {
      for (let b = a + 1; b < groups.length; b++) {
        if ([...groups[b].modules].some((m) => groups[a].modules.has(m))) {
          groups[a] = { targets: [...groups[a].targets, ...groups[b].targets], modules: new Set([...groups[a].modules, ...groups[b].modules]) };
          groups.splice(b, 1);
          merged = true;
          break outer;
        }
      }
    }
  }
  return { hot, edges, groups };
}
