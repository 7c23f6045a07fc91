import type { AppConfig } from '@app/config';
import type { CampaignStatusRequest } from '@app/contracts';
import type { CampaignsRepository, Transactions } from '@app/database';
import { Jobs, type JobQueue } from '@app/jobs';
import type { IdempotentCreates } from '../idempotency/idempotent-creates';
import { CampaignsService } from './campaigns.service';

interface FakeCampaign {
  id: number;
  status: string;
  assistant_id: number | null;
  openLeads: number;
  /** Its caller numbers, and how many of them can place calls. */
  callerNumbers: { numbers: number; callable: number };
}

/** One account's campaigns in memory, as much of the repository as starting and stopping them uses. */
function fakes(owner: number, campaigns: FakeCampaign[]) {
  const log: unknown[][] = [];
  const repository = {
    within: () => repository,
    lockStatus: async (ownerId: number, id: number) => {
      const campaign = ownerId === owner ? campaigns.find((candidate) => candidate.id === id) : undefined;
      return campaign && { id: campaign.id, status: campaign.status, assistant_id: campaign.assistant_id };
    },
    countLeads: async (id: number, statuses: readonly string[]) => {
      log.push(['count', id, [...statuses]]);
      return campaigns.find((campaign) => campaign.id === id)!.openLeads;
    },
    countCallerNumbers: async (id: number) => campaigns.find((campaign) => campaign.id === id)!.callerNumbers,
    start: async (id: number) => void log.push(['start', id]),
    stop: async (id: number) => void log.push(['stop', id]),
  };
  const jobs = {
    enqueue: async (job: { name: string }, payload: object) => void log.push(['enqueue', job.name, payload]),
  };
  const service = new CampaignsService(
    repository as unknown as CampaignsRepository,
    { run: <T>(work: (transaction: unknown) => Promise<T>) => work({}) } as unknown as Transactions,
    {} as AppConfig,
    jobs as unknown as JobQueue,
    undefined as unknown as IdempotentCreates,
  );
  return { service, log };
}

const ready: FakeCampaign = {
  id: 5,
  status: 'created',
  assistant_id: 2,
  openLeads: 3,
  callerNumbers: { numbers: 2, callable: 1 },
};
const start = { campaign_id: 5, action: 'start' } as CampaignStatusRequest;

describe('CampaignsService.updateStatus, with a fake repository', () => {
  it('starts a campaign with leads to call and a number to call from, then queues its first dials', async () => {
    const { service, log } = fakes(1, [ready]);
    await expect(service.updateStatus({ id: 1 } as never, start)).resolves.toEqual({
      message: 'Campaign started successfully.',
      success: true,
      data: { campaign_id: 5, status: 'in-progress' },
    });
    expect(log).toEqual([
      ['count', 5, ['created', 'scheduled', 'processing', 'rescheduled']],
      ['start', 5],
      ['enqueue', Jobs.dialCampaign.name, { campaignId: 5 }],
    ]);
  });

  it.each([
    [{ status: 'in-progress' }, 'The campaign is already running.'],
    [{ assistant_id: null }, 'The campaign has no assistant: its assistant was deleted.'],
    [{ openLeads: 0 }, 'The campaign has no leads to call.'],
    [{ callerNumbers: { numbers: 0, callable: 0 } }, 'The campaign has no phone number to call from.'],
    [
      { callerNumbers: { numbers: 2, callable: 0 } },
      "The campaign's phone numbers cannot place calls: none has an outbound SIP trunk.",
    ],
  ])('refuses to start a campaign with %j', async (change, message) => {
    const { service, log } = fakes(1, [{ ...ready, ...change }]);
    await expect(service.updateStatus({ id: 1 } as never, start)).rejects.toMatchObject({
      status: 422,
      body: { errors: { campaign_id: [message] } },
    });
    expect(log.filter(([what]) => what === 'start' || what === 'enqueue')).toEqual([]);
  });

  it('stops only a running campaign, and answers another account’s as not found', async () => {
    const { service, log } = fakes(1, [{ ...ready, status: 'in-progress' }]);
    const stop = { campaign_id: 5, action: 'stop' } as CampaignStatusRequest;
    await expect(service.updateStatus({ id: 1 } as never, stop)).resolves.toMatchObject({
      data: { campaign_id: 5, status: 'stopped' },
    });
    await expect(service.updateStatus({ id: 2 } as never, stop)).rejects.toMatchObject({ status: 404 });
    expect(log).toEqual([['stop', 5]]);
  });
});
