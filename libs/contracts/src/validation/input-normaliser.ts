import type { DataKeyMessage } from './data-keys';
import { humaniseAttribute } from './validation-messages';

/** Deepest nesting of objects and arrays a request may carry; no resource of the API comes near it. */
export const MAX_INPUT_DEPTH = 32;

export type InputProblem = { path: string; message: string };

/**
 * Prepares request input (body or query) the way Laravel's middleware does before validation, and finds what
 * Postgres or the validators cannot take:
 * - an empty string becomes null (`ConvertEmptyStringsToNull`), so `description=` clears instead of storing "";
 * - a string holding a NUL character or a lone UTF-16 surrogate is reported on its field (Postgres refuses
 *   the first, and the second cannot be encoded as UTF-8);
 * - `__proto__`, `constructor` and `prototype` keys are dropped, so no object prototype can be reached; in a
 *   top-level field of `dataKeys` they are reported on their path instead.
 * Works iteratively over at most MAX_INPUT_DEPTH levels; the JSON parser already refused deeper bodies.
 */
export function normaliseInput(
  value: unknown,
  dataKeys: ReadonlyMap<string, DataKeyMessage> = new Map(),
): { value: unknown; problems: InputProblem[] } {
  const problems: InputProblem[] = [];
  const walk = (node: unknown, path: string, depth: number): unknown => {
    if (typeof node === 'string') {
      if (node === '') return null;
      if (node.includes('\u0000') || !node.isWellFormed()) {
        problems.push({ path, message: `The ${humaniseAttribute(path)} field contains invalid characters.` });
      }
      return node;
    }
    if (node === null || typeof node !== 'object' || Buffer.isBuffer(node)) return node;
    if (depth >= MAX_INPUT_DEPTH) {
      problems.push({ path, message: `The ${humaniseAttribute(path)} field is nested too deeply.` });
      return node;
    }
    if (Array.isArray(node)) return node.map((item, index) => walk(item, join(path, String(index)), depth + 1));
    if (!isPlainRecord(node)) return node;
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node)) {
      if (UNSAFE_KEYS.has(key)) {
        const refused = depth === 1 ? dataKeys.get(path) : undefined;
        if (refused) problems.push({ path: join(path, key), message: refused(join(path, key)) });
        continue;
      }
      if (key.includes('\u0000') || !key.isWellFormed()) {
        problems.push({ path: join(path, 'key'), message: 'A field name contains invalid characters.' });
        continue;
      }
      result[key] = walk(item, join(path, key), depth + 1);
    }
    return result;
  };
  return { value: walk(value, '', 0), problems };
}

const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

function join(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

function isPlainRecord(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
