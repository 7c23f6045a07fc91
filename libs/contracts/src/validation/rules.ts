import { applyDecorators } from '@nestjs/common';
import {
  ArrayMaxSize,
  ArrayMinSize,
  isURL,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateIf,
  ValidateBy,
  ValidateNested,
} from 'class-validator';
import { Transform, Type } from 'class-transformer';
import { type DataKeyMessage, markDataKeys } from './data-keys';

/**
 * Validation decorators whose messages read like Laravel's. `:attribute` is replaced by the exception factory
 * with the field's full request path (`schema.0.name`), humanised the way Laravel does it.
 */
const field = (text: string) => ({ message: `The :attribute field ${text}` });

/** The key under which the "required" failure is reported; when it fails, the field's other rules are moot. */
export const REQUIRED_CONSTRAINT = 'isNotEmpty';

export const Required = () => IsNotEmpty(field('is required.'));
/** Laravel's `required_without`: reported under the same key as `required`, so it bails the same way. */
export const RequiredWithout = (other: string) =>
  IsNotEmpty(field(`is required when ${other.replace(/_/g, ' ')} is not present.`));
export const Optional = () => IsOptional();
/** Laravel's `required_if`: reported under the `required` key, so the field's other rules are moot then. */
export const RequiredWhen = (other: string, value: string) =>
  IsNotEmpty(field(`is required when ${other} is ${value}.`));
/** Laravel's `prohibited_unless`: the field may be given only when `other` is `value` (a note has no `role`). */
export const ProhibitedUnless = (other: string, value: string) =>
  ValidateBy(
    {
      name: 'prohibitedUnless',
      validator: {
        validate: (given, args) =>
          given === undefined || given === null || (args?.object as Record<string, unknown>)[other] === value,
      },
    },
    field(`is prohibited unless ${other} is in ${value}.`),
  );
/** Laravel's `prohibited_if`: the field may not be given when `other` is `value` (a key press has no `text`). */
export const ProhibitedWhen = (other: string, value: string) =>
  ValidateBy(
    {
      name: 'prohibitedWhen',
      validator: {
        validate: (given, args) =>
          given === undefined || given === null || (args?.object as Record<string, unknown>)[other] !== value,
      },
    },
    field(`is prohibited when ${other} is ${value}.`),
  );
/** Laravel's `missing_with`: the field may not be given beside `other` (a number or a SIP URI, never both). */
export const ProhibitedWith = (other: string) =>
  ValidateBy(
    {
      name: 'prohibitedWith',
      validator: {
        validate: (given, args) => {
          const beside = (args?.object as Record<string, unknown>)[other];
          return given === undefined || given === null || beside === undefined || beside === null;
        },
      },
    },
    field(`is prohibited when ${other.replace(/_/g, ' ')} is present.`),
  );
/** Laravel's `gte:other` between two numbers: when both are given, this one is at least the other's value. */
export const AtLeastField = (other: string) =>
  ValidateBy(
    {
      name: 'atLeastField',
      validator: {
        validate: (given, args) => {
          const floor = (args?.object as Record<string, unknown>)[other];
          return typeof given !== 'number' || typeof floor !== 'number' || given >= floor;
        },
      },
    },
    {
      message: (args) =>
        `The :attribute field must be greater than or equal to ${(args.object as Record<string, number>)[other]}.`,
    },
  );
/** Laravel's `sometimes`: absent is fine, but a present value (null included) must pass the other rules. */
export const Sometimes = () => ValidateIf((_object, value) => value !== undefined);
/** Present-but-null is allowed and means "clear it"; absent leaves the value unchanged. */
export const Nullable = () => ValidateIf((_object, value) => value !== null);
export const String = () => IsString(field('must be a string.'));
export const MaxChars = (max: number) => MaxLength(max, field(`must not be greater than ${max} characters.`));
export const MinChars = (min: number) => MinLength(min, field(`must be at least ${min} characters.`));
export const Email = () => IsEmail({}, field('must be a valid email address.'));
export const Integer = (options: { each?: boolean } = {}) => IsInt({ ...field('must be an integer.'), ...options });

