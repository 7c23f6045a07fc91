import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import {
  campaignDials,
  createFaqKnowledgebase,
  orderToolRequest,
  renewalsAssistantRequest,
  startRuntimeSite,
  verifiesWebhook,
  webhookDeliveries,
} from './support/runtime-fixtures';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-voice-runtime-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const TOOL_SECRET = 'sk-live-tool-secret-0123456789';

describe('Voice runtime API', () => {
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let site: LocalSite;
  let elsewhere: LocalSite;
  let english: number;
  let secondLanguage: number;
  let webhookSecret: string;
  let inbound: { id: number; number: string; toolId: number; unlinkedToolId: number; knowledgebaseId: number };

  const http = () => stack.http;
  const post = (path: string, body: object, auth = owner.auth) => http().post(`/api/user/${path}`).set(auth).send(body);

  const deliveries = (event: string, callId: number) => webhookDeliveries(site, event, callId);

  beforeAll(async () => {
    elsewhere = await startLocalSite({ '*': (_request, response) => response.writeHead(200).end('elsewhere') });
    const redirect = (status: number) => (_request: IncomingMessage, response: ServerResponse) =>
      response.writeHead(status, { location: `${elsewhere.origin}/landing` }).end();
    site = await startRuntimeSite({
      '/slow/VARSECRET': () => undefined,
      '/broken/VARSECRET': (_request, response) => response.writeHead(500).end('down'),
      '/moved-302': redirect(302),
      '/moved-307': redirect(307),
    });
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, JOB_RETRY_DELAY_MS: '100' } });
    owner = await createAccount(stack);
    other = await createAccount(stack);
    const languages = (await http().get('/api/user/assistants/languages').set(owner.auth)).body as {
      id: number;
      iso_2: string;
    }[];
    english = languages.find((language) => language.iso_2 === 'en')!.id;
    secondLanguage = languages.find((language) => language.iso_2 !== 'en')!.id;

    const knowledgebaseId = await createFaqKnowledgebase(stack, owner);
    const tool = (await post('tools', orderToolRequest(site.origin, TOOL_SECRET)).expect(201)).body.data;
    const unlinked = (
      await post('tools', {
        name: 'cancel_order',
        description: 'Cancels',
        endpoint: `${site.origin}/orders`,
        method: 'POST',
      }).expect(201)
    ).body.data;
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const assistant = (
      await post('assistant', {
        name: 'Front desk',
        type: 'inbound',
        language_id: english,
        secondary_language_ids: [secondLanguage],
        phone_number_id: number.id,
        knowledgebase_id: knowledgebaseId,
        tool_ids: [tool.id],
        initial_message: 'Hello, {{company}} here. How can I help, {{name}}?',
        system_prompt: 'You answer for {{company}}. Caller tier: {{tier}}. Unknown: {{nothing_here}}.',
        variables: { company: 'Acme', tier: 'gold', name: 'there' },
        webhook_url: `${site.origin}/hook`,
        is_webhook_active: true,
        max_duration: 600,
      }).expect(201)
    ).body.data;
    webhookSecret = (await http().get(`/api/user/assistant/${assistant.id}`).set(owner.auth).expect(200)).body.data
      .webhook_secret;
    inbound = {
      id: assistant.id,
      number: number.phone_number,
      toolId: tool.id,
      unlinkedToolId: unlinked.id,
      knowledgebaseId,
    };
  }, 120_000);
  afterAll(async () => {
    await stack.close();
    await site.close();
    await elsewhere.close();
  });

  const session = (externalId: string, body: object, auth: Record<string, string> = deployment) =>
    http().post(`/api/internal/calls/${externalId}/session`).set(auth).send(body);
  const inboundSession = (externalId: string, overrides: object = {}) =>
    session(externalId, {
      type: 'inbound',
      client_phone_number: '+14155550199',
      assistant_phone_number: inbound.number,
      ...overrides,
    });

  /** An inbound assistant on a number of its own with these tools, and a call to it: the number and the session. */
  const callWithTools = async (name: string, toolIds: number[], overrides: object = {}) => {
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    await post('assistant', {
      name,
      type: 'inbound',
      language_id: english,
      phone_number_id: number.id,
      tool_ids: toolIds,
      ...overrides,
    }).expect(201);
    const opened = await inboundSession(`call-${name.toLowerCase()}-${Date.now()}`, {
      assistant_phone_number: number.phone_number,
    }).expect(201);
    return { number: number.phone_number as string, opened: opened.body.data };
  };

  it('takes a room name as long as LiveKit allows (256 bytes), and answers a longer one as a call it does not have', async () => {
    const longest = `call-long-${Date.now()}-`.padEnd(256, '+0');
    const opened = await inboundSession(longest).expect(201);
    expect(opened.body.data.call.external_id).toBe(longest);
    // The same room again: the same call, found.
    const again = await inboundSession(longest).expect(200);
    expect(again.body.data.call.id).toBe(opened.body.data.call.id);
    await inboundSession(`${longest}0`).expect(404, { message: 'Call not found.' });
  });

  it('answers a whole inbound call from the service’s data, with secrets that never leave it', async () => {
    const externalId = `call-inbound-${Date.now()}`;
    // 1. The session: the assistant holding the dialled number, its tools as JSON Schema, its knowledgebase.
    const opened = await inboundSession(externalId, { variables: { name: 'Ada' } }).expect(201);
    const { call, token, expires_at: expiresAt, assistant, tools, knowledgebase } = opened.body.data;
    expect(token).toMatch(/^vrc_[0-9A-Za-z]{49}$/);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan((600 + 500) * 1000);
    expect(call).toMatchObject({ external_id: externalId, type: 'inbound', status: 'in-progress' });
    expect(assistant).toMatchObject({
      id: inbound.id,
      name: 'Front desk',
      language: { id: english, iso_2: 'en' },
      secondary_languages: [expect.objectContaining({ id: secondLanguage })],
      initial_message: 'Hello, Acme here. How can I help, Ada?',
      system_prompt: 'You answer for Acme. Caller tier: gold. Unknown: {{nothing_here}}.',
      max_duration: 600,
      variables: { company: 'Acme', tier: 'gold', name: 'Ada' },
    });
    expect(tools).toEqual([
      {
        id: inbound.toolId,
        name: 'check_order',
        description: 'Looks an order up by its number',
        parameters: {
          type: 'object',
          properties: {
            order_id: { type: 'string', description: 'The order number' },
            quantity: { type: 'integer', description: 'How many' },
          },
          required: ['order_id'],
          additionalProperties: false,
        },
      },
    ]);
    expect(JSON.stringify(opened.body)).not.toContain(TOOL_SECRET);
    expect(JSON.stringify(opened.body)).not.toContain(site.origin);
    expect(knowledgebase).toEqual({ id: inbound.knowledgebaseId, name: 'Support FAQ' });
    const stored = await stack.dataSource.query(`SELECT token_hash FROM call_tokens WHERE call_id = $1`, [call.id]);
    expect(stored).toHaveLength(1);
    expect(stored[0].token_hash).not.toContain(token.slice(4));

    // A retried session is the same call, with a token of its own; the first stays valid.
    const again = await inboundSession(externalId).expect(200);
    expect(again.body.data.call.id).toBe(call.id);
    const auth = bearer(token);

    // 2. Knowledge, with the call token.
    const knowledge = await http()
      .get(`/api/internal/calls/${externalId}/knowledge`)
      .query({ query: 'when do I get my refund' })
      .set(auth)
      .expect(200);
    expect(knowledge.body.data[0].content).toContain('fourteen days');

    // 3. A tool: the service makes the request with the stored secret header and the call's variables.
    const invoked = await http()
      .post(`/api/internal/calls/${externalId}/tools/${inbound.toolId}/invoke`)
      .set(auth)
      .send({ arguments: { order_id: 'A-17', quantity: 2 } })
      .expect(200);
    expect(invoked.body.data).toMatchObject({
      status: 200,
      body: { order: 'A-17', status: 'shipped' },
      error: null,
      error_code: null,
    });
    const sent = site.requests.filter((request) => request.path === '/orders').at(-1)!;
    expect(sent.headers['x-api-key']).toBe(TOOL_SECRET);
    expect(JSON.parse(sent.body)).toEqual({ order_id: 'A-17', quantity: 2, company: 'Acme' });
    await http()
      .post(`/api/internal/calls/${externalId}/tools/${inbound.toolId}/invoke`)
      .set(auth)
      .send({ arguments: { quantity: 'two' } })
      .expect(422)
      .expect((response) =>
        expect(Object.keys(response.body.errors).sort()).toEqual(['arguments.order_id', 'arguments.quantity']),
      );
    // An argument the schema does not name is refused, not forwarded: nothing sent, nothing recorded.
    const sentBefore = site.requests.length;
    await http()
      .post(`/api/internal/calls/${externalId}/tools/${inbound.toolId}/invoke`)
      .set(auth)
      .send({ arguments: { order_id: 'A-17', coupon: 'FREE' } })
      .expect(422, {
        message: 'The arguments.coupon field is not a parameter of this tool.',
        errors: { 'arguments.coupon': ['The arguments.coupon field is not a parameter of this tool.'] },
      });
    expect(site.requests.length).toBe(sentBefore);
    await http()
      .post(`/api/internal/calls/${externalId}/tools/${inbound.unlinkedToolId}/invoke`)
      .set(auth)
      .send({ arguments: {} })
      .expect(404, { message: 'Tool not found' });

    // 4. Transcript turns and a note, out of order, one batch retried: each seq once.
    const turns = [
      { seq: 2, type: 'transcript', role: 'user', text: 'Where is my order A-17?', at: '2026-01-02T10:00:05.000Z' },
      { seq: 1, type: 'transcript', role: 'assistant', text: 'Hello, Acme here.', at: '2026-01-02T10:00:01.000Z' },
      { seq: 3, type: 'note', text: 'Caller sounded in a hurry', at: '2026-01-02T10:00:06.000Z' },
    ];
    const events = (batch: object[]) =>
      http().post(`/api/internal/calls/${externalId}/events`).set(auth).send({ events: batch });
    expect((await events(turns.slice(0, 2)).expect(200)).body.data).toEqual({ recorded: 2, duplicates: 0 });
    expect((await events(turns).expect(200)).body.data).toEqual({ recorded: 1, duplicates: 2 });
    await events([
      { seq: 4, type: 'transcript', role: 'assistant', text: 'It has shipped.', at: '2026-01-02T10:00:09.000Z' },
    ]).expect(200);

    // 5. The final write, with the call token: the transcript is the turns joined in order.
    const ended = await http()
      .put(`/api/internal/calls/${externalId}`)
      .set(auth)
      .send({
        assistant_id: inbound.id,
        type: 'inbound',
        status: 'completed',
        client_phone_number: '+14155550199',
        assistant_phone_number: inbound.number,
        duration: 42,
        answered_by: 'human',
      })
      .expect(200);
    expect(ended.body.data.transcript).toBe(
      'Assistant: Hello, Acme here.\nCustomer: Where is my order A-17?\nAssistant: It has shipped.',
    );

    // 6. The owner reads the events in order; another account does not see the call.
    const listed = await http().get(`/api/user/calls/${call.id}/events`).set(owner.auth).expect(200);
    expect(listed.body.total).toBe(5);
    expect(listed.body.data.slice(0, 4)).toEqual([
      { type: 'transcript', seq: 1, at: '2026-01-02T10:00:01.000Z', role: 'assistant', text: 'Hello, Acme here.' },
      { type: 'transcript', seq: 2, at: '2026-01-02T10:00:05.000Z', role: 'user', text: 'Where is my order A-17?' },
      { type: 'note', seq: 3, at: '2026-01-02T10:00:06.000Z', text: 'Caller sounded in a hurry' },
      { type: 'transcript', seq: 4, at: '2026-01-02T10:00:09.000Z', role: 'assistant', text: 'It has shipped.' },
    ]);
    expect(listed.body.data[4]).toMatchObject({
      type: 'tool_call',
      tool_id: inbound.toolId,
      name: 'check_order',
      arguments: { order_id: 'A-17', quantity: 2 },
      status: 200,
      error: null,
    });
    expect(JSON.stringify(listed.body)).not.toContain(TOOL_SECRET);
    await http().get(`/api/user/calls/${call.id}/events`).set(other.auth).expect(404, { message: 'Call not found.' });

    // 7. Both webhooks, signed with the assistant's secret; the end carries the turns and the tool calls.
    const [started] = await waitFor(async () => {
      const found = deliveries('call.started', call.id);
      return found.length > 0 ? found : undefined;
    });
    expect(verifiesWebhook(webhookSecret, started.request.headers, started.request.body)).toBe(true);
    expect(started.body.call).toMatchObject({ external_id: externalId, status: 'in-progress' });
    const [end] = await waitFor(async () => {
      const found = deliveries('call.ended', call.id);
      return found.length > 0 ? found : undefined;
    });
    expect(verifiesWebhook(webhookSecret, end.request.headers, end.request.body)).toBe(true);
    expect(end.body.call.turns.map((turn: { seq: number }) => turn.seq)).toEqual([1, 2, 4]);
    expect(end.body.call.tool_calls).toEqual([
      expect.objectContaining({ tool_id: inbound.toolId, name: 'check_order', status: 200, error: null }),
    ]);
    expect(end.request.body).not.toContain(TOOL_SECRET);
    // A retried session was no second start.
    expect(deliveries('call.started', call.id)).toHaveLength(1);
  });

  it('opens one call for many sessions at once', async () => {
    const externalId = `call-burst-${Date.now()}`;
    const answers = await Promise.all(Array.from({ length: 8 }, () => inboundSession(externalId)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((answer) => answer.body.data.call.id)).size).toBe(1);
    const [{ count }] = await stack.dataSource.query(
      `SELECT count(*)::int AS count FROM calls WHERE external_id = $1`,
      [externalId],
    );
    expect(count).toBe(1);
  });

  it('finds the assistant by the number however it is written, and refuses numbers nobody answers', async () => {
    const national = inbound.number.replace(/^\+1/, '');
    await inboundSession(`call-national-${Date.now()}`, {
      assistant_phone_number: `+1 (${national.slice(0, 3)}) ${national.slice(3)}`,
    }).expect(201);
    await inboundSession(`call-nobody-${Date.now()}`, { assistant_phone_number: '+14155550000' }).expect(404, {
      message: 'No assistant answers this number.',
    });
    // An inactive assistant does not answer.
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    await post('assistant', {
      name: 'Asleep',
      type: 'inbound',
      language_id: english,
      phone_number_id: number.id,
      status: 'inactive',
    }).expect(201);
    await inboundSession(`call-asleep-${Date.now()}`, { assistant_phone_number: number.phone_number }).expect(404, {
      message: 'No assistant answers this number.',
    });
  });

  it('scopes a call token to its own call’s routes, like a wrong token everywhere else', async () => {
    const first = (await inboundSession(`call-a-${Date.now()}`).expect(201)).body.data;
    const second = (await inboundSession(`call-b-${Date.now()}`).expect(201)).body.data;
    const auth = bearer(first.token);
    const unauthenticated = { message: 'Unauthenticated.' };
    const otherCall = second.call.external_id;
    await http()
      .post(`/api/internal/calls/${otherCall}/events`)
      .set(auth)
      .send({ events: [{ seq: 1, type: 'note', text: 'x', at: '2026-01-02T10:00:00Z' }] })
      .expect(401, unauthenticated);
    await http().get(`/api/internal/calls/${otherCall}/knowledge?query=refund`).set(auth).expect(401, unauthenticated);
    await inboundSession(first.call.external_id).set(auth).expect(401, unauthenticated);
    await session(first.call.external_id, { type: 'inbound' }, auth).expect(401, unauthenticated);
    await http().get('/api/user/calls').set(auth).expect(401, unauthenticated);
    // An expired token is refused like any other.
    await stack.dataSource.query(`UPDATE call_tokens SET expires_at = now() - interval '1 second' WHERE call_id = $1`, [
      first.call.id,
    ]);
    await http().get(`/api/internal/calls/${first.call.external_id}/knowledge?query=refund`).set(auth).expect(401);
    // A user's own token never opens the runtime's routes.
    await http().get(`/api/internal/calls/${otherCall}/knowledge?query=refund`).set(owner.auth).expect(401);
  });

  it('answers a failing tool with why, naming its host at most, and shows the owner and the webhook why', async () => {
    const tool = async (name: string, path: string) =>
      (
        await post('tools', {
          name,
          description: 'Fails',
          endpoint: `${site.origin}${path}/{{tier}}`,
          method: 'GET',
          timeout: 1,
          headers: [{ name: 'X-Api-Key', value: TOOL_SECRET }],
          static_fields: [{ key: 'token', value: 'STATICSECRET' }],
          schema: [{ name: 'q', type: 'string', description: 'Query' }],
        }).expect(201)
      ).body.data.id as number;
    const slow = await tool('slow_lookup', '/slow');
    const broken = await tool('broken_lookup', '/broken');
    const { number, opened } = await callWithTools('Slow', [slow, broken], {
      variables: { tier: 'VARSECRET' },
      webhook_url: `${site.origin}/hook`,
      is_webhook_active: true,
    });
    const invoke = (id: number) =>
      http()
        .post(`/api/internal/calls/${opened.call.external_id}/tools/${id}/invoke`)
        .set(bearer(opened.token))
        .send({ arguments: { q: 'ARGSECRET' } })
        .expect(200);
    const started = Date.now();
    const invoked = await invoke(slow);
    expect(Date.now() - started).toBeLessThan(5000);
    const host = `127.0.0.1:${site.port}`;
    expect(invoked.body.data).toEqual({
      status: null,
      body: null,
      duration_ms: expect.any(Number),
      error: `No answer from ${host} within 1000 ms`,
      error_code: 'timeout',
    });
    // An answer that is not a success is the answer: no error for the runtime, its status says it.
    expect((await invoke(broken)).body.data).toMatchObject({ status: 500, error: null, error_code: null });

    const listed = await http().get(`/api/user/calls/${opened.call.id}/events`).set(owner.auth).expect(200);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        type: 'tool_call',
        status: null,
        name: 'slow_lookup',
        error: { code: 'timeout', message: `No answer from ${host} within 1000 ms` },
      }),
      expect.objectContaining({
        type: 'tool_call',
        status: 500,
        name: 'broken_lookup',
        error: { code: 'http_status', message: 'The endpoint answered 500' },
      }),
    ]);
    await http()
      .put(`/api/internal/calls/${opened.call.external_id}`)
      .set(bearer(opened.token))
      .send({
        assistant_id: opened.assistant.id,
        type: 'inbound',
        status: 'completed',
        client_phone_number: '+14155550199',
        assistant_phone_number: number,
      })
      .expect(200);
    const [end] = await waitFor(async () => {
      const found = deliveries('call.ended', opened.call.id);
      return found.length > 0 ? found : undefined;
    });
    expect(end.body.call.tool_calls.map((call: { error: unknown }) => call.error)).toEqual([
      { code: 'timeout', message: `No answer from ${host} within 1000 ms` },
      { code: 'http_status', message: 'The endpoint answered 500' },
    ]);
    // No path, query, static field, variable, argument or header anywhere the failure is told.
    for (const told of [
      JSON.stringify(invoked.body),
      JSON.stringify(listed.body.data.map((event: { error: unknown }) => event.error)),
      JSON.stringify(end.body.call.tool_calls.map((call: { error: unknown }) => call.error)),
    ]) {
      expect(told).not.toMatch(/SECRET|\/slow|\/broken|\?|tool-secret/);
    }
  });

  it('keeps what the owner set for the tool’s origin: a redirect elsewhere gets none of it', async () => {
    const redirecting = async (name: string, method: string, status: number) =>
      (
        await post('tools', {
          name,
          description: 'Moved',
          endpoint: `${site.origin}/moved-${status}`,
          method,
          headers: [{ name: 'X-Api-Key', value: TOOL_SECRET }],
          static_fields: [{ key: 'token', value: 'STATICSECRET' }],
        }).expect(201)
      ).body.data.id as number;
    const tools = [
      await redirecting('moved_get', 'GET', 302),
      await redirecting('moved_post', 'POST', 302),
      await redirecting('kept_post', 'POST', 307),
    ];
    const { opened } = await callWithTools('Moved', tools);
    const answers = [];
    for (const id of tools) {
      answers.push(
        (
          await http()
            .post(`/api/internal/calls/${opened.call.external_id}/tools/${id}/invoke`)
            .set(bearer(opened.token))
            .send({ arguments: {} })
            .expect(200)
        ).body.data,
      );
    }
    expect(answers.map(({ status, body, error_code: code }) => ({ status, body, code }))).toEqual([
      { status: 200, body: 'elsewhere', code: null },
      { status: 200, body: 'elsewhere', code: null },
      { status: null, body: null, code: 'redirect_refused' },
    ]);
    // The two 302s arrived as bare GETs; the 307 would have carried the body, and was not followed.
    expect(elsewhere.requests.map(({ method, path, body }) => ({ method, path, body }))).toEqual([
      { method: 'GET', path: '/landing', body: '' },
      { method: 'GET', path: '/landing', body: '' },
    ]);
    for (const request of elsewhere.requests) {
      expect(Object.keys(request.headers).sort()).toEqual(['connection', 'host', 'user-agent']);
      expect(JSON.stringify(request)).not.toMatch(/SECRET|tool-secret/);
    }
  });

  it('needs the numbers of a call it has not seen, naming each one missing', async () => {
    const externalId = `call-unnumbered-${Date.now()}`;
    await session(externalId, { type: 'inbound' }).expect(422, {
      message: 'The client phone number field is required. (and 1 more error)',
      errors: {
        client_phone_number: ['The client phone number field is required.'],
        assistant_phone_number: ['The assistant phone number field is required.'],
      },
    });
    const [{ count }] = await stack.dataSource.query(
      `SELECT count(*)::int AS count FROM calls WHERE external_id = $1`,
      [externalId],
    );
    expect(count).toBe(0);
  });

  it('refuses hostile bodies with 422 and stores nothing', async () => {
    const opened = (await inboundSession(`call-hostile-${Date.now()}`).expect(201)).body.data;
    const auth = bearer(opened.token);
    const events = (body: unknown) =>
      http()
        .post(`/api/internal/calls/${opened.call.external_id}/events`)
        .set(auth)
        .send(body as object);
    const valid = { seq: 1, type: 'transcript', role: 'user', text: 'hi', at: '2026-01-02T10:00:00Z' };
    for (const body of [
      {},
      { events: [] },
      { events: 'x' },
      { events: [[]] },
      { events: [null] },
      { events: [{ ...valid, seq: '1' }] },
      { events: [{ ...valid, seq: -1 }] },
      { events: [{ ...valid, role: undefined }] },
      { events: [{ ...valid, role: 'system' }] },
      { events: [{ ...valid, type: 'tool_call' }] },
      { events: [{ ...valid, at: '2026-02-31T10:00:00Z' }] },
      { events: [{ ...valid, at: 'yesterday' }] },
      { events: [{ ...valid, text: 'x'.repeat(10_001) }] },
      { events: Array.from({ length: 101 }, (_, seq) => ({ ...valid, seq })) },
    ]) {
      const answer = await events(body);
      expect([answer.status, body]).toEqual([422, body]);
      expect(answer.body.message).toEqual(expect.any(String));
      expect(answer.body.errors).toEqual(expect.any(Object));
    }
    await events({ events: [{ ...valid, text: 'x'.repeat(1_100_000) }] }).expect(413);
    await session(`call-hostile-2-${Date.now()}`, { type: 'phone', client_phone_number: [], variables: 'x' }).expect(
      422,
    );
    await http()
      .post(`/api/internal/calls/${opened.call.external_id}/tools/${inbound.toolId}/invoke`)
      .set(auth)
      .send({ arguments: [] })
      .expect(422);
    const [{ count }] = await stack.dataSource.query(
      `SELECT count(*)::int AS count FROM call_events WHERE call_id = $1`,
      [opened.call.id],
    );
    expect(count).toBe(0);
    await http()
      .post('/api/internal/calls/no%20such/events')
      .set(deployment)
      .send({ events: [valid] })
      .expect(404);
    await http()
      .post('/api/internal/calls/call-missing/events')
      .set(deployment)
      .send({ events: [valid] })
      .expect(404, {
        message: 'Call not found.',
      });
  });
});

