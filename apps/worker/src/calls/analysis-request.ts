import {
  type AnalysisPlan,
  type CallSuccess,
  DESCRIPTIVE_GRADES,
  type PostCallField,
  type PostCallItems,
  successPassed,
} from '@app/contracts';
import type { ChatMessage } from '@app/model-provider';
import type { BudgetedTranscript } from './transcript-budget';

/** What one analysis asks the model for: the parts of the plan that have something to do. */
export interface AnalysisParts {
  summary: { prompt: string | null } | null;
  /** The `post_call_schema` fields to extract; none: no structured data. */
  fields: PostCallField[];
  success: AnalysisPlan['success'] | null;
}

/** The analysis the model's answer gives, as the call stores it. */
export interface AnalysisAnswer {
  summary: string | null;
  structured_data: Record<string, unknown> | null;
  success: CallSuccess | null;
}

type Schema = Record<string, unknown>;

/** The summary's instruction when the plan gives none (as Vapi's default summary asks, a little more precisely). */
export const DEFAULT_SUMMARY_PROMPT =
  'Summarise the call in 2-3 sentences: why it took place, what was said and agreed, and what happens next.';

const RUBRIC_INSTRUCTIONS: Record<AnalysisPlan['success']['rubric'], string> = {
  pass_fail: 'Decide whether the call was a success: `value` true if it was, false if not.',
  score_1_10: 'Score how well the call succeeded: `value` from 1 (a complete failure) to 10 (fully achieved).',
  descriptive: `Grade how well the call succeeded: \`value\` one of ${DESCRIPTIVE_GRADES.join(', ')}.`,
};

/** The assistant's system prompt stands for its purpose up to this many characters. */
const PURPOSE_CHARACTERS = 4000;

/** The parts of `plan` with something to do; undefined when none has (nothing to analyse). */
export function analysisParts(plan: AnalysisPlan, fields: PostCallField[]): AnalysisParts | undefined {
  const parts: AnalysisParts = {
    summary: plan.summary.enabled ? { prompt: plan.summary.prompt } : null,
    fields: plan.structured_data.enabled ? fields : [],
    success: plan.success.enabled ? plan.success : null,
  };
  return parts.summary || parts.fields.length > 0 || parts.success ? parts : undefined;
}

/** A post-call field's values: its type's, or null when the call does not say. */
function fieldSchema(field: PostCallField): Schema {
  const nullable = (schema: Schema): Schema => ({
    ...schema,
    type: [schema.type, 'null'],
    ...(schema.enum ? { enum: [...(schema.enum as unknown[]), null] } : {}),
  });
  const value =
    field.type === 'array' && field.items
      ? { type: 'array', items: itemSchema(field.items) }
      : itemSchema({ type: field.type as PostCallItems['type'], values: field.values });
  return { ...nullable(value), description: field.description };
}

function itemSchema(items: Pick<PostCallItems, 'type' | 'values'>): Schema {
  return items.type === 'enum' ? { type: 'string', enum: items.values ?? [] } : { type: items.type };
}

