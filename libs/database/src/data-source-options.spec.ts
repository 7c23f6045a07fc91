import { BoundedClient } from './bounded-client';
import { dataSourceOptions } from './data-source-options';

const url = 'postgres://postgres@127.0.0.1:5432/x';

describe('dataSourceOptions', () => {
  it('bounds the wait for a connection and each statement where asked (the API)', () => {
    expect(dataSourceOptions(url, 10, { connectMs: 5000, statementMs: 10_000 }).extra).toMatchObject({
      max: 10,
      connectionTimeoutMillis: 5000,
      query_timeout: 10_000,
      Client: BoundedClient,
    });
  });

  it('leaves statements unbounded without a statement bound (the worker), and everything for migrations', () => {
    const worker = dataSourceOptions(url, 10, { connectMs: 5000 }).extra;
    expect(worker).toMatchObject({ connectionTimeoutMillis: 5000 });
    expect(worker).not.toHaveProperty('query_timeout');
    expect(worker).not.toHaveProperty('Client');
    expect(dataSourceOptions(url, 1).extra).toEqual({ max: 1, application_name: 'voice-assistant-service' });
  });
});