describe('Voice runtime API: a campaign call', () => {
  let stack: Stack;
  let owner: TestAccount;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startRuntimeSite();
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, JOB_RETRY_DELAY_MS: '100' } });
    owner = await createAccount(stack);
  }, 60_000);
  afterAll(async () => {
    await stack.close();
    await site.close();
  });

  it('runs the call the dialer placed, with the lead’s variables over the assistant’s', async () => {
    const post = (path: string, body: object) => stack.http.post(`/api/user/${path}`).set(owner.auth).send(body);
    const languages = (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body;
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const assistant = (
      await post(
        'assistant',
        renewalsAssistantRequest(languages[0].id, number.id, {
          webhook_url: `${site.origin}/hook`,
          is_webhook_active: true,
        }),
      ).expect(201)
    ).body.data;
    const secret = (await stack.http.get(`/api/user/assistant/${assistant.id}`).set(owner.auth)).body.data
      .webhook_secret;
    const campaign = (
      await post('campaign', { name: 'Renewals', assistant_id: assistant.id, phone_number_ids: [number.id] }).expect(
        201,
      )
    ).body.data;
    const lead = (
      await post('lead', {
        phone_number: '+14155550142',
        campaign_id: campaign.id,
        variables: { name: 'Grace', plan: 'premium' },
      }).expect(201)
    ).body.data;
    await post('campaigns/update-status', { campaign_id: campaign.id, action: 'start' }).expect(200);

    // The agent learns the call from its dispatch: the external id is in the dispatch's metadata.
    const [dial] = await campaignDials(stack, campaign.id, 1);
    const externalId = String(dial.metadata.external_id);
    expect(externalId).toBe(dial.attemptId);

    const opened = await stack.http
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      // A call the service placed is known by its id: the agent need not wait for the callee to learn the numbers.
      .send({ type: 'outbound' })
      .expect(200);
    const data = opened.body.data;
    expect(data.call).toMatchObject({ external_id: externalId, lead_id: lead.id, type: 'outbound' });
    expect(data.assistant.initial_message).toBe('Hi Grace, this is Acme about your premium plan.');
    expect(data.tools).toEqual([]);
    expect(data.knowledgebase).toBeNull();
    await stack.http
      .get(`/api/internal/calls/${externalId}/knowledge?query=anything`)
      .set(bearer(data.token))
      .expect(200, { data: [] });

    const auth = bearer(data.token);
    const write = (status: string, extra: object = {}) =>
      stack.http
        .put(`/api/internal/calls/${externalId}`)
        .set(auth)
        .send({
          assistant_id: assistant.id,
          type: 'outbound',
          status,
          client_phone_number: '+14155550142',
          assistant_phone_number: number.phone_number,
          campaign_id: campaign.id,
          lead_id: lead.id,
          ...extra,
        });
    await write('in-progress').expect(200);
    await stack.http
      .post(`/api/internal/calls/${externalId}/events`)
      .set(auth)
      .send({
        events: [
          { seq: 1, type: 'transcript', role: 'assistant', text: 'Hi Grace.', at: '2026-01-02T10:00:01Z' },
          { seq: 2, type: 'transcript', role: 'user', text: 'Renew it, please.', at: '2026-01-02T10:00:03Z' },
        ],
      })
      .expect(200);
    await write('completed', { duration: 20, answered_by: 'human', evaluation: { renewed: true } }).expect(200);

    const read = (await stack.http.get(`/api/user/calls/${data.call.id}`).set(owner.auth).expect(200)).body.data;
    expect(read).toMatchObject({
      status: 'completed',
      transcript: 'Assistant: Hi Grace.\nCustomer: Renew it, please.',
    });
    const hooks = await waitFor(async () => {
      const found = site.requests.filter((request) => request.path === '/hook');
      return found.some((request) => JSON.parse(request.body).event === 'call.ended') ? found : undefined;
    });
    const events = hooks.map((request) => JSON.parse(request.body).event);
    expect(events).toEqual(expect.arrayContaining(['call.started', 'call.ended']));
    for (const hook of hooks) expect(verifiesWebhook(secret, hook.headers, hook.body)).toBe(true);
    const ended = JSON.parse(hooks.find((request) => JSON.parse(request.body).event === 'call.ended')!.body);
    expect(ended.call.lead).toMatchObject({ id: lead.id, campaign: { id: campaign.id } });
    expect(ended.call.turns).toHaveLength(2);
    expect((await stack.http.get(`/api/user/leads/${lead.id}`).set(owner.auth)).body.data.status).not.toBe('new');
  });
});