/** The largest value of Postgres' `integer`, the type of every id column. */
export const MAX_ID = 2_147_483_647;

/**
 * A reference to a row by id (Laravel's `integer` and `exists`): an id no row can have (0, -1, 99999999999) is
 * refused here with the `exists` message, so it never reaches Postgres, which would refuse it as out of range.
 * The service still checks that an id in range names a row of the account.
 */
export const Id = (options: { each?: boolean } = {}) =>
  applyDecorators(
    Integer(options),
    ValidateBy(
      {
        name: 'id',
        validator: {
          validate: (value) => typeof value !== 'number' || !Number.isInteger(value) || (value >= 1 && value <= MAX_ID),
        },
      },
      { message: 'The selected :attribute is invalid.', ...options },
    ),
  );

/** A list of ids that replaces the stored one: at most `max`, each an `Id`. */
export const IdList = (max: number) => applyDecorators(ArrayRule(), ArrayMax(max), Id({ each: true }));

/**
 * An integer sent as text (query string, multipart field). Only plain decimal digits become a number; `0x5`,
 * `+1`, ` 1`, `1.0` and `1e0`, which `Number()` would all accept, stay text and fail the integer rule.
 */
export const DecimalInteger = () =>
  applyDecorators(
    Transform(({ value }) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value)),
    Integer(),
  );
export const Numeric = () => IsNumber({ allowNaN: false, allowInfinity: false }, field('must be a number.'));
export const Boolean = () => IsBoolean(field('must be true or false.'));
/** Laravel's `array` rule, exported as `Rule.Array`; named apart here so the global `Array` stays in reach. */
const ArrayRule = () => IsArray(field('must be an array.'));
export { ArrayRule as Array };
export const ArrayMin = (min: number) => ArrayMinSize(min, field(`must have at least ${min} items.`));

const tooManyItems = (max: number) => field(`must not have more than ${max} items.`);
/** Each request DTO's capped lists (`field -> max`), read by `listsOverCap`. */
const listCaps = new WeakMap<object, Map<string, number>>();

/**
 * Laravel's `max` on a list. The cap is also recorded for `listsOverCap`, so that a list far over it is refused for
 * its size alone before its items are transformed and validated one by one.
 */
export const ArrayMax = (max: number) =>
  applyDecorators(ArrayMaxSize(max, tooManyItems(max)), (target: object, property: string | symbol) => {
    const caps = listCaps.get(target.constructor) ?? new Map<string, number>();
    caps.set(property.toString(), max);
    listCaps.set(target.constructor, caps);
  });

/** The capped lists of a DTO class (`[field, max]`), its base classes' included. */
export function cappedLists(type: object): [string, number][] {
  const lists: [string, number][] = [];
  for (let current: unknown = type; typeof current === 'function'; current = Object.getPrototypeOf(current)) {
    lists.push(...(listCaps.get(current) ?? []));
  }
  return lists;
}

/** The message of `ArrayMax`, with `:attribute` still to replace. */
export const tooManyItemsMessage = (max: number) => tooManyItems(max).message;
export const PlainObject = () => IsObject(field('must be an object.'));
/**
 * An object whose keys are the client's data (a tool's arguments): a key such as `__proto__`, dropped from any other
 * input, is refused on its path with `message` (see `normaliseInput`). Top-level fields only.
 */
export const DataKeys =
  (message: DataKeyMessage): PropertyDecorator =>
  (target, property) =>
    markDataKeys(target, property.toString(), message);
export const OneOf = (values: readonly unknown[], options: { each?: boolean } = {}) =>
  IsIn([...values], { message: 'The selected :attribute is invalid.', ...options });
/** Laravel's `not_in`; `ignoreCase` compares lower-cased (header names). */
export const NotOneOf = (values: readonly string[], ignoreCase = false) =>
  ValidateBy(
    {
      name: 'notOneOf',
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || !values.includes(ignoreCase ? value.toLowerCase() : value),
      },
    },
    { message: 'The selected :attribute is invalid.' },
  );
