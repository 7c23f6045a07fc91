import { Logger } from '@nestjs/common';
import type { AppConfig } from '@app/config';
import { Clock } from '@app/calls';
import { WEEKDAYS } from '@app/contracts';
import type {
  CallerNumberRow,
  ClaimedCampaignRow,
  ContactRow,
  DiallingRepository,
  DueLeadRow,
  PlacedCall,
  Transactions,
} from '@app/database';
import type { JobQueue } from '@app/jobs';
import type { CallPlacer } from './call-placer.service';
import { DialScheduler } from './dial-scheduler.service';

const campaign: ClaimedCampaignRow = {
  id: 7,
  user_id: 1,
  name: 'Spring',
  assistant_id: 3,
  assistant_name: 'Sales',
  assistant_number_id: 30,
  timezone: 'UTC',
  allowed_hours_start_time: null,
  allowed_hours_end_time: null,
  allowed_days: [...WEEKDAYS],
  max_calls_in_parallel: 3,
  max_retries: 2,
  dials_placed: 5,
  account_slots: 10,
};

/** One campaign's dialling state in memory: what a claim reads, and every write it makes, in order. */
function fakes(state: {
  campaign?: ClaimedCampaignRow;
  inFlight?: number;
  leads?: DueLeadRow[];
  numbers?: CallerNumberRow[];
  contacts?: ContactRow[];
  openLeads?: boolean;
}) {
  const writes: unknown[][] = [];
  let nextCallId = 100;
  const repository = {
    within: () => repository,
    lockRunningCampaignById: async () => state.campaign,
    countCampaignCalls: async () => state.inFlight ?? 0,
    lockDueLeads: async (_id: number, _now: Date, limit: number) => (state.leads ?? []).slice(0, limit),
    findCampaignNumbers: async () => state.numbers ?? [],
    findNumbersById: async (id: number) => [{ id, phone_number: '+14155550130' }],
    findNextContacts: async (leadIds: number[]) =>
      (state.contacts ?? []).filter((contact) => leadIds.includes(contact.lead_id)),
    markLeadsSpent: async (ids: number[]) => void writes.push(['spent', ids]),
    insertPlacedCalls: async (calls: PlacedCall[]) => {
      writes.push(['placed', calls.map((call) => [call.leadId, call.secondaryContactId, call.to, call.from])]);
      return calls.map(() => nextCallId++);
    },
    markLeadsScheduled: async (ids: number[]) => void writes.push(['scheduled', ids]),
    markContactsScheduled: async (ids: number[]) => void writes.push(['contacts scheduled', ids]),
    addDialsPlaced: async (_id: number, placed: number) => void writes.push(['dials placed', placed]),
    hasLeadsIn: async () => state.openLeads ?? false,
    completeCampaign: async (id: number) => void writes.push(['completed', id]),
    markCampaignsWaiting: async (userId: number) => void writes.push(['account waiting', userId]),
  };
  const placed: number[] = [];
  const placer = { place: async ({ callId }: { callId: number }) => void placed.push(callId) };
  const scheduler = new DialScheduler(
    repository as unknown as DiallingRepository,
    { run: <T>(work: (transaction: unknown) => Promise<T>) => work({}) } as unknown as Transactions,
    new Clock(),
    undefined as unknown as JobQueue,
    { accountMaxConcurrentCalls: 10 } as AppConfig,
    placer as unknown as CallPlacer,
  );
  return { scheduler, writes, placed };
}

const lead = (id: number, attempts = 0): DueLeadRow => ({
  id,
  phone_number: `+1415555${String(id).padStart(4, '0')}`,
  variables: { name: `lead ${id}` },
  attempts,
});

describe('DialScheduler.run, with a fake repository', () => {
  // The scheduler logs each campaign it completes; a unit run has no one to read it (Jest isolates modules per file).
  beforeAll(() => Logger.overrideLogger(false));

  it('places the leads due in the free slots, rotating the caller numbers from where the campaign left off', async () => {
    const { scheduler, writes, placed } = fakes({
      campaign,
      inFlight: 1,
      leads: [lead(1), lead(2), lead(3)],
      numbers: [
        { id: 10, phone_number: '+14155550010' },
        { id: 11, phone_number: '+14155550011' },
      ],
    });
    await expect(scheduler.run(7)).resolves.toEqual({ claimed: [100, 101] });
    expect(writes).toEqual([
      [
        'placed',
        [
          [1, null, '+14155550001', '+14155550011'],
          [2, null, '+14155550002', '+14155550010'],
        ],
      ],
      ['scheduled', [1, 2]],
      ['dials placed', 2],
    ]);
    expect(placed).toEqual([100, 101]);
  });

  it('calls a lead whose own number spent its budget at its next secondary contact, or else gives it up', async () => {
    const { scheduler, writes } = fakes({
      campaign,
      leads: [lead(1, 2), lead(2, 2), lead(3, 1)],
      contacts: [{ id: 50, lead_id: 1, phone_number: '+14155559999', variables: { name: 'assistant of 1' } }],
    });
    await scheduler.run(7);
    expect(writes).toEqual([
      ['spent', [2]],
      [
        'placed',
        [
          [1, 50, '+14155559999', '+14155550130'],
          [3, null, '+14155550003', '+14155550130'],
        ],
      ],
      ['scheduled', [1, 3]],
      ['contacts scheduled', [50]],
      ['dials placed', 2],
    ]);
  });

  it('waits for a free slot, and completes a campaign with nothing due, nothing in flight and no open lead', async () => {
    expect(await fakes({ campaign, inFlight: 3, leads: [lead(1)] }).scheduler.run(7)).toEqual({ idle: 'no-slot' });
    expect(await fakes({ campaign, inFlight: 1 }).scheduler.run(7)).toEqual({ idle: 'nothing-due' });
    expect(await fakes({ campaign, openLeads: true }).scheduler.run(7)).toEqual({ idle: 'nothing-due' });
    const done = fakes({ campaign });
    expect(await done.scheduler.run(7)).toEqual({ idle: 'completed' });
    expect(done.writes).toEqual([['completed', 7]]);
    expect(await fakes({ campaign: { ...campaign, assistant_id: null } }).scheduler.run(7)).toEqual({
      idle: 'not-running',
    });
  });

  it('places no more calls than its account may still start, and holds every lead while the account has none', async () => {
    const some = fakes({ campaign: { ...campaign, account_slots: 1 }, leads: [lead(1), lead(2), lead(3)] });
    await expect(some.scheduler.run(7)).resolves.toEqual({ claimed: [100] });
    expect(some.writes).toContainEqual(['scheduled', [1]]);
    const none = fakes({ campaign: { ...campaign, account_slots: 0 }, leads: [lead(1)] });
    await expect(none.scheduler.run(7)).resolves.toEqual({ idle: 'account-at-limit' });
    expect(none.writes).toEqual([['account waiting', 1]]);
  });
});
