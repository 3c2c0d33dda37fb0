// Pattern-based prompt-injection detection over tool-call arguments (spec §5.9
// `prompt_injection`, §10.2 threat "Prompt injection — Pattern detection").
//
// What is scanned: every string in the arguments, object keys and values alike, depth-first
// (walk.ts: iterative, nesting ≤ 128, ≤ 1,000,000 values, plus a total budget of SCAN_BUDGET
// UTF-16 units). Exceeding a bound is reported as a match of the pseudo-pattern
// `scan-limit-exceeded` so callers fail closed.
//
// Normalization before matching (each string separately; normalizeForDetection()):
//   1. NFKD (full-width / ligature / mathematical letters → plain letters, accents split off);
//   2. lowercase;
//   3. removal of combining marks (U+0300–U+036F) and of invisible characters: soft hyphen,
//      combining grapheme joiner, Mongolian vowel separator, U+200B–U+200F, U+202A–U+202E,
//      U+2060–U+2064, U+2066–U+206F, variation selectors U+FE00–U+FE0F, U+FEFF;
//   4. folding of common Cyrillic/Greek lookalike letters to ASCII (CONFUSABLES), and of typographic
//      apostrophes to `'`;
//   5. every run of whitespace (including newlines, NBSP, ideographic space) → one space.
// The patterns are written against that normalized form (lowercase, single spaces).
//
// Engine: two combined RegExps (alternations of the patterns, one capture group per pattern, no
// nested unbounded quantifiers, every repetition bounded or deterministic), each run once per
// string with the `g` flag; normalization is a single pass over the string. Work is linear in the
// text length (times a constant); the unit tests time 1 MB adversarial strings (< 100 ms each). `pattern_engine` (e.g. "aho-corasick") and `pattern_count` in the
// manifest are informational only: this engine and the built-in list below are always used.
//
// Configuration (PolicySpec['prompt_injection']):
//   - block absent → nothing runs (the loader only defaults `detection` inside an existing
//     block: runtime profile §1, src/manifest/defaults.ts).
//   - detection: 'pattern' (default) runs the patterns; 'hybrid' runs the pattern part only (the
//     LLM part is not implemented; the gate documents it); 'none' → never matches;
//     'llm-based' alone → runs nothing and returns `unsupported: true` so the caller can refuse
//     the manifest at start.
//   - action: 'ignore' → never matches (nothing runs); otherwise returned as is for the caller to
//     apply. Absent → 'block-and-log' (fail closed).
//
// Out of scope (documented limits of a pattern engine): encoded payloads (base64-, hex-, URL- or
// ROT13-wrapped "ignore previous instructions"), leetspeak ("1gn0re"), letter-spaced or
// punctuation-split words ("i g n o r e", "ignore_previous_instructions"), non-English phrasing,
// and semantic paraphrase. Those need the LLM-based detector.
//
// Deliberate non-matches (benign phrasing must pass):
//   - "ignore" / "disregard" only match when followed by instruction-like nouns ("previous
//     instructions", "the system prompt", "everything above"), never alone ("ignore the noise").
//   - "you are now" alone is NOT a signal ("you are now able to upload files", "you are now
//     connected"); it matches only when followed by persona / jailbreak vocabulary ("you are now
//     DAN", "you are now in developer mode", "you are now unrestricted", "you are now free from
//     all restrictions").
//   - "new instructions" matches only as a label with a colon ("new instructions:").
//   - "developer mode" / "debug mode" alone do not match (Android, browsers); jailbreak-only modes
//     (DAN, god, jailbreak, unrestricted) do.
import type { PolicySpec } from '../manifest/schema/index.ts';
import { walkStrings } from './walk.ts';

export type PromptInjectionConfig = PolicySpec['prompt_injection'];
export type InjectionAction = 'block-and-log' | 'warn' | 'log-only' | 'ignore';

