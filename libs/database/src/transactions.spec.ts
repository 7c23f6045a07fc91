import { type DataSource, QueryFailedError } from 'typeorm';
import { Transactions } from './transactions';

const refused = (code: string) => new QueryFailedError('UPDATE ...', [], Object.assign(new Error(code), { code }));

/** A data source whose transactions fail with the given errors, in turn, then run the work. */
function failingThen(...errors: Error[]) {
  const attempts = { count: 0 };
  const dataSource = {
    transaction: async (work: (manager: unknown) => Promise<unknown>) => {
      const error = errors[attempts.count++];
      if (error) throw error;
      return work({});
    },
  } as unknown as DataSource;
  return { dataSource, attempts };
}

describe('Transactions.runRetrying', () => {
  it.each(['40P01', '40001'])('runs a transaction Postgres failed with %s again', async (code) => {
    const { dataSource, attempts } = failingThen(refused(code), refused(code));
    await expect(new Transactions(dataSource).runRetrying(async () => 'done')).resolves.toBe('done');
    expect(attempts.count).toBe(3);
  });

  it('gives up after three attempts with the last error', async () => {
    const { dataSource, attempts } = failingThen(refused('40P01'), refused('40P01'), refused('40001'));
    await expect(new Transactions(dataSource).runRetrying(async () => 'done')).rejects.toThrow('40001');
    expect(attempts.count).toBe(3);
  });

  it('does not run again after any other error', async () => {
    const { dataSource, attempts } = failingThen(refused('23505'));
    await expect(new Transactions(dataSource).runRetrying(async () => 'done')).rejects.toThrow('23505');
    expect(attempts.count).toBe(1);
  });
});
