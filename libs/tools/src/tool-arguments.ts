import { type StoredToolValue, type ToolSchemaProperty, notAToolParameter } from '@app/contracts';
import type { ToolDefinition } from './tool-call.types';

const typeChecks: Record<string, { test: (value: unknown) => boolean; message: string }> = {
  string: { test: (value) => typeof value === 'string', message: 'must be a string.' },
  number: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  float: { test: (value) => typeof value === 'number' && Number.isFinite(value), message: 'must be a number.' },
  integer: { test: (value) => Number.isSafeInteger(value), message: 'must be an integer.' },
  boolean: { test: (value) => typeof value === 'boolean', message: 'must be true or false.' },
  array: { test: (value) => Array.isArray(value), message: 'must be an array.' },
  object: {
    test: (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
    message: 'must be an object.',
  },
};

/** The most arguments outside the schema an answer lists: a body of thousands of them gets a short answer. */
export const MAX_UNKNOWN_ARGUMENTS_LISTED = 10;
/** The most messages an answer holds in all: a list of thousands of wrong items gets a short answer too. */
export const MAX_ARGUMENT_ERRORS = 50;
/** A parameter's name is at most this long; a longer unknown name is shown cut there. */
const MAX_SHOWN_NAME = 64;

/**
 * Checks arguments against a tool's schema as the assistant's would be: required ones present, each of its
 * declared type and among its `enum`, lists item by item and objects property by property, and none the schema does
 * not name at any level (never forwarded: an endpoint may act on a field its owner never offered). Returns
 * Laravel-style messages keyed by path (`arguments.<name>`, `arguments.items.0.sku`), at most
 * MAX_UNKNOWN_ARGUMENTS_LISTED of them for unknown names an object, each name cut at 64 characters, and at most
 * MAX_ARGUMENT_ERRORS in all. The schema was bounded when it was saved, so the walk is too.
 */
export function validateToolArguments(
  schema: ToolDefinition['schema'],
  values: Record<string, unknown>,
): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const report = (key: string, message: string) => {
    if (Object.keys(errors).length < MAX_ARGUMENT_ERRORS) errors[key] = [message];
  };
  checkObject(schema, values, 'arguments', report);
  return errors;
}

type Report = (key: string, message: string) => void;

function checkObject(properties: ToolSchemaProperty[], values: Record<string, unknown>, path: string, report: Report) {
  for (const property of properties) {
    const key = `${path}.${property.name}`;
    const value = Object.hasOwn(values, property.name) ? values[property.name] : undefined;
    if (value === undefined || value === null) {
      if (property.required) report(key, `The ${key} field is required.`);
      continue;
    }
    checkValue(property, value, key, report);
  }
  const named = new Set(properties.map((property) => property.name));
  let listed = 0;
  for (const name of Object.keys(values)) {
    if (named.has(name)) continue;
    if (listed++ === MAX_UNKNOWN_ARGUMENTS_LISTED) break;
    const key = `${path}.${name.length > MAX_SHOWN_NAME ? `${name.slice(0, MAX_SHOWN_NAME)}...` : name}`;
    report(key, notAToolParameter(key));
  }
}

function checkValue(schema: StoredToolValue, value: unknown, key: string, report: Report) {
  const check = typeChecks[schema.type];
  if (check && !check.test(value)) return report(key, `The ${key} field ${check.message}`);
  if (schema.enum && !schema.enum.includes(value as string | number)) {
    return report(key, `The selected ${key} is invalid.`);
  }
  if (schema.items && Array.isArray(value)) {
    const items = schema.items;
    value.forEach((item, index) => {
      const itemKey = `${key}.${index}`;
      if (item === undefined || item === null) report(itemKey, `The ${itemKey} field is required.`);
      else checkValue(items, item, itemKey, report);
    });
  }
  if (schema.properties && check?.test(value)) {
    checkObject(schema.properties, value as Record<string, unknown>, key, report);
  }
}
