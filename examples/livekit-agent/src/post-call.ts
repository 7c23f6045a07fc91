import { llm } from '@livekit/agents';
import type { SessionAssistant } from './service-client.js';
import type { Turn } from './transcript-stream.js';

/** The function the model fills the post-call schema's fields in through. */
export const EVALUATION_TOOL = 'record_call_outcome';

type PostCallField = SessionAssistant['post_call_schema'][number];

type FieldType = 'string' | 'number' | 'integer' | 'boolean';

/** The service's field types, which are JSON Schema's own names, and how to tell a value of each. */
const matchesType: Record<FieldType, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isSafeInteger(value),
  boolean: (value) => typeof value === 'boolean',
};

/**
 * What the assistant's post-call schema asks for, as the model reads it from the finished call's transcript: one
 * forced function call whose arguments are the schema's fields. Only fields the model filled in with a value of
 * their type are kept; none at all (or no schema, or a call where the other side never spoke) is no evaluation.
 */
export async function evaluateCall(
  model: llm.LLM,
  schema: PostCallField[],
  turns: Turn[],
): Promise<Record<string, unknown> | undefined> {
  if (schema.length === 0 || !turns.some((turn) => turn.role === 'user')) return undefined;
  const chatCtx = llm.ChatContext.empty();
  chatCtx.addMessage({
    role: 'system',
    content:
      'You read the transcript of a phone call and record what it established by calling ' +
      `${EVALUATION_TOOL}. Fill in a field only when the call answers it; leave the others out.`,
  });
  chatCtx.addMessage({
    role: 'user',
    content: turns.map((turn) => `${turn.role === 'assistant' ? 'Assistant' : 'Customer'}: ${turn.text}`).join('\n'),
  });
  const recordOutcome = llm.tool({
    name: EVALUATION_TOOL,
    description: 'Records what the call established.',
    parameters: {
      type: 'object',
      properties: Object.fromEntries(
        schema.map((field) => [field.name, { type: typeOf(field), description: field.description }]),
      ),
    },
    // Never run: only the call's arguments are wanted.
    execute: async () => undefined,
  });
  const response = await model
    .chat({ chatCtx, toolCtx: [recordOutcome], toolChoice: { type: 'function', function: { name: EVALUATION_TOOL } } })
    .collect();
  const filled = parseArguments(response.toolCalls.find((call) => call.name === EVALUATION_TOOL)?.args);
  const kept = Object.fromEntries(
    schema
      .filter((field) => matchesType[typeOf(field)](filled[field.name]))
      .map((field) => [field.name, filled[field.name]]),
  );
  return Object.keys(kept).length > 0 ? kept : undefined;
}

function typeOf(field: PostCallField): FieldType {
  return field.type in matchesType ? (field.type as FieldType) : 'string';
}

function parseArguments(args: string | undefined): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(args ?? '{}');
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
