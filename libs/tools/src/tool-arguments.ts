import type { ToolDefinition } from './tool-call.types';

const typeChecks: Record<string, { test: (value: unknown) => boolean; message: string }> = {
  string: { test: (value) => typeof value === 'string', message: 'must be a string.' },
  number: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  float: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  integer: { test: (value) => Number.isSafeInteger(value), message: 'must be an integer.' },
  boolean: { test: (value) => typeof value === 'boolean', message: 'must be true or false.' },
};

/**
 * Checks arguments against a tool's schema as the assistant's would be: required ones present, each of its
 * declared type. Returns Laravel-style messages keyed `arguments.<name>`; arguments the schema does not name
 * pass through untouched.
 */
export function validateToolArguments(
  schema: ToolDefinition['schema'],
  values: Record<string, unknown>,
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const parameter of schema) {
    const key = `arguments.${parameter.name}`;
    const value = values[parameter.name];
    if (value === undefined || value === null) {
      if (parameter.required) errors[key] = [`The ${key} field is required.`];
      continue;
    }
    const check = typeChecks[parameter.type];
    if (check && !check.test(value)) errors[key] = [`The ${key} field ${check.message}`];
  }
  return errors;
}
