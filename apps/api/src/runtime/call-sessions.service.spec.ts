import type { CallIngestion } from '@app/calls';
import type { CallRow, CallSessionRequest } from '@app/contracts';
import type { RuntimeCallsRepository, SessionAssistantRow } from '@app/database';
import { Jobs, type JobQueue } from '@app/jobs';
import { hashToken } from '@app/platform';
import { parsePhoneNumber } from 'libphonenumber-js/max';
import type { AssistantRequests } from './assistant-requests.service';
import { CALL_TOKEN_GRACE_SECONDS, CallSessions } from './call-sessions.service';

const at = new Date('2026-01-02T03:04:05.000Z');

const callRow = (fields: Partial<CallRow>): CallRow => ({
  id: 40,
  user_id: 1,
  external_id: 'room-1',
  assistant_id: 3,
  assistant_name: 'Sales',
  campaign_id: null,
  campaign_name: null,
  lead_id: null,
  secondary_contact_id: null,
  phone_number_id: null,
  type: 'outbound',
  duration: 0,
  assistant_phone_number: '+14155550100',
  client_phone_number: '+14155550111',
  status: 'initiated',
  transcript: '',
  variables: {},
  evaluation: {},
  webhook_response: {},
  webhook_event_id: null,
  webhook_due: false,
  started_event_id: null,
  started_webhook_due: false,
  carrier_cost: '0.0000',
  total_cost: '0.0000',
  answered_by: null,
  recording_url: null,
  dial_state: 'dialed',
  dial_started_at: at,
  analysis: null,
  analysis_run: 0,
  analysis_success: null,
  analysis_event_id: null,
  analysis_webhook_due: false,
  analysis_changed_at: null,
  assistant_request: null,
  ended_reason: null,
  transfer: null,
  ended_at: null,
  created_at: at,
  updated_at: at,
  ...fields,
});

const assistantRow = (fields: Partial<SessionAssistantRow>): SessionAssistantRow => ({
  id: 3,
  user_id: 1,
  name: 'Sales',
  type: 'outbound',
  voice_id: null,
  model: null,
  transcriber: null,
  voice: null,
  timezone: 'UTC',
  initial_message: null,
  system_prompt: null,
  max_duration: 900,
  record: false,
  variables: {},
  post_call_schema: [],
  transfer_destinations: [],
  end_call: null,
  voicemail: null,
  webhook_on: false,
  language: { id: 1, name: 'English', iso_2: 'en' },
  secondary_languages: [],
  knowledgebase: null,
  tools: [],
  lead_variables: null,
  ...fields,
});

/**
 * A hand-written repository: calls by external id (a write through the fake ingestion adds one), the assistants a
 * session may run, and the numbers inbound assistants hold; it records what was asked of it.
 */
function fakes(options: {
  calls?: CallRow[];
  assistants?: SessionAssistantRow[];
  holders?: Record<string, number>;
  startedOwed?: boolean;
}) {
  const calls = new Map((options.calls ?? []).map((call) => [call.external_id, call]));
  const log: unknown[][] = [];
  const repository = {
    findByExternalId: async (externalId: string) => calls.get(externalId),
    findInboundHoldersByNationalNumbers: async (nationalNumbers: string[]) => {
      log.push(['holders', nationalNumbers]);
      return Object.entries(options.holders ?? {})
        .map(([number, id]) => ({
          id,
          number,
          national: number.startsWith('+') ? parsePhoneNumber(number).nationalNumber : number,
        }))
        .filter(({ national }) => nationalNumbers.includes(national))
        .map(({ id, number }) => ({ id, phone_number_id: id * 10, phone_number: number, country_code: null }));
    },
    findSessionAssistantById: async (id: number, leadId: number | null) => {
      log.push(['assistant', id, leadId]);
      return options.assistants?.find((assistant) => assistant.id === id);
    },
    openSession: async (callId: number, tokenHash: string, seconds: number, webhookOn: boolean) => {
      log.push(['session', callId, tokenHash, seconds, webhookOn]);
      return { expiresAt: new Date(at.getTime() + seconds * 1000), startedDue: options.startedOwed ?? false };
    },
  };
  const ingestion = {
    write: async (
      externalId: string,
      request: {
        assistant_id: number;
        type: string;
        assistant_phone_number: string;
        variables?: Record<string, unknown>;
      },
    ) => {
      log.push(['write', externalId, request.assistant_id, request.type, request.assistant_phone_number]);
      calls.set(
        externalId,
        callRow({
          id: 41,
          external_id: externalId,
          assistant_id: request.assistant_id,
          type: request.type,
          status: 'in-progress',
          variables: request.variables ?? {},
        }),
      );
      return { created: true, row: calls.get(externalId) };
    },
  };
  const jobs = {
    enqueue: async (job: { name: string }, payload: object) => {
      log.push(['enqueue', job.name, payload]);
    },
  };
  // No number here has a ring-time hook: nothing is asked (test/ring-time-hook.e2e-spec.ts asks real ones).
  const assistantRequests = {
    ask: async () => {
      throw new Error('no hook to ask');
    },
    settled: async (call: CallRow) => call,
  };
  const sessions = new CallSessions(
    repository as unknown as RuntimeCallsRepository,
    ingestion as unknown as CallIngestion,
    jobs as unknown as JobQueue,
    assistantRequests as unknown as AssistantRequests,
  );
  return { sessions, log };
}

