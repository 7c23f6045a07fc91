import type { ValidationError } from 'class-validator';
import {
  cappedLists,
  DISTINCT_CONSTRAINT,
  EACH_OBJECT_CONSTRAINT,
  EACH_TEXT_CONSTRAINT,
  REQUIRED_CONSTRAINT,
  tooManyItemsMessage,
} from './rules';

/** Laravel's display name for a field: underscores become spaces, dot paths stay as they are. */
export function humaniseAttribute(path: string): string {
  return path.replace(/_/g, ' ');
}

/**
 * Rules after which the field's other rules are moot: a missing field is only "required"; a value of the wrong
 * type only "must be a string" (its length means nothing).
 */
const BAIL_CONSTRAINTS = [REQUIRED_CONSTRAINT, 'isString', 'isInt', 'isNumber', 'isBoolean', 'isArray', 'isObject'];

/** Messages for constraints raised outside our rule decorators (nested objects, whitelisting, enums). */
const fallbackMessages: Record<string, string> = {
  nestedValidation: 'The :attribute field must be an object.',
  isDefined: 'The :attribute field is required.',
  whitelistValidation: 'The :attribute field is prohibited.',
};

/**
 * Flattens class-validator's error tree into Laravel's `{ "field.path": [messages] }`, keyed by the request's
 * own field names. When "required" fails, only that message is kept, as Laravel does.
 */
export function flattenValidationErrors(errors: ValidationError[], parentPath = ''): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const error of errors) {
    const path = parentPath ? `${parentPath}.${error.property}` : error.property;
    const {
      [DISTINCT_CONSTRAINT]: repeated,
      [EACH_OBJECT_CONSTRAINT]: notObjects,
      [EACH_TEXT_CONSTRAINT]: notTexts,
      ...constraints
    } = error.constraints ?? {};
    for (const item of repeated ? repeated.split(',') : []) {
      result[`${path}.${item}`] = [`The ${humaniseAttribute(`${path}.${item}`)} field has a duplicate value.`];
    }
    for (const index of notObjects ? notObjects.split(',') : []) {
      result[`${path}.${index}`] = [`The ${humaniseAttribute(`${path}.${index}`)} field must be an object.`];
    }
    for (const problem of notTexts ? notTexts.split('\n') : []) {
      const [index, text] = [problem.slice(0, problem.indexOf(':')), problem.slice(problem.indexOf(':') + 1)];
      result[`${path}.${index}`] = [`The ${humaniseAttribute(`${path}.${index}`)} field ${text}`];
    }
    const keys = Object.keys(constraints).reverse();
    const bail = BAIL_CONSTRAINTS.find((key) => key in constraints);
    const messages = (bail ? [bail] : keys).map((key) =>
      (constraints[key].includes(':attribute')
        ? constraints[key]
        : (fallbackMessages[key] ?? constraints[key])
      ).replace(/:attribute/g, humaniseAttribute(path)),
    );
    if (messages.length > 0) result[path] = [...new Set(messages)];
    if (error.children?.length) Object.assign(result, flattenValidationErrors(error.children, path));
  }
  return result;
}

/**
 * The capped lists (`Rule.ArrayMax`) at the top of `input` that are longer than the DTO `type` allows, as Laravel's
 * errors (`{events: ["The events field must not have more than 100 items."]}`); undefined when there are none.
 * Checked before validation, a list far over its cap costs nothing but this.
 */
export function listsOverCap(type: object, input: object): Record<string, string[]> | undefined {
  const errors: Record<string, string[]> = {};
  for (const [field, max] of cappedLists(type)) {
    const value: unknown = Object.hasOwn(input, field) ? (input as Record<string, unknown>)[field] : undefined;
    if (Array.isArray(value) && value.length > max && !errors[field]) {
      errors[field] = [tooManyItemsMessage(max).replace(':attribute', humaniseAttribute(field))];
    }
  }
  return Object.keys(errors).length > 0 ? errors : undefined;
}
