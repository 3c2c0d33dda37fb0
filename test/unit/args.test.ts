import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseArgs } from '../../src/cli/args.ts';
import { ClawError } from '../../src/protocol/errors.ts';

const SPEC = { flags: ['json', 'quiet'], values: ['config', 'log-level', 'set'] };

function usage(argv: string[]): ClawError {
  try {
    parseArgs(argv, SPEC);
  } catch (e) {
    assert.instance(e, ClawError);
    assert.is((e as ClawError).code, 'usage');
    return e as ClawError;
  }
  assert.unreachable(`expected a usage error for ${JSON.stringify(argv)}`);
  throw new Error('unreachable');
}

test('positionals only', () => {
  const a = parseArgs(['run', 'claw.yaml'], SPEC);
  assert.equal(a.positionals, ['run', 'claw.yaml']);
  assert.is(a.flags.size, 0);
  assert.is(a.values.size, 0);
});

test('flags, including the implicit --help and -h', () => {
  const a = parseArgs(['--json', 'x', '--quiet', '--help'], SPEC);
  assert.equal([...a.flags].sort(), ['help', 'json', 'quiet']);
  assert.equal(a.positionals, ['x']);
  assert.ok(parseArgs(['-h'], SPEC).flags.has('help'));
  assert.ok(parseArgs(['--help'], {}).flags.has('help'));
});

test('--key value and --key=value', () => {
  const a = parseArgs(['--config', 'a.yaml', '--log-level=debug', 'm.yaml'], SPEC);
  assert.equal(a.values.get('config'), ['a.yaml']);
  assert.equal(a.values.get('log-level'), ['debug']);
  assert.equal(a.positionals, ['m.yaml']);
});

test('--key=value keeps everything after the first =, including an empty value', () => {
  const a = parseArgs(['--set=a=b=c', '--config='], SPEC);
  assert.equal(a.values.get('set'), ['a=b=c']);
  assert.equal(a.values.get('config'), ['']);
});

test('a value may start with dashes when given separately', () => {
  const a = parseArgs(['--set', '--json'], SPEC);
  assert.equal(a.values.get('set'), ['--json']);
  assert.not.ok(a.flags.has('json'));
});

test('repeated values collect in order', () => {
  const a = parseArgs(['--set', 'a=1', '--set=b=2', '--set', 'c=3'], SPEC);
  assert.equal(a.values.get('set'), ['a=1', 'b=2', 'c=3']);
});

test('repeated flags are fine', () => {
  assert.ok(parseArgs(['--json', '--json'], SPEC).flags.has('json'));
});

test('unknown option → ClawError usage naming it', () => {
  assert.match(usage(['--nope']).message, /unknown option --nope/);
  assert.match(usage(['--nope=1']).message, /--nope/);
  assert.match(usage(['run', '--verbose', 'x']).message, /--verbose/);
});

test('a flag given a value → usage error', () => {
  usage(['--json=yes']);
});

test('a value option without its value → usage error', () => {
  assert.match(usage(['--config']).message, /--config needs a value/);
});

test('-- separator: everything after it is positional', () => {
  const a = parseArgs(['--json', '--', '--config', '-h', '--nope', 'x'], SPEC);
  assert.equal(a.positionals, ['--config', '-h', '--nope', 'x']);
  assert.equal([...a.flags], ['json']);
  assert.is(a.values.size, 0);
  assert.equal(parseArgs(['--'], SPEC).positionals, []);
});

test('a lone - is a positional (stdin convention)', () => {
  assert.equal(parseArgs(['-'], SPEC).positionals, ['-']);
});

test('does not mutate argv', () => {
  const argv = Object.freeze(['--set', 'a', 'b']);
  parseArgs(argv, SPEC);
  assert.equal([...argv], ['--set', 'a', 'b']);
});

test.run();