const request = (fields: Partial<CallSessionRequest>): CallSessionRequest =>
  ({
    type: 'outbound',
    client_phone_number: '+14155550111',
    assistant_phone_number: '+14155550100',
    ...fields,
  }) as CallSessionRequest;

describe('CallSessions.open, with a fake repository', () => {
  it('runs a placed call’s assistant with the variables merged, the placeholders filled and a token of the call', async () => {
    const { sessions, log } = fakes({
      calls: [callRow({ lead_id: 5, variables: { name: 'Ada L.', order: 17 } })],
      assistants: [
        assistantRow({
          variables: { name: 'there', company: 'Acme', plan: 'basic' },
          lead_variables: { name: 'Ada', plan: 'pro' },
          initial_message: 'Hi {{name}}, {{company}} here about order {{order}} on {{plan}}; {{tone}}',
          system_prompt: 'Be {{tone}}.',
          webhook_on: true,
        }),
      ],
      startedOwed: true,
    });
    const { created, body } = await sessions.open('room-1', request({ variables: { tone: 'warm' } }));

    expect(created).toBe(false);
    expect(body.data.assistant.variables).toEqual({
      name: 'Ada L.',
      company: 'Acme',
      plan: 'pro',
      order: 17,
      tone: 'warm',
    });
    expect(body.data.assistant.initial_message).toBe('Hi Ada L., Acme here about order 17 on pro; warm');
    expect(body.data.assistant.system_prompt).toBe('Be warm.');
    expect(body.data.call).toMatchObject({ id: 40, external_id: 'room-1', status: 'initiated' });
    expect(body.data.expires_at).toBe(new Date(at.getTime() + (900 + CALL_TOKEN_GRACE_SECONDS) * 1000).toISOString());
    expect(log).toEqual([
      ['assistant', 3, 5],
      ['session', 40, hashToken(body.data.token), 900 + CALL_TOKEN_GRACE_SECONDS, true],
      ['enqueue', Jobs.deliverCallStartedWebhook.name, { callId: 40 }],
    ]);
  });

  it('answers a new inbound call with the assistant holding the dialled number, written as the carrier wrote it', async () => {
    const { sessions, log } = fakes({
      assistants: [assistantRow({ id: 8, type: 'inbound' })],
      holders: { '+14155550100': 8 },
    });
    const { created, body } = await sessions.open(
      'room-2',
      request({ type: 'inbound', assistant_phone_number: '+1 (415) 555-0100', variables: { name: 'Bo' } }),
    );

    expect(created).toBe(true);
    expect(body.data.assistant).toMatchObject({ id: 8, type: 'inbound', variables: { name: 'Bo' } });
    expect(log.slice(0, 3)).toEqual([
      ['holders', ['4155550100']],
      ['write', 'room-2', 8, 'inbound', '+14155550100'],
      ['assistant', 8, null],
    ]);
    // No webhook owed: nothing queued.
    expect(log.filter(([what]) => what === 'enqueue')).toEqual([]);
  });

  it('refuses an inbound call to a number no active assistant holds, writing nothing', async () => {
    const { sessions, log } = fakes({});
    await expect(sessions.open('room-3', request({ type: 'inbound' }))).rejects.toMatchObject({
      status: 404,
      body: { message: 'No assistant answers this number.' },
    });
    expect(log).toEqual([['holders', ['4155550100']]]);
  });

  it('finds a national form among the numbers it could name, and none when it names numbers of two countries', async () => {
    const national = '4155550100';
    const { sessions, log } = fakes({
      assistants: [assistantRow({ id: 8, type: 'inbound' })],
      holders: { '+14155550100': 8 },
    });
    const { body } = await sessions.open('room-4', request({ type: 'inbound', assistant_phone_number: national }));
    expect(body.data.assistant.id).toBe(8);
    expect(log[0]).toEqual(['holders', expect.arrayContaining([national, '5550100'])]);
    expect(log[1]).toEqual(['write', 'room-4', 8, 'inbound', '+14155550100']);

    // The same national number in Finland (+358 415 555 0100): which one was dialled cannot be told.
    const twice = fakes({
      assistants: [assistantRow({ id: 8, type: 'inbound' }), assistantRow({ id: 9, type: 'inbound' })],
      holders: { '+14155550100': 8, '+3584155550100': 9 },
    });
    await expect(
      twice.sessions.open('room-5', request({ type: 'inbound', assistant_phone_number: national })),
    ).rejects.toMatchObject({ status: 404, body: { message: 'No assistant answers this number.' } });
    // An extension stored as dialled is the one meant.
    const extension = fakes({
      assistants: [assistantRow({ id: 8, type: 'inbound' }), assistantRow({ id: 7, type: 'inbound' })],
      holders: { '+14155550100': 8, [national]: 7 },
    });
    const dialled = await extension.sessions.open(
      'room-7',
      request({ type: 'inbound', assistant_phone_number: national }),
    );
    expect(dialled.body.data.assistant.id).toBe(7);
    // Written with its country's code, it is the one.
    const opened = await twice.sessions.open(
      'room-6',
      request({ type: 'inbound', assistant_phone_number: `358${national}` }),
    );
    expect(opened.body.data.assistant.id).toBe(9);
  });

  it('opens no session of an ended call', async () => {
    const { sessions, log } = fakes({ calls: [callRow({ status: 'completed' })], assistants: [assistantRow({})] });
    await expect(sessions.open('room-1', request({}))).rejects.toMatchObject({ status: 409 });
    expect(log).toEqual([]);
  });
});
