import { notAToolParameter } from '@app/contracts';
import type { ToolDefinition } from './tool-call.types';

const typeChecks: Record<string, { test: (value: unknown) => boolean; message: string }> = {
  string: { test: (value) => typeof value === 'string', message: 'must be a string.' },
  number: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  float: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  integer: { test: (value) => Number.isSafeInteger(value), message: 'must be an integer.' },
  boolean: { test: (value) => typeof value === 'boolean', message: 'must be true or false.' },
};

/** The most arguments outside the schema an answer lists: a body of thousands of them gets a short answer. */
export const MAX_UNKNOWN_ARGUMENTS_LISTED = 10;
/** A parameter's name is at most this long; a longer unknown name is shown cut there. */
const MAX_SHOWN_NAME = 64;

/**
 * Checks arguments against a tool's schema as the assistant's would be: required ones present, each of its
 * declared type, and none the schema does not name (never forwarded: an endpoint may act on a field its owner never
 * offered). Returns Laravel-style messages keyed `arguments.<name>`, at most MAX_UNKNOWN_ARGUMENTS_LISTED of them
 * for unknown names, each name cut at 64 characters.
 */
export function validateToolArguments(
  schema: ToolDefinition['schema'],
  values: Record<string, unknown>,
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const parameter of schema) {
    const key = `arguments.${parameter.name}`;
    const value = Object.hasOwn(values, parameter.name) ? values[parameter.name] : undefined;
    if (value === undefined || value === null) {
      if (parameter.required) errors[key] = [`The ${key} field is required.`];
      continue;
    }
    const check = typeChecks[parameter.type];
    if (check && !check.test(value)) errors[key] = [`The ${key} field ${check.message}`];
  }
  const named = new Set(schema.map((parameter) => parameter.name));
  let listed = 0;
  for (const name of Object.keys(values)) {
    if (named.has(name)) continue;
    if (listed++ === MAX_UNKNOWN_ARGUMENTS_LISTED) break;
    const key = `arguments.${name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}...` : name}`;
    errors[key] = [notAToolParameter(key)];
  }
  return errors;
}
