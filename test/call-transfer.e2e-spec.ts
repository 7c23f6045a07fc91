import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';

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
  const http = () => stack.http;

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    owner = await createAccount(stack, 'Owner');
    other = await createAccount(stack, 'Other');
    const languages = (await http().get('/api/user/assistants/languages').set(owner.auth)).body as {
      id: number;
      iso_2: string;
    }[];
    english = languages.find((language) => language.iso_2 === 'en')!.id;
  }, 90_000);
  afterAll(() => stack?.close());

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
      [
        'transfer_destinations',
        [{ ...MANAGER, sip_uri: 'http://pbx.example.com' }],
        'transfer_destinations.0.sip_uri',
      ],
      ['transfer_destinations', [{ ...MANAGER, sip_uri: 'sip:a b@c' }], 'transfer_destinations.0.sip_uri'],
      ['transfer_destinations', [{ ...BILLING, mode: 'blind' }], 'transfer_destinations.0.mode'],
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
          { name: 'duty_manager', description: MANAGER.description, mode: 'warm', message: null },
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

  void other;
  void bearer;
});