export interface InjectionPattern {
  id: string;
  description: string;
  /** RegExp source over normalized text; non-capturing groups only. */
  source: string;
}

export interface InjectionMatch {
  pattern: string;
  /** JSONPath-like location of the string in the arguments (walk.ts formatPath). */
  path: string;
  where: 'key' | 'value';
}

export interface InjectionResult {
  matched: InjectionMatch[];
  action: InjectionAction;
  /** Set when the configuration asks for something this runtime cannot do (llm-based only). */
  unsupported?: true;
}

/** Total UTF-16 units scanned per call before giving up (fail closed). */
export const SCAN_BUDGET = 16 * 1024 * 1024;
/** Matches reported per call at most (the first ones, in walk order). */
export const MAX_MATCHES = 64;

const DET = '(?:(?:all|any|the|your|my|these|those|of|every|about) ){0,3}';
const OLD = '(?:previous|prior|above|earlier|preceding|former|foregoing|original|initial|old)';
const ORDERS = '(?:instructions?|prompts?|directions?|directives?|rules|commands?|guidelines|guidance|context|orders)';
const PERSONA = '(?:unrestricted|unfiltered|uncensored|jailbroken|amoral|unaligned|evil)';
const AI = '(?:ai|llm|llms|language model|language models|ai assistant|ai agent|chatbot|gpt|chatgpt|claude)';