/** An object whose properties are all required and no other allowed, as strict structured outputs require. */
function strictObject(properties: Record<string, Schema>): Schema {
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

function successSchema(success: AnalysisPlan['success']): Schema {
  const value: Record<AnalysisPlan['success']['rubric'], Schema> = {
    pass_fail: { type: 'boolean' },
    score_1_10: { type: 'integer', enum: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
    descriptive: { type: 'string', enum: [...DESCRIPTIVE_GRADES] },
  };
  // The reason comes first: a model writes the properties in order, so it grades having said why.
  return strictObject({
    reason: { type: 'string', description: 'Why, in one or two sentences' },
    value: { ...value[success.rubric], description: RUBRIC_INSTRUCTIONS[success.rubric] },
  });
}

/**
 * The JSON Schema of the answer, as strict structured outputs take it (OpenAI's "Supported schemas": every object's
 * properties all required, `additionalProperties: false`, a value that may be absent typed with `null`): `summary`,
 * `structured_data` (one property a field) and `success` (`reason`, then `value` on the rubric), each only when asked.
 */
export function analysisSchema(parts: AnalysisParts): Schema {
  return strictObject({
    ...(parts.summary ? { summary: { type: 'string', description: 'The summary' } } : {}),
    ...(parts.fields.length > 0
      ? {
          structured_data: strictObject(
            Object.fromEntries(parts.fields.map((field) => [field.name, fieldSchema(field)])),
          ),
        }
      : {}),
    ...(parts.success ? { success: successSchema(parts.success) } : {}),
  });
}

/** The conversation the model answers: what to do (the plan's instructions), then the transcript. */
export function analysisMessages(
  parts: AnalysisParts,
  transcript: BudgetedTranscript,
  systemPrompt: string | null,
): ChatMessage[] {
  const tasks: string[] = [];
  if (parts.summary) tasks.push(`summary: ${parts.summary.prompt ?? DEFAULT_SUMMARY_PROMPT}`);
  if (parts.fields.length > 0)
    tasks.push(
      'structured_data: each field (its description says what it is) as the call established it; null when the ' +
        'call does not say, never a guess.',
    );
  if (parts.success) {
    const purpose = systemPrompt?.trim()
      ? `The call succeeded if it achieved what the assistant was set up to do. Its instructions were:\n"""\n${systemPrompt.slice(0, PURPOSE_CHARACTERS)}\n"""`
      : 'The call succeeded if it achieved what the caller or the assistant set out to do.';
    tasks.push(
      `success: ${RUBRIC_INSTRUCTIONS[parts.success.rubric]} Say why in \`reason\` first. ${
        parts.success.criteria ? `What a successful call achieves: ${parts.success.criteria}` : purpose
      }`,
    );
  }
  const cut =
    transcript.cutTurns > 0
      ? ` (${transcript.cutTurns} of its ${transcript.turns} turns, in the middle, were left out to fit; a line says where)`
      : '';
  return [
    {
      role: 'system',
      content:
        'You analyse a finished phone call between a voice assistant ("Assistant") and a person ("Customer") from ' +
        `its transcript, and answer in JSON as the schema asks.\n\n${tasks.join('\n\n')}`,
    },
    { role: 'user', content: `The transcript${cut}:\n\n${transcript.text}` },
  ];
}

/**
 * Why `value` does not follow `schema` (the subset `analysisSchema` writes: types, `enum`, objects' properties, arrays'
 * items), naming where; undefined when it does. A strict provider never answers otherwise, but a compatible server
 * may not enforce the schema.
 */
export function schemaProblem(schema: Schema, value: unknown, path = 'the answer'): string | undefined {
  const types = (Array.isArray(schema.type) ? schema.type : [schema.type]) as string[];
  const typeOf = (item: unknown) =>
    item === null
      ? 'null'
      : Array.isArray(item)
        ? 'array'
        : Number.isInteger(item)
          ? 'integer'
          : typeof item === 'number'
            ? Number.isFinite(item)
              ? 'number'
              : 'not a number'
            : typeof item;
  const actual = typeOf(value);
  if (!types.includes(actual) && !(actual === 'integer' && types.includes('number')))
    return `${path} is ${actual === 'object' || actual === 'array' ? `an ${actual}` : `a ${actual}`}, not ${types.join(' or ')}`;
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    return `${path} is ${JSON.stringify(value)}, not one of ${JSON.stringify(schema.enum)}`;
  if (actual === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Schema>;
    const record = value as Record<string, unknown>;
    const extra = Object.keys(record).find((key) => !Object.hasOwn(properties, key));
    if (extra !== undefined) return `${path} has ${JSON.stringify(extra)}, which the schema does not name`;
    for (const [key, property] of Object.entries(properties)) {
      if (!Object.hasOwn(record, key)) return `${path} lacks ${JSON.stringify(key)}`;
      const problem = schemaProblem(property, record[key], `${path}.${key}`);
      if (problem) return problem;
    }
  }
  if (actual === 'array') {
    for (const [index, item] of (value as unknown[]).entries()) {
      const problem = schemaProblem(schema.items as Schema, item, `${path}[${index}]`);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** The analysis an answer that follows the schema gives (the grade's pass decided here, never by the model). */
export function readAnswer(parts: AnalysisParts, json: Record<string, unknown>): AnalysisAnswer {
  const success = json.success as { reason: string; value: boolean | number | string } | undefined;
  return {
    summary: parts.summary ? (json.summary as string) : null,
    structured_data: parts.fields.length > 0 ? (json.structured_data as Record<string, unknown>) : null,
    success:
      parts.success && success
        ? {
            rubric: parts.success.rubric,
            value: success.value,
            passed: successPassed(parts.success.rubric, success.value),
            reason: success.reason,
          }
        : null,
  };
}
