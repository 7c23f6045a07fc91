import type { Request } from 'express';
import type { AppConfig } from '@app/config';
import type { CallEventRow } from '@app/contracts';
import type { CallsRepository, DiallingRepository, Transactions } from '@app/database';
import type { JobQueue } from '@app/jobs';
import type { IdempotentCreates } from '../idempotency/idempotent-creates';
import { CallsService } from './calls.service';

/** The account's calls as a map of call id to its events: nothing but what the events list asks of the repository. */
function fakeCalls(owner: number, calls: Map<number, CallEventRow[]>) {
  const asked: { id: number; limit: number; offset: number }[] = [];
  const repository = {
    countEvents: async (ownerId: number, id: number) => (ownerId === owner ? calls.get(id)?.length : undefined),
    listEvents: async (_ownerId: number, id: number, limit: number, offset: number) => {
      asked.push({ id, limit, offset });
      return calls.get(id)!.slice(offset, offset + limit);
    },
  };
  return { repository: repository as unknown as CallsRepository, asked };
}

const event = (seq: number): CallEventRow => ({
  type: 'transcript',
  seq,
  at: new Date(Date.UTC(2026, 0, 2, 3, 4, seq)),
  data: { role: 'assistant', text: `turn ${seq}` },
});

const request = { originalUrl: '/api/user/calls/7/events?per_page=2&page=2' } as Request;

describe('CallsService.events, with a fake repository', () => {
  const build = (repository: CallsRepository) =>
    new CallsService(
      repository,
      undefined as unknown as DiallingRepository,
      undefined as unknown as Transactions,
      { appUrl: 'https://api.example' } as AppConfig,
      undefined as unknown as JobQueue,
      undefined as unknown as IdempotentCreates,
    );

  it('asks for the page’s slice and counts the total from the call', async () => {
    const { repository, asked } = fakeCalls(1, new Map([[7, [1, 2, 3, 4, 5].map(event)]]));
    const page = await build(repository).events({ id: 1 } as never, 7, { page: 2, per_page: 2 }, request);
    expect(asked).toEqual([{ id: 7, limit: 2, offset: 2 }]);
    expect(page.data).toEqual([
      { type: 'transcript', seq: 3, at: '2026-01-02T03:04:03.000Z', role: 'assistant', text: 'turn 3' },
      { type: 'transcript', seq: 4, at: '2026-01-02T03:04:04.000Z', role: 'assistant', text: 'turn 4' },
    ]);
    expect(page).toMatchObject({ total: 5, last_page: 3, from: 3, to: 4, per_page: 2, current_page: 2 });
    expect(page.next_page_url).toBe('https://api.example/api/user/calls/7/events?per_page=2&page=3');
  });

  it('answers another account’s call as not found, without reading its events', async () => {
    const { repository, asked } = fakeCalls(1, new Map([[7, [event(1)]]]));
    await expect(
      build(repository).events({ id: 2 } as never, 7, { page: 1, per_page: 15 }, request),
    ).rejects.toMatchObject({ status: 404, body: { message: 'Call not found.' } });
    expect(asked).toEqual([]);
  });

  it('gives a call without events an empty first page', async () => {
    const { repository } = fakeCalls(1, new Map([[7, []]]));
    const page = await build(repository).events({ id: 1 } as never, 7, { page: 1, per_page: 15 }, request);
    expect(page).toMatchObject({ data: [], total: 0, last_page: 1, from: null, to: null });
  });
});
