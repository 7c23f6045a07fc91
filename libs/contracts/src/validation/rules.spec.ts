import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Rule } from './index';
import { dataKeyFields } from './data-keys';
import { normaliseInput } from './input-normaliser';
import { flattenValidationErrors, listsOverCap } from './validation-messages';

class Item {
  @Rule.RequiredText(10)
  name: string;
}

class Body {
  @Rule.Optional()
  @Rule.Id()
  assistant_id?: number;

  @Rule.Optional()
  @Rule.IdList(3)
  label_ids?: number[];

  @Rule.Optional()
  @Rule.EachNested(() => Item)
  @Rule.DistinctBy('name')
  schema?: Item[];
}

class Query {
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, 100)
  per_page?: number;
}

const errorsOf = <T extends object>(type: new () => T, plain: object) => {
  const instance = plainToInstance(type, plain);
  return { errors: flattenValidationErrors(validateSync(instance)), instance };
};

describe('Rule.Id and Rule.IdList', () => {
  it.each([1, 2_147_483_647])('accepts %p', (id) => {
    expect(errorsOf(Body, { assistant_id: id, label_ids: [id] }).errors).toEqual({});
  });

  it.each([0, -1, 2_147_483_648, 99_999_999_999, 1e308])('refuses %p as an id no row can have', (id) => {
    expect(errorsOf(Body, { assistant_id: id, label_ids: [1, id] }).errors).toEqual({
      assistant_id: ['The selected assistant id is invalid.'],
      label_ids: ['The selected label ids is invalid.'],
    });
  });

  it.each([1.5, '1', [1], null, true])('refuses %p with the integer message only', (id) => {
    expect(errorsOf(Body, { assistant_id: id ?? 'x', label_ids: [id] }).errors).toEqual({
      assistant_id: ['The assistant id field must be an integer.'],
      label_ids: ['The label ids field must be an integer.'],
    });
  });

  it('bounds the list', () => {
    expect(errorsOf(Body, { label_ids: [1, 2, 3, 4] }).errors).toEqual({
      label_ids: ['The label ids field must not have more than 3 items.'],
    });
    expect(errorsOf(Body, { label_ids: 1 }).errors).toEqual({ label_ids: ['The label ids field must be an array.'] });
  });
});

describe('Rule.DecimalInteger', () => {
  it.each([
    ['5', 5],
    ['100', 100],
    ['007', 7],
  ])('reads %p as %p', (text, value) => {
    const { errors, instance } = errorsOf(Query, { per_page: text });
    expect(errors).toEqual({});
    expect(instance.per_page).toBe(value);
  });

  it.each(['0x5', '+5', ' 5', '5 ', '5.0', '5e0', '-5', '', 'abc', '١'])('refuses %p', (text) => {
    expect(errorsOf(Query, { per_page: text }).errors).toEqual({
      per_page: ['The per page field must be an integer.'],
    });
  });

  it.each(['0', '101', '99999999999', '9'.repeat(400)])('refuses %p as out of range', (text) => {
    expect(errorsOf(Query, { per_page: text }).errors.per_page).toHaveLength(1);
  });
});

describe('Rule.DistinctBy', () => {
  it('reports every repeat on its own path, keeping the first', () => {
    expect(
      errorsOf(Body, { schema: [{ name: 'a' }, { name: 'b' }, { name: 'a' }, { name: 'b' }, { name: 'c' }] }).errors,
    ).toEqual({
      'schema.2.name': ['The schema.2.name field has a duplicate value.'],
      'schema.3.name': ['The schema.3.name field has a duplicate value.'],
    });
  });

  it('accepts distinct names, and compares them exactly', () => {
    expect(errorsOf(Body, { schema: [{ name: 'a' }, { name: 'A' }] }).errors).toEqual({});
  });

  it('leaves items of the wrong type to the other rules', () => {
    expect(errorsOf(Body, { schema: [{ name: 1 }, { name: 1 }] }).errors).toEqual({
      'schema.0.name': ['The schema.0.name field must be a string.'],
      'schema.1.name': ['The schema.1.name field must be a string.'],
    });
  });
});

describe('listsOverCap', () => {
  class Extended extends Body {
    @Rule.Optional()
    @Rule.ArrayMax(2)
    tags?: string[];
  }

  it('names each top-level list over its cap, its base class’s included, with the rule’s own message', () => {
    expect(listsOverCap(Extended, { label_ids: [1, 2, 3, 4], tags: ['a', 'b', 'c'] })).toEqual({
      label_ids: ['The label ids field must not have more than 3 items.'],
      tags: ['The tags field must not have more than 2 items.'],
    });
    expect(listsOverCap(Extended, { label_ids: [1, 2, 3], tags: 'not a list' })).toBeUndefined();
  });
});

describe('Rule.ProhibitedUnless and Rule.AtLeastField', () => {
  class Event {
    @Rule.Required()
    type: string;

    @Rule.Optional()
    @Rule.ProhibitedUnless('type', 'transcript')
    role?: string;

    @Rule.Optional()
    @Rule.Integer()
    start_ms?: number;

    @Rule.Optional()
    @Rule.Integer()
    @Rule.AtLeastField('start_ms')
    end_ms?: number;
  }

  it('refuses a field the other one rules out, and an end before its start', () => {
    expect(errorsOf(Event, { type: 'note', role: 'user', start_ms: 500, end_ms: 499 }).errors).toEqual({
      role: ['The role field is prohibited unless type is in transcript.'],
      end_ms: ['The end ms field must be greater than or equal to 500.'],
    });
  });

  it('accepts them together, or either alone', () => {
    expect(errorsOf(Event, { type: 'transcript', role: 'user', start_ms: 500, end_ms: 500 }).errors).toEqual({});
    expect(errorsOf(Event, { type: 'note', end_ms: 3 }).errors).toEqual({});
    expect(errorsOf(Event, { type: 'note', start_ms: 3 }).errors).toEqual({});
  });
});

describe('Rule.DataKeys', () => {
  class Invocation {
    @Rule.Optional()
    @Rule.PlainObject()
    @Rule.DataKeys((path) => `The ${path} field is not taken.`)
    arguments?: Record<string, unknown>;

    @Rule.Optional()
    @Rule.PlainObject()
    variables?: Record<string, unknown>;
  }
  const normalised = (json: string) => normaliseInput(JSON.parse(json), dataKeyFields(Invocation));

  it('refuses an object’s internal names among a marked field’s keys, on their paths', () => {
    expect(normalised('{"arguments":{"__proto__":{"x":1},"constructor":1,"prototype":2,"ok":3}}')).toEqual({
      value: { arguments: { ok: 3 } },
      problems: [
        { path: 'arguments.__proto__', message: 'The arguments.__proto__ field is not taken.' },
        { path: 'arguments.constructor', message: 'The arguments.constructor field is not taken.' },
        { path: 'arguments.prototype', message: 'The arguments.prototype field is not taken.' },
      ],
    });
  });

  it('drops them silently everywhere else, as from any input', () => {
    expect(normalised('{"__proto__":1,"variables":{"__proto__":1},"arguments":{"a":{"__proto__":1}}}')).toEqual({
      value: { variables: {}, arguments: { a: {} } },
      problems: [],
    });
    expect(dataKeyFields(Body).size).toBe(0);
  });
});
