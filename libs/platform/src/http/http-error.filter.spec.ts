import { type ArgumentsHost, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { HttpErrorFilter } from './http-error.filter';

/** What the filter answers for an error, as the client would see it. */
function answer(exception: unknown): { status: number; body: unknown } {
  const sent: { status: number; body: unknown } = { status: 0, body: undefined };
  const response = {
    headersSent: false,
    setHeader: () => undefined,
    status(code: number) {
      sent.status = code;
      return this;
    },
    json(body: unknown) {
      sent.body = body;
    },
  };
  const host = { switchToHttp: () => ({ getResponse: () => response, getRequest: () => ({}) }) };
  new HttpErrorFilter().catch(exception, host as unknown as ArgumentsHost);
  return sent;
}

const postgresError = (code: string, detail?: string) =>
  new QueryFailedError('INSERT ...', [], Object.assign(new Error('refused'), { code, detail }));

describe('HttpErrorFilter and Postgres refusals', () => {
  // A 500 logs its stack and a refusal a warning; not worth printing here.
  beforeAll(() => {
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  it('answers a reference to a row deleted meanwhile as Laravel’s exists failure on that column', () => {
    expect(answer(postgresError('23503', 'Key (assistant_id)=(7) is not present in table "assistants".'))).toEqual({
      status: 422,
      body: {
        message: 'The selected assistant id is invalid.',
        errors: { assistant_id: ['The selected assistant id is invalid.'] },
      },
    });
  });

  it.each([
    ['23503', 'Key (id)=(7) is still referenced from table "assistants".'],
    ['40P01', undefined],
    ['40001', undefined],
  ])('answers %s as a conflict the caller may retry', (code, detail) => {
    expect(answer(postgresError(code, detail))).toEqual({
      status: 409,
      body: { message: 'The request conflicted with a concurrent change. Please try again.' },
    });
  });

  it.each(['22003', '22P02', '22001'])('answers the data exception %s as 422', (code) => {
    expect(answer(postgresError(code))).toEqual({ status: 422, body: { message: 'The given data was invalid.' } });
  });

  it.each([
    ['a Redis command', new Error('Command timed out')],
    ['a Postgres statement', new QueryFailedError('SELECT ...', [], new Error('Query read timeout'))],
    ['a wait for a Postgres connection', new Error('timeout exceeded when trying to connect')],
    ['an enqueue', Object.assign(new Error('Enqueueing process-document timed out'), { code: 'ETIMEDOUT' })],
  ])('answers %s that got no answer within its bound as 503, as a refused connection', (_, error) => {
    expect(answer(error)).toEqual({
      status: 503,
      body: { message: 'Service temporarily unavailable. Please try again.' },
    });
  });

  it('still answers other failures as 500, without details', () => {
    expect(answer(postgresError('42P01'))).toEqual({ status: 500, body: { message: 'Server Error.' } });
    expect(answer(new Error('boom'))).toEqual({ status: 500, body: { message: 'Server Error.' } });
  });
});
