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

const JSON_SCHEMA_TYPES: Record<string, string> = { float: 'number' };

/**
 * A tool's arguments as JSON Schema, as a model's function calling takes them: an object of the named properties,
 * the required ones listed. Arguments it does not name are not refused (the test call passes them through too).
 */
export function toolParametersSchema(
  schema: { name: string; type: string; description?: string; required?: boolean }[],
): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(
      schema.map((parameter) => [
        parameter.name,
        {
          type: JSON_SCHEMA_TYPES[parameter.type] ?? parameter.type,
          ...(parameter.description ? { description: parameter.description } : {}),
        },
      ]),
    ),
    required: schema.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  };
}
