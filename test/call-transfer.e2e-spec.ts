import type { AddressInfo } from 'node:net';
import { CALL_CONTROL, type LocalCallControl } from '@app/telephony';
import { createAccount, languageId, sipTrunkRequest, type TestAccount } from './support/factories';
import { startRuntimeSite, webhookDeliveries } from './support/runtime-fixtures';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';
import type { LocalSite } from '../libs/outbound-http/test/local-site';

const RUNTIME_TOKEN = 'runtime-token-for-call-transfer-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const BILLING = {
  name: 'billing_desk',
  description: 'Questions about invoices and payments',
  number: '+14155550142',
  mode: 'cold',
  message: 'I am putting you through to billing.',
};
const MANAGER = {
  name: 'duty_manager',
  description: 'A caller who asks for a manager',
  sip_uri: 'sip:manager@pbx.example.com',
  mode: 'cold',
};
const SALES_LEAD = {
  name: 'sales_lead',
  description: 'A caller ready to buy',
  number: '+14155550177',
  mode: 'warm',
};

/**
 * Call control from outside: an assistant's transfer destinations, its end_call and voicemail settings, the session's
 * built-in actions, transfers through the service (cold and warm, with the local telephony adapter recording what it
 * was asked), the assistant ending the call, and DTMF events.
 */
