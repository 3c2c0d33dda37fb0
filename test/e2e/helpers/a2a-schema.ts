// Validates agent cards against the vendored A2A JSON Schemas (test/fixtures/a2a/README.md) with
// @cfworker/json-schema: the 1.0 bundle's "Agent Card" (its $refs are `lf.a2a.v1.<Name>.jsonschema.json`, the
// definition's title without spaces) and the 0.3 schema's AgentCard.
import { Validator, type OutputUnit } from '@cfworker/json-schema';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './claw-process.ts';

const dir = join(ROOT, 'test', 'fixtures', 'a2a');
const BASE = 'https://a2a-protocol.org/v1.0.0/spec/';
/** Fields A2A 1.0's proto marks REQUIRED on AgentCard (the generated schema cannot say so). */
export const CARD_1_0_REQUIRED = ['name', 'description', 'supportedInterfaces', 'version', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills'];

let v10: Validator | undefined;
let v03: Validator | undefined;

function validator10(): Validator {
  if (v10) return v10;
  const bundle = JSON.parse(readFileSync(join(dir, 'a2a-1.0.0-agent-card.schema.json'), 'utf8')) as { definitions: Record<string, object> };
  const id = (title: string) => `${BASE}${title === 'Struct' ? 'google.protobuf.Struct' : `lf.a2a.v1.${title.replaceAll(' ', '')}`}.jsonschema.json`;
  const v = new Validator({ ...bundle.definitions['Agent Card'], $id: id('Agent Card') }, '2020-12', false);
  for (const [title, def] of Object.entries(bundle.definitions)) if (title !== 'Agent Card') v.addSchema(def as any, id(title));
  return (v10 = v);
}

function validator03(): Validator {
  if (v03) return v03;
  const schema = JSON.parse(readFileSync(join(dir, 'a2a-0.3.0.schema.json'), 'utf8'));
  return (v03 = new Validator({ ...schema, $ref: '#/definitions/AgentCard' }, '7', false));
}

/** The schema's errors for `card` under the version it declares (none: valid). */
export function cardErrors(card: unknown, version: '1.0' | '0.3'): string[] {
  const r = (version === '1.0' ? validator10() : validator03()).validate(card);
  const errors = r.valid ? [] : r.errors.map((e: OutputUnit) => `${e.instanceLocation}: ${e.error}`);
  if (version === '1.0') for (const f of CARD_1_0_REQUIRED) if ((card as Record<string, unknown>)[f] === undefined) errors.push(`#/${f}: required (A2A 1.0 proto)`);
  return errors;
}
