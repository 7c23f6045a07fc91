import { isScalarMap, MAX_VARIABLES, Rule } from '@app/contracts';

/** The longest answer read from the owner's server; a longer one is no answer (the guard stops reading it). */
export const ANSWER_MAX_BYTES = 64 * 1024;
/** What the runtime says before it hangs up on a refused call: a sentence or two, not a speech. */
export const MAX_REJECT_MESSAGE = 1000;

/** Names no variable may have: they could reach an object's prototype wherever the variables are merged. */
const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The owner's server's answer to `call.assistant_request`, once read. */
export interface AssistantRequestAnswer {
  assistantId?: number;
  variables?: Record<string, string | number | boolean | null>;
  /** The call is refused; the runtime says `message` (when there is one) and hangs up. */
  reject?: { message: string | null };
}

/**
 * Reads `{assistant_id?, variables?, reject?: {message?}}` from the server's answer: an empty body is an answer that
 * changes nothing; fields it does not know are ignored; a field it knows with a value it cannot take makes the
 * whole answer invalid (`invalid` says which, in words for the owner), since acting on part of it could run the
 * call in a way the server did not mean.
 */
export function readAssistantRequestAnswer(body: Buffer): { answer: AssistantRequestAnswer } | { invalid: string } {
  const text = body.toString('utf8');
  if (text.trim() === '') return { answer: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { invalid: 'it is not JSON' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return { invalid: 'it is not a JSON object' };
  }
  const { assistant_id: assistantId, variables, reject } = parsed as Record<string, unknown>;
  const answer: AssistantRequestAnswer = {};

  if (assistantId !== undefined && assistantId !== null) {
    if (
      typeof assistantId !== 'number' ||
      !Number.isInteger(assistantId) ||
      assistantId < 1 ||
      assistantId > Rule.MAX_ID
    ) {
      return { invalid: 'assistant_id is not an assistant’s id' };
    }
    answer.assistantId = assistantId;
  }
  if (variables !== undefined && variables !== null) {
    if (!isScalarMap(variables)) {
      return {
        invalid:
          `variables is not an object of at most ${MAX_VARIABLES} text, number or boolean values ` +
          '(names of at most 64 characters, texts of at most 4096)',
      };
    }
    const named = Object.keys(variables).find((key) => PROTOTYPE_KEYS.has(key));
    if (named !== undefined) return { invalid: `variables may not name ${named}` };
    answer.variables = variables;
  }
  if (reject !== undefined && reject !== null && reject !== false) {
    if (typeof reject !== 'object' || Array.isArray(reject)) return { invalid: 'reject is not an object' };
    const message = (reject as Record<string, unknown>).message;
    if (message !== undefined && message !== null && typeof message !== 'string') {
      return { invalid: 'reject.message is not text' };
    }
    if (typeof message === 'string' && message.length > MAX_REJECT_MESSAGE) {
      return { invalid: `reject.message is longer than ${MAX_REJECT_MESSAGE} characters` };
    }
    answer.reject = { message: message?.trim() ? message.trim() : null };
  }
  return { answer };
}
