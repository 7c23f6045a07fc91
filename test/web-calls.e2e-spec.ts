import { TokenVerifier } from 'livekit-server-sdk';
import { bearer, createAccount, languageId, type TestAccount } from './support/factories';
import { FakeLiveKit } from './support/livekit-twirp.fake';
import { type Stack, startStack } from './support/stack';

const RUNTIME_TOKEN = 'runtime-token-for-web-calls-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const AGENT = 'web-call-agent';
const TOKEN_SECONDS = 300;
const LIMIT = 2;

/**
 * Web calls from outside: `POST /api/user/assistant/{id}/web-call` against LiveKit's API (the project's strict fake):
 * the call it writes, the room it makes with the agent dispatched, the browser's token and its grants, the runtime's
 * session of the call, the account's limit of calls in progress, isolation, idempotency, bad input and a provider
 * that fails.
 */
describe('Web calls', () => {
  let fake: FakeLiveKit;
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let english: number;
  const http = () => stack.http;

  beforeAll(async () => {
    fake = await FakeLiveKit.start();
    stack = await startStack({
      env: {
        RUNTIME_API_TOKEN: RUNTIME_TOKEN,
        CALL_DIALER: 'livekit',
        LIVEKIT_URL: fake.url,
        LIVEKIT_API_KEY: fake.apiKey,
        LIVEKIT_API_SECRET: fake.apiSecret,
        LIVEKIT_AGENT_NAME: AGENT,
        LIVEKIT_REQUEST_TIMEOUT_SECONDS: '2',
        WEB_CALL_TOKEN_TTL_SECONDS: String(TOKEN_SECONDS),
        ACCOUNT_MAX_CONCURRENT_CALLS: String(LIMIT),
      },
    });
    owner = await createAccount(stack, 'Owner');
    other = await createAccount(stack, 'Other');
    english = await languageId(stack, owner);
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
    await fake?.close();
  });
  afterEach(() => fake.clearFailures());

  const createAssistant = async (account: TestAccount, fields: object = {}) =>
    (
      await http()
        .post('/api/user/assistant')
        .set(account.auth)
        .send({
          name: 'Front desk',
          type: 'inbound',
          language_id: english,
          initial_message: 'Hello {{customer_name}}, how can I help?',
          variables: { customer_name: 'there', plan: 'basic' },
          ...fields,
        })
        .expect(201)
    ).body.data as { id: number };
  const startWebCall = (assistantId: number, body: object = {}, account = owner) =>
    http().post(`/api/user/assistant/${assistantId}/web-call`).set(account.auth).send(body);
  /** Ends a call as its runtime would, giving its account's call slot back. */
  const endCall = async (externalId: string) => {
    const session = await http()
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'web' })
      .expect(200);
    await http()
      .put(`/api/internal/calls/${externalId}`)
      .set(bearer(session.body.data.token))
      .send({ status: 'completed', duration: 3 })
      .expect(200);
  };
  const openCalls = async (account: TestAccount) =>
    (
      (await http().get('/api/user/calls').query({ type: 'web' }).set(account.auth).expect(200)).body.data as {
        status: string;
        external_id: string;
      }[]
    ).filter((call) => ['initiated', 'in-progress'].includes(call.status));

  it('writes a web call with no phone numbers, makes its room with the agent dispatched, and hands out a token for that room alone', async () => {
    const assistant = await createAssistant(owner);
    const before = Date.now();
    const response = await startWebCall(assistant.id, { variables: { customer_name: 'Ada', vip: true } }).expect(201);
    const { message, data } = response.body;
    expect(message).toBe('Web call started.');
    expect(data).toEqual({
      call: expect.objectContaining({
        type: 'web',
        status: 'initiated',
        assistant_name: 'Front desk',
        client_phone_number: null,
        assistant_phone_number: null,
        variables: { customer_name: 'Ada', vip: true },
      }),
      livekit_url: fake.url.replace('http://', 'ws://'),
      room: data.call.external_id,
      participant_token: expect.any(String),
      expires_at: expect.any(String),
    });
    // The call as the owner reads it.
    const read = await http().get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200);
    expect(read.body.data).toEqual(data.call);

    // The room: made once, its metadata (which the browser can read) empty, waiting for its person as long as the
    // token may be used; the agent dispatched into it with the call's external id.
    expect(fake.rooms.get(data.room)).toMatchObject({ name: data.room, metadata: '', emptyTimeout: 600 });
    const dispatches = fake.dispatches.filter((dispatch) => dispatch.room === data.room);
    expect(dispatches).toEqual([expect.objectContaining({ agentName: AGENT })]);
    expect(JSON.parse(dispatches[0].metadata)).toEqual({
      type: 'web',
      external_id: data.call.external_id,
      call_id: data.call.id,
      assistant_id: assistant.id,
      variables: { customer_name: 'Ada', vip: true },
    });

    // The token: signed with the deployment's LiveKit key, joins this room only, as the call's participant, for
    // the configured lifetime, with no admin, create, list or recording grant.
    const claims = await new TokenVerifier(fake.apiKey, fake.apiSecret).verify(data.participant_token);
    expect(claims.sub).toBe(`web-${data.call.id}`);
    expect(claims.video).toEqual({
      roomJoin: true,
      room: data.room,
      canPublish: true,
      canSubscribe: true,
      canPublishData: true,
    });
    expect(claims.sip).toBeUndefined();
    const expiresAt = new Date(data.expires_at).getTime();
    expect(expiresAt).toBe(claims.exp! * 1000);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + TOKEN_SECONDS * 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + TOKEN_SECONDS * 1000);
    // A token of another key is no token of this deployment.
    await expect(
      new TokenVerifier(fake.apiKey, 'another-secret-long-enough-for-hs256').verify(data.participant_token),
    ).rejects.toThrow();

    await endCall(data.call.external_id);
  });

  it('opens the runtime’s session of a web call by its external id, with no phone numbers, and takes its writes', async () => {
    const assistant = await createAssistant(owner);
    const { data } = (await startWebCall(assistant.id, { variables: { customer_name: 'Grace' } }).expect(201)).body;
    const session = await http()
      .post(`/api/internal/calls/${data.call.external_id}/session`)
      .set(deployment)
      .send({ type: 'web' })
      .expect(200);
    expect(session.body.data).toMatchObject({
      call: { id: data.call.id, type: 'web', client_phone_number: null, assistant_phone_number: null },
      token: expect.stringMatching(/^vrc_/),
      assistant: {
        id: assistant.id,
        initial_message: 'Hello Grace, how can I help?',
        variables: { customer_name: 'Grace', plan: 'basic' },
      },
    });
    const token = bearer(session.body.data.token);
    // The runtime's writes need no numbers either: the call stays between none.
    await http()
      .put(`/api/internal/calls/${data.call.external_id}`)
      .set(token)
      .send({ status: 'in-progress' })
      .expect(200);
    const ended = await http()
      .put(`/api/internal/calls/${data.call.external_id}`)
      .set(token)
      .send({ status: 'completed', duration: 12, answered_by: 'human', ended_reason: 'customer_hangup' })
      .expect(200);
    expect(ended.body.data).toMatchObject({
      type: 'web',
      status: 'completed',
      duration: 12,
      client_phone_number: null,
      assistant_phone_number: null,
    });
  });

  it('opens the session of a web call it did not start from its assistant alone', async () => {
    const assistant = await createAssistant(owner);
    const externalId = `web-own-room-${Date.now()}`;
    const noAssistant = await http()
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'web' })
      .expect(422);
    expect(noAssistant.body.errors).toEqual({
      assistant_id: ['The assistant id field is required when the service did not place the call.'],
    });
    const session = await http()
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'web', assistant_id: assistant.id })
      .expect(201);
    expect(session.body.data.call).toMatchObject({
      type: 'web',
      client_phone_number: null,
      assistant_phone_number: null,
    });
    await http()
      .put(`/api/internal/calls/${externalId}`)
      .set(bearer(session.body.data.token))
      .send({ status: 'completed' })
      .expect(200);
  });

  it('counts web calls against the account’s limit of calls in progress: 429 with Retry-After beyond it, and nothing made', async () => {
    const account = await createAccount(stack, 'Busy');
    const assistant = await createAssistant(account);
    const started = [];
    for (let i = 0; i < LIMIT; i++) started.push((await startWebCall(assistant.id, {}, account).expect(201)).body.data);
    const rooms = fake.rooms.size;
    const refused = await startWebCall(assistant.id, {}, account).expect(429);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body).toEqual({
      message: `The account has reached its limit of ${LIMIT} calls in progress at once; try again when one ends.`,
      max_concurrent_calls: LIMIT,
    });
    expect(fake.rooms.size).toBe(rooms);
    expect(await openCalls(account)).toHaveLength(LIMIT);

    // A call that ends gives its slot back.
    await endCall(started[0].call.external_id);
    const next = (await startWebCall(assistant.id, {}, account).expect(201)).body.data;
    for (const call of [started[1], next]) await endCall(call.call.external_id);
  });

  it('treats another account’s assistant as a missing one, and makes nothing', async () => {
    const theirs = await createAssistant(other);
    const rooms = fake.rooms.size;
    for (const id of [theirs.id, 999_999_999]) {
      expect((await startWebCall(id).expect(404)).body).toEqual({ message: 'Assistant not found.' });
    }
    expect((await startWebCall('abc' as unknown as number).expect(404)).body).toEqual({
      message: 'Assistant not found.',
    });
    expect(fake.rooms.size).toBe(rooms);
    expect(await openCalls(owner)).toEqual([]);
  });

  it('answers a retry with the same Idempotency-Key as the first time, with one call and one room', async () => {
    const assistant = await createAssistant(owner);
    const key = `web-call-${Date.now()}`;
    const first = await startWebCall(assistant.id, { variables: { plan: 'gold' } })
      .set('Idempotency-Key', key)
      .expect(201);
    const again = await startWebCall(assistant.id, { variables: { plan: 'gold' } })
      .set('Idempotency-Key', key)
      .expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(fake.dispatches.filter((dispatch) => dispatch.room === first.body.data.room)).toHaveLength(1);
    // Another body under the same key is refused.
    await startWebCall(assistant.id, { variables: { plan: 'silver' } })
      .set('Idempotency-Key', key)
      .expect(422);
    expect((await openCalls(owner)).map((call) => call.external_id)).toEqual([first.body.data.call.external_id]);
    await endCall(first.body.data.call.external_id);
  });

  it('refuses bad variables with 422 naming the field, and makes nothing', async () => {
    const assistant = await createAssistant(owner);
    const rooms = fake.rooms.size;
    const message = 'The variables field must be an object of at most 100 text, number or boolean values.';
    for (const variables of [
      'Ada',
      ['Ada'],
      42,
      { nested: { deeper: true } },
      { list: [1, 2] },
      { long: 'x'.repeat(4097) },
      { ['k'.repeat(65)]: 'too long a name' },
      Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, i])),
    ]) {
      const response = await startWebCall(assistant.id, { variables }).expect(422);
      expect(response.body).toEqual({ message, errors: { variables: [message] } });
    }
    // A body of more than the JSON limit never reaches the route.
    const huge = await startWebCall(assistant.id, { variables: { text: 'x'.repeat(2_000_000) } });
    expect(huge.status).toBe(413);
    // `__proto__` is no variable: the parser drops it, and nothing is polluted.
    const proto = await http()
      .post(`/api/user/assistant/${assistant.id}/web-call`)
      .set(owner.auth)
      .set('Content-Type', 'application/json')
      .send('{"variables":{"__proto__":{"polluted":true},"name":"Ada"}}')
      .expect(201);
    expect(proto.body.data.call.variables).toEqual({ name: 'Ada' });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(fake.rooms.size).toBe(rooms + 1);
    await endCall(proto.body.data.call.external_id);
  });

  it('answers 502 when LiveKit fails, and leaves no call, no slot taken and no room', async () => {
    const account = await createAccount(stack, 'Unlucky');
    const assistant = await createAssistant(account);
    for (const mode of ['unavailable', 'timeout', 'applied-timeout'] as const) {
      fake.failNext('RoomService/CreateRoom', mode);
      const rooms = [...fake.rooms.keys()];
      const failed = await startWebCall(assistant.id, {}, account).expect(502);
      expect(failed.body).toEqual({
        message: 'The telephony provider could not open the web call’s room; nothing was started. Please try again.',
      });
      const calls = await http().get('/api/user/calls').set(account.auth).expect(200);
      expect(calls.body.total).toBe(0);
      // A room made while its answer was lost is closed again.
      expect([...fake.rooms.keys()]).toEqual(rooms);
    }
    // The slots are all free: the account starts as many calls as it may.
    const started = [];
    for (let i = 0; i < LIMIT; i++) started.push((await startWebCall(assistant.id, {}, account).expect(201)).body.data);
    for (const call of started) await endCall(call.call.external_id);
  }, 30_000);
});