/** Laravel's `date_format:Y-m-d`: a calendar date `YYYY-MM-DD` that exists. */
export const DateYmd = () =>
  ValidateBy(
    {
      name: 'dateFormat',
      validator: {
        validate: (value) => {
          if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
          const day = new Date(`${value}T00:00:00Z`);
          // An impossible date (2026-02-31) is either invalid or rolls over into another day.
          return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value);
        },
      },
    },
    { message: 'The :attribute field must match the format Y-m-d.' },
  );
/** Laravel's `date` for an instant: ISO 8601 with a time and an offset (`2026-01-02T03:04:05.678Z`), a real one. */
export const DateTime = () =>
  ValidateBy(
    {
      name: 'dateTime',
      validator: {
        validate: (value) =>
          typeof value === 'string' &&
          /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/.test(value) &&
          !Number.isNaN(Date.parse(value)) &&
          // An impossible day (2026-02-31) rolls over; the date part must survive the round trip in UTC's terms.
          new Date(`${value.slice(0, 10)}T00:00:00Z`).toISOString().startsWith(value.slice(0, 10)),
      },
    },
    { message: 'The :attribute field must be a valid date.' },
  );
/**
 * A list filter on part of a phone number: digits, with an optional leading `+`. Most HTTP clients send a `+` in a
 * query string as it is, and a query string's `+` means a space: a value that starts with one space and then only
 * digits is read as the `+` it was meant to be.
 */
export const PhoneNumberPart = () =>
  applyDecorators(
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && /^ [0-9]+$/.test(value) ? `+${value.slice(1)}` : value,
    ),
    OptionalText(32),
    Matches(/^\+?[0-9]+$/, { message: 'The :attribute field format is invalid.' }),
  );
export const Pattern = (pattern: RegExp) => Matches(pattern, { message: 'The :attribute field format is invalid.' });
export const HttpUrl = () =>
  IsUrl({ protocols: ['http', 'https'], require_protocol: true, require_tld: false }, field('must be a valid URL.'));

/** The common shapes of a free-text field: a string of at most `max` characters. */
export const RequiredText = (max = 255) => applyDecorators(Required(), String(), MaxChars(max));
export const OptionalText = (max = 255) => applyDecorators(Optional(), String(), MaxChars(max));

export const Between = (min: number, max: number) =>
  applyDecorators(
    Min(min, field(`must be between ${min} and ${max}.`)),
    Max(max, field(`must be between ${min} and ${max}.`)),
  );

/** The constraint name of `DistinctBy`, whose message lists the item paths (`1.name`) that repeat an earlier one. */
export const DISTINCT_CONSTRAINT = 'distinct';

/**
 * Paths (`index.key`) of the items of `list` whose `key` repeats that of an earlier item; without a key, the paths
 * (`index`) of the text items that repeat an earlier one.
 */
export function repeatedItemPaths(list: unknown, key?: string): string[] {
  if (!Array.isArray(list)) return [];
  const seen = new Set<unknown>();
  return list.flatMap((item, index) => {
    const value =
      key === undefined
        ? item
        : item !== null && typeof item === 'object'
          ? (item as Record<string, unknown>)[key]
          : undefined;
    if (typeof value !== 'string') return [];
    if (seen.has(value)) return [key === undefined ? `${index}` : `${index}.${key}`];
    seen.add(value);
    return [];
  });
}

/**
 * Laravel's `distinct` on `field.*.key` (or, without a key, on `field.*`): no two items of the list may have the same
 * `key` (be the same text). Each repeat is reported on its own path (`schema.1.name`, `values.2`), as Laravel does.
 */
export const DistinctBy = (key?: string) =>
  ValidateBy({
    name: DISTINCT_CONSTRAINT,
    validator: {
      validate: (value) => repeatedItemPaths(value, key).length === 0,
      defaultMessage: (args) => repeatedItemPaths(args?.value, key).join(','),
    },
  });

