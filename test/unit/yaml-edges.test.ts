// Edges of src/yaml/parser.ts found by the differential test (test/unit/fast-yaml.test.ts), each checked
// against `yaml` itself: tab-led blank lines after an empty value (tabAfterEmpty), and closing brackets of
// nested flow collections at the parent's indentation (flowWs).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseDocument } from 'yaml';
import { parseYaml } from '../../src/yaml/index.ts';

const REFUSED = ['x:\n\t', '-\n\t', '- \n\t', 'x:\n \n\t', 'a:\n  x:\n\t', 'x:\n\t\nb: 2', 'x:\n\t\n---\n', 'a: 1\nx:\n\t\nb: 2', 'x:\n\t\n\nb: 2',
  'x:\n\t\n#c\nb: 2', 'x:\n\t\r\nb: 2', 'x:\n\t \nb: 2', 'x: # c\n\t\nb: 2', 'a:\n  x:\n\t\n  b: 2', '- x:\n\t\n  b: 2', 'x:\n\t\n"b": 2', 'x:\n\t\n\t'];
const ACCEPTED = ['x:\n\t\n', 'x:\n\t\n\n', 'x:\n\t\n  y', '-\n\t\n- 2', 'x:\n \t\nb: 2', 'a:\n  x:\n\t\nb: 2', 'x:\n\t\n  # c\nb: 2', '- x:\n\t\n- 2',
  'x:\n\t#c\nb: 2', 'x:\n\t\n- 2', 'x:\n\t\n# c\n', 'x:\n\t\n...\n', 'x: 1\n\t', '\t', 'x:\n\t\t\n'];

test('refused as yaml refuses them, at the tab', () => {
  for (const s of REFUSED) {
    assert.ok(parseDocument(s).errors.length > 0, `yaml refuses ${JSON.stringify(s)}`);
    const r = parseYaml(s);
    assert.ok(!r.ok, `refused: ${JSON.stringify(s)}`);
    if (!r.ok) assert.match(r.message, /tab/i, JSON.stringify(s));
  }
});

test('accepted as yaml accepts them, with the same value', () => {
  for (const s of ACCEPTED) {
    const y = parseDocument(s);
    assert.is(y.errors.length, 0, `yaml accepts ${JSON.stringify(s)}`);
    const r = parseYaml(s);
    assert.ok(r.ok, `accepted: ${JSON.stringify(s)} ${r.ok ? '' : r.message}`);
    if (r.ok) assert.equal(r.value, y.toJS(), JSON.stringify(s));
  }
});

test('a closing bracket at the parent indentation closes the outermost flow collection only, as yaml reads it', () => {
  const refused = ['x: {a: {b: 1\n} }\n', 'x: [a, [b\n]]\n', 'x: [a, [b\n], c]\n', 'a:\n  x: {a: {b: 1\n  } }\n', 'x: {a: [b\n] }\n'];
  const accepted = ['x: {a: 1\n}\n', 'x: {a: {b: 1}\n}\n', 'a:\n  x: {a: 1\n  }\n', 'x: [a, [b]\n]\n'];
  for (const s of refused) {
    assert.ok(parseDocument(s).errors.length > 0, `yaml refuses ${JSON.stringify(s)}`);
    const r = parseYaml(s);
    assert.ok(!r.ok, `refused: ${JSON.stringify(s)}`);
  }
  for (const s of accepted) {
    const y = parseDocument(s);
    assert.is(y.errors.length, 0, `yaml accepts ${JSON.stringify(s)}`);
    const r = parseYaml(s);
    assert.ok(r.ok, `accepted: ${JSON.stringify(s)} ${r.ok ? '' : r.message}`);
    if (r.ok) assert.equal(r.value, y.toJS(), JSON.stringify(s));
  }
});

test.run();
