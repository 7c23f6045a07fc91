import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { validationSummary } from '../errors/domain-error';
import { Rule } from './index';
import { flattenValidationErrors, humaniseAttribute } from './validation-messages';

class Header {
  @Rule.Required()
  @Rule.String()
  @Rule.MaxChars(3)
  header_name: string;
}

class Sample {
  @Rule.Required()
  @Rule.String()
  @Rule.MaxChars(5)
  display_name: string;

  @Rule.Optional()
  @Rule.OneOf(['json', 'form'])
  body_format?: string;

  @Rule.Optional()
  @Rule.EachNested(() => Header)
  headers?: Header[];
}

const errorsOf = (plain: object) => flattenValidationErrors(validateSync(plainToInstance(Sample, plain)));

describe('Laravel-style validation messages', () => {
  it('humanises snake_case names but keeps dot paths', () => {
    expect(humaniseAttribute('per_page')).toBe('per page');
    expect(humaniseAttribute('schema.0.name')).toBe('schema.0.name');
  });

  it('reports only "required" for a missing field', () => {
    expect(errorsOf({})).toEqual({ display_name: ['The display name field is required.'] });
  });

  it('reports only the type error for a value of the wrong type', () => {
    expect(errorsOf({ display_name: 12345678 })).toEqual({
      display_name: ['The display name field must be a string.'],
    });
  });

  it('uses Laravel texts for enums and nested paths', () => {
    expect(
      errorsOf({ display_name: 'ok', body_format: 'xml', headers: [{ header_name: 'ok' }, { header_name: 'long' }] }),
    ).toEqual({
      body_format: ['The selected body format is invalid.'],
      'headers.1.header_name': ['The headers.1.header name field must not be greater than 3 characters.'],
    });
  });

  it('answers every item of an object list that is not an object on its own path, lists included', () => {
    expect(
      errorsOf({ display_name: 'ok', headers: [[], { header_name: 'ok' }, 'x', null, [{ header_name: 'a' }]] }),
    ).toEqual({
      'headers.0': ['The headers.0 field must be an object.'],
      'headers.2': ['The headers.2 field must be an object.'],
      'headers.3': ['The headers.3 field must be an object.'],
      'headers.4': ['The headers.4 field must be an object.'],
    });
  });

  it('summarises like Laravel', () => {
    expect(validationSummary({ a: ['A.'] })).toBe('A.');
    expect(validationSummary({ a: ['A.'], b: ['B.'] })).toBe('A. (and 1 more error)');
    expect(validationSummary({ a: ['A.', 'A2.'], b: ['B.'] })).toBe('A. (and 2 more errors)');
  });
});