/** The built-in pattern list (order = report order when several match at one position). */
export const INJECTION_PATTERNS: readonly InjectionPattern[] = [
  // Instruction override
  {
    id: 'ignore-previous-instructions',
    description: '"ignore (all) previous instructions" and variants',
    source: `\\bignore ${DET}${OLD} ${ORDERS}\\b`,
  },
  {
    id: 'disregard-previous-instructions',
    description: '"disregard / forget / discard ... prior instructions"',
    source: `\\b(?:disregard|forget|neglect|skip|drop|discard|abandon|set aside) ${DET}${OLD} ${ORDERS}\\b`,
  },
  {
    id: 'ignore-everything-above',
    description: '"ignore everything above", "disregard all of the text above"',
    source:
      '\\b(?:ignore|disregard) (?:everything|anything|all(?: of)?(?: the text| that| this)?|the (?:text|content)) (?:above|before this|prior to this|written above|said above|so far|that came before)\\b',
  },
  {
    id: 'forget-everything',
    description: '"forget everything you were told / above"',
    source:
      '\\bforget (?:everything|all(?: of)?(?: that| this| the above)?|what) (?:you (?:were|have been|know|learned)|above|before|so far|i (?:said|told you))\\b',
  },
  {
    id: 'override-instructions',
    description: '"override / bypass the system prompt / your instructions"',
    source:
      '\\b(?:override|overwrite|overrule|replace|reset|bypass|circumvent) (?:(?:all|any|the|your|my|these|those|of|every) ){0,3}(?:system prompt|system instructions|(?:previous|prior|original|initial|current|existing) instructions|instructions you (?:were|have been) given|directives)\\b',
  },
  {
    id: 'disregard-system-prompt',
    description: '"ignore / disregard the system prompt"',
    source: '\\b(?:ignore|disregard|forget|neglect) (?:(?:all|any|the|your|my|of|about) ){0,2}system (?:prompt|message|instructions?)\\b',
  },
  {
    id: 'new-instructions-label',
    description: '"new instructions:" and similar labels (colon required)',
    source: '\\b(?:new|real|actual|true|override|secret|hidden) (?:system )?instructions ?:',
  },
  {
    id: 'your-new-task',
    description: '"your new task is", "your real goal is"',
    source: '\\byour (?:new|real|true|actual) (?:task|goal|objective|purpose|mission|instructions?) (?:is|are|will be|now is)\\b',
  },
  {
    id: 'from-now-on',
    description: '"from now on you will act / ignore / respond only ..."',
    source:
      '\\bfrom now on,? (?:you (?:will|must|shall|are going to) (?:act|respond|answer|reply|behave|pretend|ignore|only|always|never|obey|follow (?:my|these|only))|you (?:are|will be) (?:no longer|free|not bound|unrestricted|dan|called|named)|ignore|disregard)\\b',
  },
  // Prompt extraction
  {
    id: 'reveal-system-prompt',
    description: '"reveal / print / show your system prompt"',
    source:
      "\\b(?:reveal|print|show|display|output|repeat|leak|dump|tell me|give me|what is|what's) (?:me )?(?:your |the )(?:(?:full|entire|exact|original|initial|hidden|secret|complete|current) ){0,2}system prompt\\b",
  },
  {
    id: 'reveal-hidden-instructions',
    description: '"print your original / hidden instructions"',
    source:
      '\\b(?:reveal|print|show|display|output|repeat|leak|dump|tell me|give me) (?:me )?(?:your |the )(?:original|initial|hidden|secret|confidential|internal) (?:prompt|instructions|rules|directives)\\b',
  },
  {
    id: 'repeat-text-above',
    description: '"repeat the text above" (prompt leak)',
    source: '\\brepeat (?:everything|all(?: of)?(?: the)?(?: text)?|the (?:text|words)) above\\b',
  },
  // Persona / role-play jailbreaks
  {
    id: 'you-are-now-persona',
    description: '"you are now DAN / unrestricted / in developer mode" (not "you are now able to")',
    source:
      '\\byou are now (?:an? |the |in |my )?(?:dan|stan|dude|aim|unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|liberated|amoral|developer mode|god mode|jailbreak mode|sudo mode|admin mode|no longer (?:bound|restricted|an? (?:ai|assistant|language model))|free (?:from|of) (?:all |any |your )?(?:restrictions|rules|guidelines|filters|constraints)|not bound by|acting as|going to (?:act|pretend|roleplay))\\b',
  },
  {
    id: 'do-anything-now',
    description: 'the DAN jailbreak ("do anything now")',
    source: '\\bdo anything now\\b',
  },
  {
    id: 'jailbreak-mode-switch',
    description: '"enable DAN / god / jailbreak / unrestricted mode"',
    source:
      '\\b(?:enter|enable|activate|switch to|turn on|engage|unlock) (?:the )?(?:god|dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored) mode\\b',
  },
  {
    id: 'jailbreak-output-marker',
    description: '"developer mode output", "DAN response" transcript markers',
    source: '\\b(?:developer mode|dan|jailbreak|jailbroken) (?:output|response)\\b',
  },
  {
    id: 'pretend-unrestricted',
    description: '"pretend you are an unrestricted AI", "act as an uncensored model"',
    source: `\\b(?:pretend|imagine|act|behave|roleplay|role-play|role play|simulate)(?: that| as if| like| as| to be)?(?: you(?: are|'re| were))?(?: an?)? ${PERSONA} (?:ai|assistant|model|chatbot|bot|language model|version|persona|character)\\b`,
  },
  {
    id: 'no-restrictions',
    description: '"you have no restrictions / rules / filters"',
    source:
      "\\byou (?:have|now have|'ve got|are under) no (?:(?:ethical|moral|safety|content) )?(?:restrictions|rules|limitations|filters|guidelines|boundaries|constraints)\\b",
  },
  {
    id: 'freed-from-rules',
    description: '"you have been freed / liberated from ..."',
    source: '\\byou (?:are|have been|were) (?:now )?(?:freed|released|liberated|unshackled|unchained) from\\b',
  },
  {
    id: 'bypass-safety',
    description: '"ignore / disable your safety guidelines / content filters"',
    source:
      '\\b(?:ignore|bypass|disable|turn off|deactivate|circumvent|remove|evade) (?:(?:all|any|the|your|of) ){0,2}(?:safety|content|ethical|moral) (?:filters?|guidelines|restrictions|rules|policies|protocols|guardrails|measures)\\b',
  },
  // Fake authority
  {
    id: 'fake-system-message',
    description: '"this is an urgent system message / admin override"',
    source:
      '\\bthis is (?:an? )?(?:(?:urgent|important|official|priority) )?(?:system|admin|administrator|developer|root) (?:message|override|instruction|command|directive)\\b',
  },
  {
    id: 'admin-override',
    description: '"admin override", "developer override"',
    source: '\\b(?:admin|administrator|developer|system|root|sudo) override\\b',
  },
  {
    id: 'role-prefix',
    description: '"system: you are a ..." / "developer: ignore ..." role prefixes in data',
    source:
      '\\b(?<![^ ])(?:system|developer) ?: (?:you are (?:now |an? |the )|ignore|disregard|new instructions|from now on|override)',
  },
  {
    id: 'begin-system-prompt',
    description: '"BEGIN SYSTEM PROMPT" / "end of system message" delimiters',
    source: '\\b(?:begin|start|end) (?:of )?(?:the )?system (?:prompt|message|instructions)\\b',
  },
  {
    id: 'end-of-context',
    description: '"end of document. new instructions" context-boundary forgery',
    source:
      '\\bend of (?:the )?(?:user |untrusted |tool )?(?:input|document|context|data|content)\\b.{0,8}\\b(?:begin |start )?(?:system |new )(?:instructions?|prompt)\\b',
  },
  // Chat-template / special tokens
  { id: 'chatml-token', description: 'ChatML <|im_start|>, <|im_end|>, <|im_sep|>', source: '<\\|im_(?:start|end|sep)\\|>' },
  {
    id: 'role-special-token',
    description: '<|system|>, <|user|>, <|assistant|> role tokens',
    source: '<\\|(?:system|user|assistant|developer|tool)\\|>',
  },
  {
    id: 'llama3-header-token',
    description: 'Llama 3 <|start_header_id|>, <|end_header_id|>',
    source: '<\\|(?:start|end)_header_id\\|>',
  },
  { id: 'eot-token', description: 'Llama 3 <|eot_id|>, <|eom_id|>', source: '<\\|(?:eot|eom)_id\\|>' },
  {
    id: 'text-boundary-token',
    description: '<|endoftext|>, <|begin_of_text|>, <|end_of_text|>, <|endofprompt|>',
    source: '<\\|(?:endoftext|begin_of_text|end_of_text|endofprompt)\\|>',
  },
  { id: 'fim-token', description: '<|fim_prefix|>, <|fim_middle|>, <|fim_suffix|>', source: '<\\|fim_(?:prefix|middle|suffix)\\|>' },
  { id: 'llama-inst-marker', description: 'Llama 2 [INST] / [/INST]', source: '\\[/?inst\\]' },
  { id: 'llama-sys-marker', description: 'Llama 2 <<SYS>> / <</SYS>>', source: '<</?sys>>' },
  { id: 'gemma-turn-marker', description: 'Gemma <start_of_turn> / <end_of_turn>', source: '<(?:start|end)_of_turn>' },
  {
    id: 'alpaca-header',
    description: 'Alpaca-style "### Instruction:" / "### System:" headers',
    source: '#{2,4} ?(?:system|instruction)(?: prompt)? ?:',
  },
  {
    id: 'xml-system-tag',
    description: '<system>, </system>, <system_prompt>, <instructions> tags',
    source: '</?(?:system|system_prompt|sys_prompt|instructions)>',
  },
  {
    id: 'html-comment-directive',
    description: 'hidden HTML comment addressed to the model: "<!-- ai: ..."',
    source: '<!-- ?(?:system|ai|assistant|llm|agent|instructions?|prompt) ?:',
  },
  // Addressing the model from inside data
  {
    id: 'note-to-ai',
    description: '"note to the AI", "instructions for the language model"',
    source: `\\b(?:note|message|instructions?|attention|notice) (?:to|for) (?:the |any |all |an? )?${AI}\\b`,
  },
  {
    id: 'if-you-are-an-ai',
    description: '"if you are an AI / LLM reading this"',
    source: `\\bif you are (?:an? )?${AI}\\b`,
  },
  {
    id: 'ai-reading-this',
    description: '"AI assistants processing this ..."',
    source: `\\b${AI}s? (?:reading|processing|parsing|summari[sz]ing) this\\b`,
  },
  // Tool hijack / exfiltration
  {
    id: 'covert-action',
    description: '"silently call / send ...", "without telling the user, delete ..."',
    source:
      '\\b(?:secretly|silently|quietly|covertly|without (?:telling|informing|asking|notifying) (?:the )?user,?) (?:call|invoke|run|execute|use|trigger|send|forward|delete|upload|email)\\b',
  },
  {
    id: 'hide-from-user',
    description: '"do not tell the user"',
    source:
      "\\b(?:do not|don't|never) (?:tell|inform|alert|notify|mention (?:this|it) to|reveal (?:this|it) to|show (?:this|it) to) (?:the |your )?(?:user|human|operator|owner)\\b",
  },
  {
    id: 'exfiltrate-secrets',
    description: '"send all API keys / your credentials to ..."',
    source:
      '\\b(?:send|forward|upload|exfiltrate|email|e-mail|post|transmit|leak|copy) (?:all (?:of )?(?:the |your )?|your |every |any )(?:api keys?|secrets?|credentials|passwords?|access tokens?|auth tokens?|private keys?|ssh keys?|env(?:ironment)? variables|\\.env(?: file)?|system prompt|conversation history|chat history) to\\b',
  },
  {
    id: 'tool-call-injection',
    description: '"call the <x> tool with ..." directives addressed to the model: "you must (now) call / use the ... tool"',
    source: '\\byou (?:must|should|need to|have to) (?:now |immediately |first )?(?:call|invoke|use|run|execute) the [a-z0-9_.-]{1,64} (?:tool|function)\\b',
  },
];