describe('Call control: transfers, end_call, DTMF, voicemail', () => {
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let english: number;
  let control: LocalCallControl;
  let site: LocalSite;
  const http = () => stack.http;

  beforeAll(async () => {
    site = await startRuntimeSite();
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, OUTBOUND_ALLOW_LOOPBACK: 'true' } });
    control = stack.api.get<symbol, LocalCallControl>(CALL_CONTROL, { strict: false });
    owner = await createAccount(stack, 'Owner');
    other = await createAccount(stack, 'Other');
    english = await languageId(stack, owner);
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  const createAssistant = (fields: object, account = owner) =>
    http()
      .post('/api/user/assistant')
      .set(account.auth)
      .send({ name: 'Front desk', type: 'inbound', language_id: english, ...fields });

  let sessionCount = 0;
  /** A session of a new call of the assistant (a call no number routes, as a web call's). */
  const openSession = async (assistantId: number, variables: object = {}) => {
    const externalId = `call-transfer-${++sessionCount}-${Date.now()}`;
    const session = await http()
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({
        type: 'outbound',
        client_phone_number: '+14155550123',
        assistant_phone_number: '+14155550100',
        assistant_id: assistantId,
        variables,
      })
      .expect(201);
    return { externalId, token: session.body.data.token as string, data: session.body.data };
  };

  describe('assistant settings', () => {
    it('stores transfer destinations, end_call and voicemail, and answers them on every read', async () => {
      const created = await createAssistant({
        transfer_destinations: [BILLING, MANAGER],
        end_call: { enabled: true, message: 'Goodbye!' },
        voicemail: { action: 'leave_message', message: 'Please call {{company}} back.' },
      }).expect(201);
      const expected = {
        transfer_destinations: [
          { ...BILLING, sip_uri: null },
          { ...MANAGER, number: null, message: null },
        ],
        end_call: { enabled: true, message: 'Goodbye!' },
        voicemail: { action: 'leave_message', message: 'Please call {{company}} back.' },
      };
      expect(created.body.data).toMatchObject(expected);
      const read = await http().get(`/api/user/assistant/${created.body.data.id}`).set(owner.auth).expect(200);
      expect(read.body.data).toMatchObject(expected);

      // A list replaces, `[]` clears, null restores a default, and what is not sent stays.
      const updated = await http()
        .put(`/api/user/assistant/${created.body.data.id}`)
        .set(owner.auth)
        .send({ transfer_destinations: [MANAGER], end_call: null })
        .expect(200);
      expect(updated.body.data).toMatchObject({
        transfer_destinations: [{ ...MANAGER, number: null, message: null }],
        end_call: { enabled: true, message: null },
        voicemail: expected.voicemail,
      });
      const cleared = await http()
        .put(`/api/user/assistant/${created.body.data.id}`)
        .set(owner.auth)
        .send({ transfer_destinations: [], voicemail: null })
        .expect(200);
      expect(cleared.body.data).toMatchObject({
        transfer_destinations: [],
        voicemail: { action: 'hangup', message: null },
      });
    });

    it('defaults to no destinations, end_call enabled and hanging up on a machine', async () => {
      const created = await createAssistant({}).expect(201);
      expect(created.body.data).toMatchObject({
        transfer_destinations: [],
        end_call: { enabled: true, message: null },
        voicemail: { action: 'hangup', message: null },
      });
    });

    it.each([
      ['transfer_destinations', 'not a list', 'transfer_destinations'],
      ['transfer_destinations', [{ ...BILLING, name: '1-billing' }], 'transfer_destinations.0.name'],
      ['transfer_destinations', [{ ...BILLING, name: 'x'.repeat(65) }], 'transfer_destinations.0.name'],
      ['transfer_destinations', [{ ...BILLING, description: undefined }], 'transfer_destinations.0.description'],
      ['transfer_destinations', [{ ...BILLING, number: '4155550142' }], 'transfer_destinations.0.number'],
      ['transfer_destinations', [{ ...BILLING, number: '+1415' }], 'transfer_destinations.0.number'],
      ['transfer_destinations', [{ ...BILLING, number: 14155550142 }], 'transfer_destinations.0.number'],
      ['transfer_destinations', [{ ...BILLING, number: undefined }], 'transfer_destinations.0.number'],
      ['transfer_destinations', [{ ...BILLING, sip_uri: 'sip:a@b.c' }], 'transfer_destinations.0.sip_uri'],
      ['transfer_destinations', [{ ...MANAGER, sip_uri: 'http://pbx.example.com' }], 'transfer_destinations.0.sip_uri'],
      ['transfer_destinations', [{ ...MANAGER, sip_uri: 'sip:a b@c' }], 'transfer_destinations.0.sip_uri'],
      ['transfer_destinations', [{ ...BILLING, mode: 'blind' }], 'transfer_destinations.0.mode'],
      ['transfer_destinations', [{ ...MANAGER, mode: 'warm' }], 'transfer_destinations.0.sip_uri'],
      ['transfer_destinations', [{ ...BILLING, message: 'x'.repeat(1001) }], 'transfer_destinations.0.message'],
      ['transfer_destinations', [BILLING, { ...MANAGER, name: BILLING.name }], 'transfer_destinations.1.name'],
      ['transfer_destinations', [BILLING, 'billing'], 'transfer_destinations.1'],
      [
        'transfer_destinations',
        Array.from({ length: 11 }, (_, index) => ({ ...BILLING, name: `desk_${index}` })),
        'transfer_destinations',
      ],
      ['end_call', { enabled: 'yes' }, 'end_call.enabled'],
      ['end_call', { message: 42 }, 'end_call.message'],
      ['end_call', 'off', 'end_call'],
      ['voicemail', { action: 'beep' }, 'voicemail.action'],
      ['voicemail', {}, 'voicemail.action'],
      ['voicemail', { action: 'leave_message' }, 'voicemail.message'],
      ['voicemail', { action: 'hangup', message: 'Hello' }, 'voicemail.message'],
      ['voicemail', { action: 'leave_message', message: 'x'.repeat(1001) }, 'voicemail.message'],
    ])('refuses a bad %s (case %#) with a 422 naming the field', async (field, value, path) => {
      const response = await createAssistant({ [field]: value }).expect(422);
      expect(Object.keys(response.body.errors)).toContain(path);
    });
  });

  describe('the session', () => {
    it('offers the built-in actions beside the tools, destinations by name only, and the voicemail setting', async () => {
      const assistant = (
        await createAssistant({
          transfer_destinations: [BILLING, MANAGER],
          end_call: { message: 'Thanks, {{name}}. Goodbye!' },
          voicemail: { action: 'leave_message', message: 'Hi {{name}}, please call us back.' },
        }).expect(201)
      ).body.data;
      const { data } = await openSession(assistant.id, { name: 'Ada' });
      expect(data.actions.map((action: { name: string }) => action.name)).toEqual([
        'transfer_call',
        'end_call',
        'send_dtmf',
      ]);
      expect(data.actions[0]).toMatchObject({
        type: 'transfer_call',
        destinations: [
          { name: 'billing_desk', description: BILLING.description, mode: 'cold', message: BILLING.message },
          { name: 'duty_manager', description: MANAGER.description, mode: 'cold', message: null },
        ],
        parameters: { properties: { destination: { enum: ['billing_desk', 'duty_manager'] } } },
      });
      // The numbers stay with the service.
      expect(JSON.stringify(data.actions)).not.toContain(BILLING.number);
      expect(JSON.stringify(data.actions)).not.toContain(MANAGER.sip_uri);
      expect(data.end_call).toEqual({ enabled: true, message: 'Thanks, {{name}}. Goodbye!' });
      expect(data.voicemail).toEqual({ action: 'leave_message', message: 'Hi Ada, please call us back.' });
    });

    it('offers no transfer without destinations and no end_call when the assistant may not end calls', async () => {
      const assistant = (await createAssistant({ end_call: { enabled: false } }).expect(201)).body.data;
      const { data } = await openSession(assistant.id);
      expect(data.actions.map((action: { type: string }) => action.type)).toEqual(['send_dtmf']);
      expect(data.end_call).toEqual({ enabled: false, message: null });
      expect(data.voicemail).toEqual({ action: 'hangup', message: null });
    });
  });

  /** What the API's telephony adapter (local) was asked for the call's room. */
  const operations = (room: string) =>
    stack.dataSource.query(
      `SELECT operation, request, outcome FROM local_call_control_requests WHERE room = $1 ORDER BY id`,
      [room],
    );
  const ownerEvents = async (callId: number) =>
    (await http().get(`/api/user/calls/${callId}/events`).set(owner.auth).expect(200)).body.data;
  const transfer = (externalId: string, token: string, body: object) =>
    http()
      .post(`/api/internal/calls/${encodeURIComponent(externalId)}/transfer`)
      .set(bearer(token))
      .send(body);

  describe('transfers', () => {
    let assistantId: number;
    beforeAll(async () => {
      assistantId = (
        await createAssistant({
          transfer_destinations: [BILLING, MANAGER, SALES_LEAD],
          phone_number_id: (
            await http().post('/api/user/phone-numbers/sip-trunks').set(owner.auth).send(sipTrunkRequest()).expect(201)
          ).body.data.id,
          webhook_url: `${site.origin}/hook`,
          is_webhook_active: true,
        }).expect(201)
      ).body.data.id;
    });

    it('hands the caller to a destination of the assistant (cold), records it, and call.ended carries it', async () => {
      const { externalId, token, data } = await openSession(assistantId);
      const answer = await transfer(externalId, token, { destination: 'billing_desk' }).expect(202);
      expect(answer.body).toEqual({
        message: 'The call was transferred.',
        data: {
          transfer: {
            id: expect.any(Number),
            destination: 'billing_desk',
            mode: 'cold',
            status: 'transferred',
            reason: null,
            message: null,
          },
        },
      });
      expect(await operations(externalId)).toEqual([
        {
          operation: 'transfer',
          request: { room: externalId, to: 'tel:+14155550142', playDialtone: true },
          outcome: { status: 'transferred' },
        },
      ]);
      const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
      expect(call).toMatchObject({
        ended_reason: 'transferred',
        transfer: { destination: 'billing_desk', mode: 'cold', status: 'transferred', reason: null },
      });
      expect(await ownerEvents(data.call.id)).toEqual([
        expect.objectContaining({
          type: 'transfer',
          destination: 'billing_desk',
          mode: 'cold',
          status: 'transferred',
          reason: null,
        }),
      ]);

      // The runtime's final write ends the call; whatever reason it gives, the call stays transferred.
      await http()
        .put(`/api/internal/calls/${externalId}`)
        .set(bearer(token))
        .send({ status: 'ended', duration: 31, ended_reason: 'customer_hangup' })
        .expect(200);
      const [delivery] = await waitFor(async () => {
        const found = webhookDeliveries(site, 'call.ended', data.call.id);
        return found.length > 0 ? found : undefined;
      });
      expect(delivery.body.call).toMatchObject({
        status: 'ended',
        ended_reason: 'transferred',
        transfer: { destination: 'billing_desk', mode: 'cold', status: 'transferred' },
      });
      // Over: the token transfers nothing more.
      await transfer(externalId, token, { destination: 'billing_desk' }).expect(401);
    });

    it('takes one transfer of a call at a time, and shows it to a watcher as soon as it is recorded', async () => {
      const { externalId, token, data } = await openSession(assistantId);
      const server = stack.api.getHttpServer();
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const abort = new AbortController();
      const watcher = await fetch(
        `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/user/calls/${data.call.id}/events/stream`,
        { headers: { ...owner.auth, Accept: 'text/event-stream' }, signal: abort.signal },
      );
      expect(watcher.status).toBe(200);
      let seen = '';
      const reading = (async () => {
        for await (const chunk of watcher.body as unknown as AsyncIterable<Uint8Array>) {
          seen += Buffer.from(chunk).toString('utf8');
        }
      })().catch(() => undefined);
      const release = control.holdNext('transfer');
      try {
        const first = transfer(externalId, token, { destination: 'billing_desk' }).then((response) => response);
        await waitFor(async () => {
          const [row] = await stack.dataSource.query(`SELECT transfer_started_at FROM calls WHERE id = $1`, [
            data.call.id,
          ]);
          return row.transfer_started_at ? true : undefined;
        });
        // The model asked twice, or to two people: the second never dials anyone.
        const second = await transfer(externalId, token, { destination: 'duty_manager' }).expect(409);
        expect(second.body).toEqual({ message: 'A transfer of this call is already under way.' });
        release();
        expect((await first).status).toBe(202);
        const recorded = Date.now();
        await waitFor(async () => (seen.includes('event: transfer') ? true : undefined), 2000, 20);
        // Well within the stream's 15 s heartbeat: the transfer signalled its watchers.
        expect(Date.now() - recorded).toBeLessThan(2000);
        const again = await transfer(externalId, token, { destination: 'duty_manager' }).expect(409);
        expect(again.body).toEqual({ message: 'The call was already transferred.' });
        expect((await operations(externalId)).map((row: { operation: string }) => row.operation)).toEqual(['transfer']);
      } finally {
        release();
        abort.abort();
        await reading;
      }
    });

    it('transfers to a SIP URI as LiveKit takes it', async () => {
      const { externalId, token } = await openSession(assistantId);
      await transfer(externalId, token, { destination: 'duty_manager', participant_identity: 'sip_caller' }).expect(
        202,
      );
      expect((await operations(externalId))[0].request).toEqual({
        room: externalId,
        participantIdentity: 'sip_caller',
        to: 'sip:manager@pbx.example.com',
        playDialtone: true,
      });
    });

    it.each([
      ['busy', 'failed', 'The line is busy.'],
      ['no-answer', 'failed', 'Nobody answered.'],
      ['declined', 'declined', 'The call was declined.'],
    ] as const)(
      'a transfer that ends %s leaves the caller with the assistant, with words to say',
      async (reason, status, message) => {
        const { externalId, token, data } = await openSession(assistantId);
        control.answerNext('transfer', reason);
        const answer = await transfer(externalId, token, { destination: 'billing_desk' }).expect(202);
        expect(answer.body).toMatchObject({ message, data: { transfer: { status, reason, message } } });
        const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
        expect(call).toMatchObject({
          status: 'in-progress',
          ended_reason: null,
          transfer: { destination: 'billing_desk', status, reason },
        });
        // Still the assistant's call: it may try again.
        await transfer(externalId, token, { destination: 'billing_desk' }).expect(202);
      },
    );

    it('answers 502 when the telephony provider fails, the caller still with the assistant', async () => {
      const { externalId, token, data } = await openSession(assistantId);
      control.answerNext('transfer', 'provider-error');
      const answer = await transfer(externalId, token, { destination: 'billing_desk' }).expect(502);
      expect(answer.body).toEqual({ message: 'The telephony provider could not connect the call.' });
      const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
      expect(call).toMatchObject({
        status: 'in-progress',
        ended_reason: null,
        transfer: { status: 'failed', reason: 'provider-error' },
      });
    });

    /** What the adapter was asked in the warm transfer's consultation room of the call. */
    const consultation = async (externalId: string) => {
      const [room] = await stack.dataSource.query(
        `SELECT room FROM local_call_control_requests
          WHERE operation = 'createRoom' AND request #>> '{agentDispatch,metadata,external_id}' = $1`,
        [externalId],
      );
      return room ? operations(room.room) : [];
    };

    /** Until the person of the call's warm transfer answered in the consultation room. */
    const personAnswered = (externalId: string) =>
      waitFor(async () =>
        (await consultation(externalId)).some((step: { operation: string }) => step.operation === 'dialIntoRoom')
          ? true
          : undefined,
      );
    /** Plays the consultation room's agent: once the person answered, it has briefed them. */
    const briefWhenAnswered = async (externalId: string) => {
      await personAnswered(externalId);
      return http().post(`/api/internal/calls/${externalId}/transfer/briefed`).set(deployment).send();
    };

    it('a warm transfer rings the person into a consultation room, briefs them, then joins them to the caller', async () => {
      const { externalId, token, data } = await openSession(assistantId);
      // Nothing to brief before a transfer began.
      expect(
        (await http().post(`/api/internal/calls/${externalId}/transfer/briefed`).set(deployment).send().expect(409))
          .body,
      ).toEqual({ message: 'No transfer of this call is under way.' });
      await http().post('/api/internal/calls/no-such-call/transfer/briefed').set(deployment).send().expect(404);
      const asked = transfer(externalId, token, {
        destination: 'sales_lead',
        summary: 'Ada wants the yearly plan for 12 seats.',
      }).then((response) => response);
      await personAnswered(externalId);
      // The person answered: they wait in the consultation room until the assistant has briefed them.
      // Past the transfer's first look after its 2 s fallback, so that only the briefing's signal can wake it at once.
      const before = Date.now();
      while (Date.now() - before < 2100) {
        expect((await consultation(externalId)).map((step: { operation: string }) => step.operation)).toEqual([
          'createRoom',
          'dialIntoRoom',
        ]);
      }
      expect((await briefWhenAnswered(externalId)).status).toBe(202);
      const briefedAt = Date.now();
      const answer = await asked;
      // Joined as soon as briefed, not at the next look (up to 2 s later).
      expect(Date.now() - briefedAt).toBeLessThan(1500);
      expect(answer.status).toBe(202);
      expect(answer.body.data.transfer).toMatchObject({
        destination: 'sales_lead',
        mode: 'warm',
        status: 'transferred',
      });
      const steps = await consultation(externalId);
      expect(steps.map((step: { operation: string }) => step.operation)).toEqual([
        'createRoom',
        'dialIntoRoom',
        'moveParticipant',
        'endCall',
      ]);
      const [room, dial, move] = steps;
      expect(room.request.agentDispatch.metadata).toEqual({
        external_id: externalId,
        consultation: { destination: 'sales_lead', summary: 'Ada wants the yearly plan for 12 seats.' },
      });
      expect(dial.request).toMatchObject({
        to: '+14155550177',
        from: data.call.assistant_phone_number,
        outboundTrunkId: expect.stringMatching(/.+/),
        waitUntilAnswered: true,
      });
      expect(move.request).toMatchObject({ identity: 'transfer_sales_lead', toRoom: externalId });
      const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
      expect(call).toMatchObject({ ended_reason: 'transferred', transfer: { mode: 'warm', status: 'transferred' } });
    });

    it('a warm transfer the person declines never reaches the caller, who stays with the assistant', async () => {
      const { externalId, token, data } = await openSession(assistantId);
      control.answerNext('dialIntoRoom', 'declined');
      const answer = await transfer(externalId, token, { destination: 'sales_lead' }).expect(202);
      expect(answer.body).toMatchObject({
        message: 'The call was declined.',
        data: { transfer: { mode: 'warm', status: 'declined', reason: 'declined' } },
      });
      expect((await consultation(externalId)).map((step: { operation: string }) => step.operation)).toEqual([
        'createRoom',
        'dialIntoRoom',
        'endCall',
      ]);
      const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
      expect(call).toMatchObject({ status: 'in-progress', ended_reason: null, transfer: { status: 'declined' } });
    });

    it('a warm transfer the provider cannot finish hangs up on the person and answers 502', async () => {
      const { externalId, token } = await openSession(assistantId);
      control.failNext('moveParticipant', 'unsupported');
      const asked = transfer(externalId, token, { destination: 'sales_lead' }).then((response) => response);
      expect((await briefWhenAnswered(externalId)).status).toBe(202);
      expect((await asked).status).toBe(502);
      expect((await consultation(externalId)).map((step: { operation: string }) => step.operation)).toEqual([
        'createRoom',
        'dialIntoRoom',
        'moveParticipant',
        'removeParticipant',
        'endCall',
      ]);
    });

    it('never dials what the assistant does not list, and refuses hostile bodies with a 422 naming the field', async () => {
      const { externalId, token } = await openSession(assistantId);
      for (const [body, field] of [
        [{ destination: '+14155550199' }, 'destination'],
        [{ destination: 'sip:anyone@evil.example.com' }, 'destination'],
        [{ destination: 'BILLING_DESK' }, 'destination'],
        [{}, 'destination'],
        [{ destination: null }, 'destination'],
        [{ destination: ['billing_desk'] }, 'destination'],
        [{ destination: { name: 'billing_desk' } }, 'destination'],
        [{ destination: 'x'.repeat(65) }, 'destination'],
        [{ destination: 'billing_desk', participant_identity: 7 }, 'participant_identity'],
        [{ destination: 'billing_desk', participant_identity: 'x'.repeat(257) }, 'participant_identity'],
        [{ destination: 'billing_desk', summary: 'x'.repeat(4001) }, 'summary'],
      ] as const) {
        const response = await transfer(externalId, token, body).expect(422);
        expect(Object.keys(response.body.errors)).toEqual([field]);
      }
      await transfer(externalId, token, []).expect(400);
      expect(await operations(externalId)).toEqual([]);
    });

    it('refuses another call’s token (401), a call it does not have (404), and a finished call (409)', async () => {
      const first = await openSession(assistantId);
      const second = await openSession(assistantId);
      await transfer(first.externalId, second.token, { destination: 'billing_desk' }).expect(401);
      await transfer(first.externalId, 'vrc_not-a-token', { destination: 'billing_desk' }).expect(401);
      await transfer(first.externalId, other.token, { destination: 'billing_desk' }).expect(401);
      await http()
        .post('/api/internal/calls/no-such-call/transfer')
        .set(deployment)
        .send({ destination: 'billing_desk' })
        .expect(404);
      await http()
        .put(`/api/internal/calls/${first.externalId}`)
        .set(deployment)
        .send({ status: 'completed' })
        .expect(200);
      await http()
        .post(`/api/internal/calls/${first.externalId}/transfer`)
        .set(deployment)
        .send({ destination: 'billing_desk' })
        .expect(409);
      expect(await operations(first.externalId)).toEqual([]);
    });
  });

  describe('the assistant ends the call, and keys pressed', () => {
    it('records a call the assistant ended as ended by the assistant', async () => {
      const assistant = (await createAssistant({}).expect(201)).body.data;
      const { externalId, token, data } = await openSession(assistant.id);
      const ended = await http()
        .put(`/api/internal/calls/${externalId}`)
        .set(bearer(token))
        .send({ status: 'ended_by_assistant', ended_reason: 'assistant_hangup', duration: 12 })
        .expect(200);
      expect(ended.body.data).toMatchObject({ status: 'ended_by_assistant', ended_reason: 'assistant_hangup' });
      const call = (await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
      expect(call).toMatchObject({ status: 'ended_by_assistant', ended_reason: 'assistant_hangup', transfer: null });
      await http()
        .put(`/api/internal/calls/${externalId}`)
        .set(deployment)
        .send({ ended_reason: 'hung_up' })
        .expect(422)
        .expect(({ body }) => expect(Object.keys(body.errors)).toEqual(['ended_reason']));
    });

    it('stores the caller’s keys and the assistant’s as dtmf events the owner reads', async () => {
      const assistant = (await createAssistant({}).expect(201)).body.data;
      const { externalId, token, data } = await openSession(assistant.id);
      const at = new Date().toISOString();
      await http()
        .post(`/api/internal/calls/${externalId}/events`)
        .set(bearer(token))
        .send({
          events: [
            { seq: 1, type: 'transcript', role: 'assistant', text: 'Press 1 for sales.', at },
            { seq: 2, type: 'dtmf', digits: '1', direction: 'inbound', at },
            { seq: 3, type: 'dtmf', digits: '123#', direction: 'outbound', at },
          ],
        })
        .expect(200)
        .expect(({ body }) => expect(body.data).toEqual({ recorded: 3, duplicates: 0 }));
      expect(await ownerEvents(data.call.id)).toEqual([
        expect.objectContaining({ seq: 1, type: 'transcript' }),
        { seq: 2, type: 'dtmf', digits: '1', direction: 'inbound', at: expect.any(String) },
        { seq: 3, type: 'dtmf', digits: '123#', direction: 'outbound', at: expect.any(String) },
      ]);
      for (const [event, field] of [
        [{ type: 'dtmf', direction: 'inbound' }, 'events.0.digits'],
        [{ type: 'dtmf', digits: '', direction: 'inbound' }, 'events.0.digits'],
        [{ type: 'dtmf', digits: '12x', direction: 'inbound' }, 'events.0.digits'],
        [{ type: 'dtmf', digits: 5, direction: 'inbound' }, 'events.0.digits'],
        [{ type: 'dtmf', digits: '1'.repeat(65), direction: 'inbound' }, 'events.0.digits'],
        [{ type: 'dtmf', digits: '1' }, 'events.0.direction'],
        [{ type: 'dtmf', digits: '1', direction: 'sideways' }, 'events.0.direction'],
        [{ type: 'dtmf', digits: '1', direction: 'inbound', text: 'one' }, 'events.0.text'],
        [{ type: 'note', text: 'x', digits: '1' }, 'events.0.digits'],
        [{ type: 'transcript', role: 'user', text: 'x', direction: 'inbound' }, 'events.0.direction'],
        [{ type: 'transfer', text: 'x' }, 'events.0.type'],
      ] as const) {
        const response = await http()
          .post(`/api/internal/calls/${externalId}/events`)
          .set(bearer(token))
          .send({ events: [{ seq: 10, at, ...event }] })
          .expect(422);
        expect(Object.keys(response.body.errors)).toEqual([field]);
      }
    });
  });
});
