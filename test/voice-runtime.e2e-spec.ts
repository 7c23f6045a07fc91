import type { IncomingMessage, ServerResponse } from 'node:http';
import { getCountries, getExampleNumber } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';
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
  /** A whole write of an inbound call to the front desk, as a first write needs it (the rest as given). */
  const frontDeskWrite = (fields: object) => ({
    assistant_id: inbound.id,
    type: 'inbound',
    client_phone_number: '+14155550199',
    assistant_phone_number: inbound.number,
    ...fields,
  });
  /** An assistant of the owner's (English) on a number of its own. */
  const assistantOnNewNumber = async (fields: object) => {
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const assistant = (
      await post('assistant', { language_id: english, phone_number_id: number.id, ...fields }).expect(201)
    ).body.data;
    return { number, assistant };
  };

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

  it('hands over the assistant’s own LLM, transcriber and voice, and its tools’ richer schemas as they are', async () => {
    const lines = {
      name: 'lines',
      type: 'array',
      description: 'What to order',
      items: { type: 'object', properties: [{ name: 'sku', type: 'string', description: 'Article', required: true }] },
    };
    const tool = (
      await post('tools', {
        ...orderToolRequest(site.origin, TOOL_SECRET),
        name: 'place_order',
        schema: [{ name: 'speed', type: 'string', description: 'Delivery', enum: ['standard', 'express'] }, lines],
      }).expect(201)
    ).body.data;
    const { opened } = await callWithTools('Pipeline', [tool.id], {
      voice_id: 'nova',
      model: { provider: 'livekit', model: 'openai/gpt-4.1', temperature: 0.2 },
      transcriber: { provider: 'openai', model: 'gpt-4o-transcribe', language: 'de' },
      voice: { provider: 'openai', speed: 0.9 },
    });
    expect(opened.assistant).toMatchObject({
      voice_id: 'nova',
      model: { provider: 'livekit', model: 'openai/gpt-4.1', temperature: 0.2 },
      transcriber: { provider: 'openai', model: 'gpt-4o-transcribe', language: 'de' },
      voice: { provider: 'openai', voice_id: 'nova', speed: 0.9 },
    });
    expect(opened.tools[0].parameters).toEqual({
      type: 'object',
      properties: {
        speed: { type: 'string', description: 'Delivery', enum: ['standard', 'express'] },
        lines: {
          type: 'array',
          description: 'What to order',
          items: {
            type: 'object',
            properties: { sku: { type: 'string', description: 'Article' } },
            required: ['sku'],
            additionalProperties: false,
          },
        },
      },
      required: [],
      additionalProperties: false,
    });
  });

  it('answers a whole inbound call from the service’s data, with secrets that never leave it', async () => {
    const externalId = `call-inbound-${Date.now()}`;
    // The turns' times, a minute before the session (a runtime's clock may be up to five minutes off the service's):
    // the tool call, stamped by the service when it is made, comes after them.
    const callStart = Date.now() - 60_000;
    const inCall = (seconds: number) => new Date(callStart + seconds * 1000).toISOString();
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
      model: null,
      transcriber: null,
      voice: null,
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
      { seq: 2, type: 'transcript', role: 'user', text: 'Where is my order A-17?', at: inCall(5) },
      { seq: 1, type: 'transcript', role: 'assistant', text: 'Hello, Acme here.', at: inCall(1) },
      { seq: 3, type: 'note', text: 'Caller sounded in a hurry', at: inCall(6) },
    ];
    const events = (batch: object[]) =>
      http().post(`/api/internal/calls/${externalId}/events`).set(auth).send({ events: batch });
    expect((await events(turns.slice(0, 2)).expect(200)).body.data).toEqual({ recorded: 2, duplicates: 0 });
    expect((await events(turns).expect(200)).body.data).toEqual({ recorded: 1, duplicates: 2 });
    await events([{ seq: 4, type: 'transcript', role: 'assistant', text: 'It has shipped.', at: inCall(9) }]).expect(
      200,
    );

    // 5. The final write, with the call token: the transcript is the turns joined in order.
    const ended = await http()
      .put(`/api/internal/calls/${externalId}`)
      .set(auth)
      .send(frontDeskWrite({ status: 'completed', duration: 42, answered_by: 'human' }))
      .expect(200);
    expect(ended.body.data.transcript).toBe(
      'Assistant: Hello, Acme here.\nCustomer: Where is my order A-17?\nAssistant: It has shipped.',
    );

    // 6. The owner reads the events in order; another account does not see the call.
    const listed = await http().get(`/api/user/calls/${call.id}/events`).set(owner.auth).expect(200);
    expect(listed.body.total).toBe(5);
    expect(listed.body.data.slice(0, 4)).toEqual([
      { type: 'transcript', seq: 1, at: inCall(1), role: 'assistant', text: 'Hello, Acme here.' },
      { type: 'transcript', seq: 2, at: inCall(5), role: 'user', text: 'Where is my order A-17?' },
      { type: 'note', seq: 3, at: inCall(6), text: 'Caller sounded in a hurry' },
      { type: 'transcript', seq: 4, at: inCall(9), role: 'assistant', text: 'It has shipped.' },
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
    const { number } = await assistantOnNewNumber({ name: 'Asleep', type: 'inbound', status: 'inactive' });
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
      .send({ events: [{ seq: 1, type: 'note', text: 'x', at: new Date().toISOString() }] })
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

  it('after the final write, lets a call token repeat that write and nothing else', async () => {
    const externalId = `call-finished-${Date.now()}`;
    const opened = (await inboundSession(externalId).expect(201)).body.data;
    const auth = bearer(opened.token);
    const path = `/api/internal/calls/${externalId}`;
    const unauthenticated = { message: 'Unauthenticated.' };
    const turn = (seq: number, text: string) => ({
      seq,
      type: 'transcript',
      role: 'user',
      text,
      at: new Date().toISOString(),
    });
    await http()
      .post(`${path}/events`)
      .set(auth)
      .send({ events: [turn(1, 'Thanks, bye.')] })
      .expect(200);
    const final = frontDeskWrite({
      status: 'completed',
      duration: 12,
      carrier_cost: 0.05,
      total_cost: 0.12345,
      answered_by: 'human',
      evaluation: { resolved: true },
      variables: { order: 'A-17' },
    });
    await http().put(path).set(auth).send(final).expect(200);
    const [end] = await waitFor(async () => {
      const found = deliveries('call.ended', opened.call.id);
      return found.length > 0 ? found : undefined;
    });
    expect(end.body.call.turns.map((item: { seq: number }) => item.seq)).toEqual([1]);
    // The call as the owner reads it once the delivery's answer is recorded.
    const readCall = async () =>
      (await http().get(`/api/user/calls/${opened.call.id}`).set(owner.auth).expect(200)).body.data;
    const stored = await waitFor(async () => {
      const call = await readCall();
      return 'status' in call.webhook_response ? call : undefined;
    });
    const ended = { message: 'Call updated.', data: stored };

    // Nothing to read, no tool to call, no event to add: 401 as a wrong token is, and the tool is never called.
    const toolCalls = site.requests.filter((request) => request.path === '/orders').length;
    await http().get(`${path}/knowledge?query=refund`).set(auth).expect(401, unauthenticated);
    await http()
      .post(`${path}/tools/${inbound.toolId}/invoke`)
      .set(auth)
      .send({ arguments: { order_id: 'A-18' } })
      .expect(401, unauthenticated);
    await http()
      .post(`${path}/events`)
      .set(auth)
      .send({ events: [turn(2, 'One more thing')] })
      .expect(401, unauthenticated);
    expect(site.requests.filter((request) => request.path === '/orders')).toHaveLength(toolCalls);

    // The same final write again (the costs rounded as stored, a key of the variables as merged) is answered as
    // before and changes nothing; any other write is refused like a wrong token.
    await http().put(path).set(auth).send(final).expect(200, ended);
    await http()
      .put(path)
      .set(auth)
      .send({ status: 'completed', total_cost: 0.1235, variables: { order: 'A-17' } })
      .expect(200, ended);
    for (const change of [
      { total_cost: 9 },
      { status: 'failed' },
      { transcript: 'Customer: rewritten' },
      { variables: { order: 'A-18' } },
      { evaluation: { resolved: false } },
      { duration: 13 },
    ]) {
      const answer = await http()
        .put(path)
        .set(auth)
        .send({ ...final, ...change });
      expect({ change, status: answer.status, body: answer.body }).toEqual({
        change,
        status: 401,
        body: unauthenticated,
      });
    }
    expect(await readCall()).toEqual(stored);
    const listed = await http().get(`/api/user/calls/${opened.call.id}/events`).set(owner.auth).expect(200);
    expect(listed.body.data.map((event: { seq: number }) => event.seq)).toEqual([1]);
    expect(deliveries('call.ended', opened.call.id)).toHaveLength(1);

    // The deployment's token still writes to the finished call; its status still never moves.
    await http().put(path).set(deployment).send({ total_cost: 0.2 }).expect(200);
    await http().put(path).set(deployment).send({ status: 'failed' }).expect(409);
  });

  it('never lets a call token move its call to another assistant, campaign or lead', async () => {
    const externalId = `call-stays-${Date.now()}`;
    const opened = (await inboundSession(externalId).expect(201)).body.data;
    const auth = bearer(opened.token);
    const path = `/api/internal/calls/${externalId}`;
    const { assistant: elsewhere } = await assistantOnNewNumber({
      name: 'Elsewhere',
      type: 'outbound',
      tool_ids: [inbound.unlinkedToolId],
    });
    const campaign = (await post('campaign', { name: 'Not this call’s', assistant_id: elsewhere.id }).expect(201)).body
      .data;
    const lead = (await post('lead', { phone_number: '+14155550177', campaign_id: campaign.id }).expect(201)).body.data;
    for (const [field, value, message] of [
      ['assistant_id', elsewhere.id, 'The assistant id cannot change.'],
      ['campaign_id', campaign.id, 'The campaign id cannot change.'],
      ['lead_id', lead.id, 'The lead id cannot change.'],
    ] as const) {
      await http()
        .put(path)
        .set(auth)
        .send(frontDeskWrite({ status: 'in-progress', [field]: value }))
        .expect(422, { message, errors: { [field]: [message] } });
    }
    // The other assistant's tool stays out of reach; naming the call's own assistant is fine.
    await http()
      .post(`${path}/tools/${inbound.unlinkedToolId}/invoke`)
      .set(auth)
      .send({ arguments: {} })
      .expect(404, { message: 'Tool not found' });
    const kept = await http()
      .put(path)
      .set(auth)
      .send({ assistant_id: inbound.id, campaign_id: null, lead_id: null, status: 'in-progress' })
      .expect(200);
    expect(kept.body.data).toMatchObject({ assistant_name: 'Front desk', lead_id: null });
    expect(kept.body.data).not.toHaveProperty('campaign_name');
    // The deployment's token may hand the call to another assistant of the same account.
    const moved = await http().put(path).set(deployment).send({ assistant_id: elsewhere.id }).expect(200);
    expect(moved.body.data.assistant_name).toBe('Elsewhere');
  });

  it('finds the dialled number in any form a carrier sends, and keeps every number in E.164', async () => {
    const national = inbound.number.slice(2);
    const forms = [
      national,
      `1${national}`,
      inbound.number.slice(1),
      `+1 (${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}`,
      `(${national.slice(0, 3)}) ${national.slice(3, 6)}-${national.slice(6)}`,
    ];
    const clients = ['+1 415 555 0142', '(415) 555-0143', '14155550144', 'anonymous', '1001'];
    const stored = ['+14155550142', '+14155550143', '+14155550144', 'anonymous', '1001'];
    const ids: number[] = [];
    for (const [index, dialled] of forms.entries()) {
      const opened = await inboundSession(`call-form-${index}-${Date.now()}`, {
        assistant_phone_number: dialled,
        client_phone_number: clients[index],
      });
      expect({ dialled, status: opened.status, assistant: opened.body.data?.assistant.id }).toEqual({
        dialled,
        status: 201,
        assistant: inbound.id,
      });
      expect(opened.body.data.call).toMatchObject({
        assistant_phone_number: inbound.number,
        client_phone_number: stored[index],
      });
      ids.push(opened.body.data.call.id);
    }
    const read = (await http().get(`/api/user/calls/${ids[0]}`).set(owner.auth).expect(200)).body.data;
    expect(read).toMatchObject({ assistant_phone_number: inbound.number, client_phone_number: '+14155550142' });
    const found = await http().get('/api/user/calls').query({ phone_number: '+141555501' }).set(owner.auth).expect(200);
    expect(found.body.data.map((call: { id: number }) => call.id)).toEqual(expect.arrayContaining(ids.slice(0, 3)));
    const [started] = await waitFor(async () => {
      const hooks = deliveries('call.started', ids[0]);
      return hooks.length > 0 ? hooks : undefined;
    });
    expect(started.body.call).toMatchObject({
      assistant_phone_number: inbound.number,
      client_phone_number: '+14155550142',
    });

    // The runtime's writes too: a number that reads as one is stored in E.164, anything else as sent.
    const written = await http()
      .put(`/api/internal/calls/call-form-written-${Date.now()}`)
      .set(deployment)
      .send({
        assistant_id: inbound.id,
        type: 'inbound',
        status: 'in-progress',
        client_phone_number: '+44 20 7183 8750',
        assistant_phone_number: `+1 ${national}`,
      })
      .expect(201);
    expect(written.body.data).toMatchObject({
      client_phone_number: '+442071838750',
      assistant_phone_number: inbound.number,
    });
    await http()
      .put(`/api/internal/calls/${written.body.data.external_id}`)
      .set(deployment)
      .send({ client_phone_number: 'sip:alice@example.com' })
      .expect(200)
      .expect((answer) => expect(answer.body.data.client_phone_number).toBe('sip:alice@example.com'));
  });

  it('reads every country’s numbers as libphonenumber does, the national number after the calling code', async () => {
    const numbers = getCountries()
      .map((country) => getExampleNumber(country, examples))
      .filter((number) => number !== undefined);
    expect(numbers.length).toBeGreaterThan(200);
    const rows: { national: string }[] = await stack.dataSource.query(
      `SELECT national_phone_number(number) AS national FROM unnest($1::text[]) WITH ORDINALITY AS n(number, position)
        ORDER BY position`,
      [numbers.map((number) => number.number)],
    );
    expect(rows.map((row) => row.national)).toEqual(numbers.map((number) => number.nationalNumber));
  });

  it('takes a later write of only what changed: variables merge, a null transcript is the turns', async () => {
    const externalId = `call-partial-${Date.now()}`;
    const opened = (await inboundSession(externalId, { variables: { name: 'Ada' } }).expect(201)).body.data;
    const auth = bearer(opened.token);
    const path = `/api/internal/calls/${externalId}`;
    const at = new Date().toISOString();
    await http()
      .post(`${path}/events`)
      .set(auth)
      .send({
        events: [
          { seq: 1, type: 'transcript', role: 'assistant', text: 'Hello.', at },
          { seq: 2, type: 'transcript', role: 'user', text: 'Order A-17, please.', at },
        ],
      })
      .expect(200);
    const midway = await http()
      .put(path)
      .set(auth)
      .send({ variables: { order: 'A-17' } })
      .expect(200);
    expect(midway.body.data).toMatchObject({
      status: 'in-progress',
      type: 'inbound',
      assistant_name: 'Front desk',
      variables: { name: 'Ada', order: 'A-17' },
    });
    const ended = await http()
      .put(path)
      .set(auth)
      .send({ status: 'completed', duration: 30, total_cost: 0.2, transcript: null, variables: { name: 'Ada L.' } })
      .expect(200);
    expect(ended.body.data).toMatchObject({
      status: 'completed',
      duration: 30,
      total_cost: 0.2,
      client_phone_number: '+14155550199',
      assistant_phone_number: inbound.number,
      transcript: 'Assistant: Hello.\nCustomer: Order A-17, please.',
      variables: { name: 'Ada L.', order: 'A-17' },
    });

    // A call the service has not seen still needs what makes one.
    await http()
      .put(`/api/internal/calls/call-partial-new-${Date.now()}`)
      .set(deployment)
      .send({ status: 'in-progress' })
      .expect(422)
      .expect((answer) =>
        expect(answer.body.errors).toEqual({
          assistant_id: ['The assistant id field is required.'],
          type: ['The type field is required.'],
          client_phone_number: ['The client phone number field is required.'],
          assistant_phone_number: ['The assistant phone number field is required.'],
        }),
      );
  });

  describe('events that cannot be true', () => {
    const now = (minutes = 0) => new Date(Date.now() + minutes * 60_000).toISOString();
    const callWithEvents = async (name: string) => {
      const externalId = `call-${name}-${Date.now()}`;
      const opened = (await inboundSession(externalId).expect(201)).body.data;
      const events = (batch: object[], as = bearer(opened.token)) =>
        http().post(`/api/internal/calls/${externalId}/events`).set(as).send({ events: batch });
      const stored = async () =>
        (await http().get(`/api/user/calls/${opened.call.id}/events`).set(owner.auth).expect(200)).body.data.map(
          (event: { seq: number; text: string }) => [event.seq, event.text],
        );
      return { externalId, callId: opened.call.id as number, events, stored };
    };
    const turn = { seq: 7, type: 'transcript', role: 'user', text: 'Hello', start_ms: 100, end_ms: 900 };
    const note = { seq: 8, type: 'note', text: 'later' };

    it('refuses other content under a recorded seq with 409 naming it, and stores nothing of that batch', async () => {
      const { events, stored } = await callWithEvents('contradicted');
      const first = { ...turn, at: now() };
      await events([first]).expect(200);
      // The same event again is a duplicate.
      expect((await events([first]).expect(200)).body.data).toEqual({ recorded: 0, duplicates: 1 });
      for (const other of [{ text: 'Hullo' }, { end_ms: 901 }, { at: now(1) }, { type: 'note', role: undefined }]) {
        const answer = await events([
          { ...note, at: now() },
          { ...first, ...other },
        ]);
        expect({ other, status: answer.status, body: answer.body }).toEqual({
          other,
          status: 409,
          body: { message: 'Event 7 was already recorded with other content.' },
        });
      }
      expect(await stored()).toEqual([[7, 'Hello']]);

      // Within one batch: the same event twice is one and a duplicate; other content under one seq, a 422 on it.
      const twice = { ...note, seq: 9, at: now() };
      expect((await events([twice, twice]).expect(200)).body.data).toEqual({ recorded: 1, duplicates: 1 });
      await events([
        { ...twice, seq: 10 },
        { ...twice, seq: 10, text: 'other' },
      ]).expect(422, {
        message: 'The events.1.seq field has a duplicate value.',
        errors: { 'events.1.seq': ['The events.1.seq field has a duplicate value.'] },
      });
      expect(await stored()).toEqual([
        [7, 'Hello'],
        [9, 'later'],
      ]);

      // Posts racing with other content under one new seq: one is stored, each other one is a conflict.
      const racing = await Promise.all(
        Array.from({ length: 6 }, (_, index) => events([{ ...note, seq: 20, text: `take ${index}`, at: now() }])),
      );
      expect(racing.map((answer) => answer.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      expect((await stored()).filter(([seq]: [number]) => seq === 20)).toHaveLength(1);
    });

    it('refuses a note with a role, a turn ending before it starts, and a time outside the call, by field', async () => {
      const { events, stored } = await callWithEvents('impossible');
      const valid = { ...note, at: now() };
      for (const [event, field, message] of [
        [
          { ...note, seq: 9, at: now(), role: 'user' },
          'role',
          'The events.1.role field is prohibited unless type is in transcript.',
        ],
        [
          { ...turn, seq: 9, at: now(), start_ms: 500, end_ms: 499 },
          'end_ms',
          'The events.1.end ms field must be greater than or equal to 500.',
        ],
        [
          { ...note, seq: 9, at: now(-30) },
          'at',
          expect.stringMatching(/^The events\.1\.at field must be a date after or equal to /),
        ],
        [
          { ...note, seq: 9, at: now(30) },
          'at',
          expect.stringMatching(/^The events\.1\.at field must be a date before or equal to /),
        ],
      ] as const) {
        const answer = await events([valid, event]);
        expect({ event, status: answer.status, errors: answer.body.errors }).toEqual({
          event,
          status: 422,
          errors: { [`events.1.${field}`]: [message] },
        });
      }
      expect(await stored()).toEqual([]);
      // Within five minutes of the call either side (clocks differ), a time is taken.
      expect((await events([{ ...valid, at: now(-4) }]).expect(200)).body.data.recorded).toBe(1);
    });

    it('takes nothing said after the call ended, from the deployment’s token either', async () => {
      const { externalId, callId, events, stored } = await callWithEvents('ended-earlier');
      await http()
        .put(`/api/internal/calls/${externalId}`)
        .set(deployment)
        .send(frontDeskWrite({ status: 'completed' }))
        .expect(200);
      // The call began an hour ago and ended twenty minutes ago.
      await stack.dataSource.query(
        `UPDATE calls SET created_at = now() - interval '1 hour', ended_at = now() - interval '20 minutes' WHERE id = $1`,
        [callId],
      );
      const late = await events([{ ...note, at: now(-10) }], deployment).expect(422);
      expect(Object.keys(late.body.errors)).toEqual(['events.0.at']);
      await events([{ ...note, at: now(-30) }], deployment).expect(200);
      expect(await stored()).toEqual([[8, 'later']]);
    });

    it('refuses a batch over the cap for its size alone, before looking at its items', async () => {
      const { events } = await callWithEvents('too-many');
      const many = Array.from({ length: 10_000 }, (_, seq) => ({ seq, type: 'transcript', text: 5, at: 'now' }));
      await events(many).expect(422, {
        message: 'The events field must not have more than 100 items.',
        errors: { events: ['The events field must not have more than 100 items.'] },
      });
    });
  });

  it('refuses hostile bodies with 422 and stores nothing', async () => {
    const opened = (await inboundSession(`call-hostile-${Date.now()}`).expect(201)).body.data;
    const auth = bearer(opened.token);
    const events = (body: unknown) =>
      http()
        .post(`/api/internal/calls/${opened.call.external_id}/events`)
        .set(auth)
        .send(body as object);
    const valid = { seq: 1, type: 'transcript', role: 'user', text: 'hi', at: new Date().toISOString() };
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
    // The write's route answers a plain "not found" for it, as documented, not a wrong method.
    await http()
      .put('/api/internal/calls/no%20such')
      .set(deployment)
      .send({ status: 'completed' })
      .expect(404, { message: 'Not found.' });
    // An id no call could have answers as a missing call on the session's route too.
    await http().post('/api/internal/calls/no%20such/session').set(deployment).send({ type: 'outbound' }).expect(404, {
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
          { seq: 1, type: 'transcript', role: 'assistant', text: 'Hi Grace.', at: new Date().toISOString() },
          { seq: 2, type: 'transcript', role: 'user', text: 'Renew it, please.', at: new Date().toISOString() },
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