/**
 * The constraint name of the check that each item of an object list is an object, whose message lists the indexes
 * of the items that are not. class-validator alone validates a list inside the list as if it were the list
 * itself, so `[[]]` would pass.
 */
export const EACH_OBJECT_CONSTRAINT = 'eachObject';

const listItemIndexes = (list: unknown): number[] =>
  Array.isArray(list)
    ? list.flatMap((item, index) => (item === null || typeof item !== 'object' || Array.isArray(item) ? [index] : []))
    : [];

/** Validates each item of an array of objects with the given DTO class; an item that is not an object is 422. */
export const EachNested = (type: () => new () => object) =>
  applyDecorators(
    ArrayRule(),
    ValidateBy({
      name: EACH_OBJECT_CONSTRAINT,
      validator: {
        validate: (value) => listItemIndexes(value).length === 0,
        defaultMessage: (args) => listItemIndexes(args?.value).join(','),
      },
    }),
    ValidateNested({ each: true }),
    Type(type),
  );

/**
 * One object validated with the given DTO class (its errors on their paths: `analysis.success.rubric`); anything but
 * a plain object is "must be an object".
 */
export const Nested = (type: () => new () => object) =>
  applyDecorators(
    ValidateBy(
      {
        name: 'isObject',
        validator: { validate: (value) => value !== null && typeof value === 'object' && !Array.isArray(value) },
      },
      field('must be an object.'),
    ),
    ValidateNested(),
    Type(type),
  );

/**
 * A boolean as a query string carries it: `true`, `false`, `1` or `0` (Laravel's `boolean`, with the words most
 * clients send); anything else stays as it is and fails as "must be true or false".
 */
export const toBoolean = ({ value }: { value: unknown }): unknown =>
  value === 'true' || value === '1' || value === 1
    ? true
    : value === 'false' || value === '0' || value === 0
      ? false
      : value;
export const BooleanText = () => applyDecorators(Transform(toBoolean), Boolean());

/**
 * The constraint name of `EachText`, whose message lists the items that fail (`index:message`, one a line), each
 * reported on its own path (`values.2`) as Laravel reports `field.*` rules.
 */
export const EACH_TEXT_CONSTRAINT = 'eachText';

const textItemProblems = (list: unknown, max: number): string[] =>
  Array.isArray(list)
    ? list.flatMap((item, index) =>
        item === null || item === undefined
          ? [`${index}:is required.`]
          : typeof item !== 'string'
            ? [`${index}:must be a string.`]
            : item.length > max
              ? [`${index}:must not be greater than ${max} characters.`]
              : [],
      )
    : [];

/** Laravel's `field.*` => `required|string|max:n` on a list of texts (an empty text arrives as null: required). */
export const EachText = (max: number) =>
  ValidateBy({
    name: EACH_TEXT_CONSTRAINT,
    validator: {
      validate: (value) => textItemProblems(value, max).length === 0,
      defaultMessage: (args) => textItemProblems(args?.value, max).join('\n'),
    },
  });

/** An HTTP header field name: an RFC 9110 token. */
export const HeaderName = () => Pattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/);

/** Text that cannot break out of an HTTP header line. */
export const WithoutLineBreaks = () =>
  ValidateBy(
    {
      name: 'withoutLineBreaks',
      validator: { validate: (value) => typeof value !== 'string' || !/[\r\n]/.test(value) },
    },
    { message: 'The :attribute field must not contain line breaks.' },
  );

/**
 * An http(s) URL that may hold `{param}` placeholders and `{{variable}}` templates, filled in when it is called;
 * it must be a valid URL once they are.
 */
export const HttpUrlTemplate = () =>
  ValidateBy(
    {
      name: 'httpUrlTemplate',
      validator: {
        validate: (value) =>
          typeof value === 'string' &&
          isURL(value.replace(/\{\{\s*[A-Za-z_][A-Za-z0-9_.]*\s*\}\}|\{[A-Za-z_][A-Za-z0-9_]*\}/g, 'x'), {
            protocols: ['http', 'https'],
            require_protocol: true,
            require_tld: false,
          }),
      },
    },
    field('must be a valid URL.'),
  );