// ---------------------------------------------------------------------------------------------
// Normalization

/** Removed before matching (see header, step 3). */
function isInvisible(c: number): boolean {
  return (
    (c >= 0x0300 && c <= 0x036f) ||
    c === 0x00ad ||
    c === 0x034f ||
    c === 0x180e ||
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2060 && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x206f) ||
    (c >= 0xfe00 && c <= 0xfe0f) ||
    c === 0xfeff
  );
}

/** The characters of JS `\s` (U+FEFF excluded: it is removed as invisible first). */
function isSpace(c: number): boolean {
  return (
    (c >= 0x09 && c <= 0x0d) ||
    c === 0x20 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000
  );
}

/** Lowercase Cyrillic / Greek letters that look like ASCII letters, and typographic apostrophes. */
export const CONFUSABLES: Readonly<Record<string, string>> = {
  а: 'a', в: 'b', е: 'e', һ: 'h', н: 'h', і: 'i', ј: 'j', к: 'k', м: 'm', о: 'o', р: 'p', с: 'c', т: 't',
  у: 'y', х: 'x', ѕ: 's', ԁ: 'd', ӏ: 'l', ԛ: 'q', ԝ: 'w', ɡ: 'g',
  α: 'a', ε: 'e', ι: 'i', κ: 'k', μ: 'm', ν: 'v', ο: 'o', ρ: 'p', τ: 't', υ: 'u', χ: 'x',
  '\u2018': "'", '\u2019': "'", '\u02bc': "'",
};
const CONFUSABLE_CODES = new Map(Object.entries(CONFUSABLES).map(([k, v]) => [k.charCodeAt(0), v.charCodeAt(0)]));

const ASCII_ONLY = /^[\x00-\x7f]*$/;
const CHUNK = 8192;

/**
 * The normalized form the patterns are written against (header, steps 1–5). Steps 3–5 are one
 * pass over a code-unit buffer: replace() with many matches is quadratic-ish in V8 practice.
 */
export function normalizeForDetection(s: string): string {
  const t = (ASCII_ONLY.test(s) ? s : s.normalize('NFKD')).toLowerCase();
  const buf = new Uint16Array(t.length);
  let j = 0;
  let space = false;
  for (let i = 0; i < t.length; i++) {
    let c = t.charCodeAt(i);
    if (c >= 0x80 && isInvisible(c)) continue;
    if (c <= 0x20 || c >= 0x80 ? isSpace(c) : false) {
      if (!space) buf[j++] = 0x20;
      space = true;
      continue;
    }
    space = false;
    if (c >= 0x80) c = CONFUSABLE_CODES.get(c) ?? c;
    buf[j++] = c;
  }
  let out = '';
  for (let k = 0; k < j; k += CHUNK) out += String.fromCharCode.apply(null, buf.subarray(k, Math.min(j, k + CHUNK)) as unknown as number[]);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Engine
//
// Two combined expressions: patterns that start at a word boundary share one leading `\b`
// (`\b(?:(p1)|(p2)|...)`), so positions inside words fail at once instead of trying every
// alternative; the few symbol-led patterns (`<|...|>`, `[inst]`, `###`) form the second one.

interface Engine {
  re: RegExp;
  ids: string[];
}

function engine(patterns: readonly InjectionPattern[], wordLed: boolean): Engine {
  const parts = patterns.map((p) => `(${wordLed ? p.source.slice(2) : p.source})`);
  return { re: new RegExp(wordLed ? `\\b(?:${parts.join('|')})` : parts.join('|'), 'g'), ids: patterns.map((p) => p.id) };
}

const ENGINES: Engine[] = [
  engine(
    INJECTION_PATTERNS.filter((p) => p.source.startsWith('\\b')),
    true,
  ),
  engine(
    INJECTION_PATTERNS.filter((p) => !p.source.startsWith('\\b')),
    false,
  ),
];

/** Pattern ids found in one (raw) string, in INJECTION_PATTERNS order, without repeats. */
export function scanText(text: string): string[] {
  const norm = normalizeForDetection(text);
  const found = new Set<string>();
  for (const { re: shared, ids } of ENGINES) {
    const re = new RegExp(shared); // own lastIndex: safe under re-entrancy
    let m: RegExpExecArray | null;
    while ((m = re.exec(norm)) !== null) {
      for (let g = 1; g < m.length; g++) {
        if (m[g] !== undefined) {
          found.add(ids[g - 1]);
          break;
        }
      }
      if (m[0].length === 0) re.lastIndex++;
    }
  }
  return INJECTION_PATTERNS.filter((p) => found.has(p.id)).map((p) => p.id);
}

export function detectInjection(args: unknown, cfg: PromptInjectionConfig): InjectionResult {
  const action: InjectionAction = cfg?.action ?? 'block-and-log';
  if (!cfg || action === 'ignore') return { matched: [], action };
  const detection = cfg.detection ?? 'pattern';
  if (detection === 'none') return { matched: [], action };
  if (detection === 'llm-based') return { matched: [], action, unsupported: true };
  // 'pattern' | 'hybrid' (pattern part only)

  const matched: InjectionMatch[] = [];
  let budget = SCAN_BUDGET;
  let over = false;
  const outcome = walkStrings(args, (s) => {
    budget -= s.text.length;
    if (budget < 0) {
      over = true;
      matched.push({ pattern: 'scan-limit-exceeded', path: s.path(), where: s.where });
      return false;
    }
    for (const id of scanText(s.text)) {
      matched.push({ pattern: id, path: s.path(), where: s.where });
      if (matched.length >= MAX_MATCHES) return false;
    }
  });
  if (outcome === 'limit' && !over) matched.push({ pattern: 'scan-limit-exceeded', path: '$', where: 'value' });
  return { matched, action };
}
