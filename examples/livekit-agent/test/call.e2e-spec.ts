import { initializeLogger, llm, voice } from '@livekit/agents';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LocalSite, startLocalSite } from '../../../libs/outbound-http/test/local-site';
import { createAccount, sipTrunkRequest, type TestAccount } from '../../../test/support/factories';
import { operatorCommand } from '../../../test/support/operator-cli';
import {
  campaignDials,
  createFaqKnowledgebase,
  orderToolRequest,
  REFUNDS_PASSAGE,
  renewalsAssistantRequest,
  startRuntimeSite,
  verifiesWebhook,
  webhookDeliveries,
} from '../../../test/support/runtime-fixtures';
import { type Stack, startStack } from '../../../test/support/stack';
import { JobQueue, Jobs } from '../../../libs/jobs/src';
import { CALL_CONTROL, type LocalCallControl } from '@app/telephony';
import { waitFor, waitForJobResult } from '../../../test/support/wait-for';
import { KNOWLEDGE_TOOL } from '../src/assistant-agent.js';
import { runCall } from '../src/call.js';
import { runConsultation } from '../src/consultation.js';
import { readDispatch } from '../src/dispatch.js';
import { type Pipeline, pipelineOf } from '../src/models.js';
import { EVALUATION_TOOL } from '../src/post-call.js';
import { ServiceClient } from '../src/service-client.js';
import { readSettings } from '../src/settings.js';
import { TranscriptStream } from '../src/transcript-stream.js';
import { FakeLine } from './fake-line.js';
import { startLossyProxy } from './lossy-proxy.js';
import { ScriptedLLM } from './scripted-llm.js';

const RUNTIME_TOKEN = 'runtime-token-for-the-livekit-agent-0123456789';
const TOOL_SECRET = 'sk-live-tool-secret-for-the-agent-test';
const CALLER = '+14155550199';

/** The agent's own models, as a worker configured for Deepgram and OpenAI reads them. */
const AGENT_MODELS = readSettings({
  VOICE_SERVICE_URL: 'http://127.0.0.1',
  RUNTIME_API_TOKEN: RUNTIME_TOKEN,
  DEEPGRAM_API_KEY: 'dg',
  OPENAI_API_KEY: 'sk',
  LIVEKIT_URL: 'ws://127.0.0.1:7880',
  LIVEKIT_API_KEY: 'devkey',
  LIVEKIT_API_SECRET: 'secret',
}).models;
/** A session the way the agent's production code makes one, minus audio: the scripted model and nothing else. */
const textSession = (model: llm.LLM) => new voice.AgentSession({ llm: model, vad: null, turnDetection: 'manual' });

/** A loopback port nothing listens on: a service that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Everything the conversation's messages said, in order: what a caller and the assistant heard. */
function conversation(session: voice.AgentSession): { role: string; text: string }[] {
  return session.history.items.flatMap((item) =>
    item.type === 'message' && (item.role === 'user' || item.role === 'assistant')
      ? [{ role: item.role, text: item.textContent ?? '' }]
      : [],
  );
}

describe('The LiveKit agent, against the real API and worker', () => {
  let stack: Stack;
  let site: LocalSite;
  let owner: TestAccount;
  let service: ServiceClient;
  let serviceUrl: string;
  let languages: { id: number; name: string; iso_2: string }[];

  const api = (path: string) => `/api/user/${path}`;
  const post = (path: string, body: object) => stack.http.post(api(path)).set(owner.auth).send(body);

  beforeAll(async () => {
    initializeLogger({ pretty: false, level: 'silent' });
    site = await startRuntimeSite();
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, JOB_RETRY_DELAY_MS: '100' } });
    // The agent talks HTTP to the service, as it would across the network.
    await new Promise<void>((resolve) => stack.api.getHttpServer().listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(stack.api.getHttpServer().address() as AddressInfo).port}`;
    service = new ServiceClient({ baseUrl: serviceUrl }, RUNTIME_TOKEN);
    owner = await createAccount(stack);
    languages = (await stack.http.get(api('assistants/languages')).set(owner.auth)).body;
  }, 60_000);

  afterAll(async () => {
    // The agents run in this process, and the connections their control streams left would hold the server's close
    // for about 4 s a call (their keep-alive); a deployed agent runs elsewhere. Measured: 60 s without, 36 ms with.
    stack?.api.getHttpServer().closeAllConnections();
    await stack?.close();
    await site?.close();
  });

  describe('an inbound call', () => {
    let assistant: { id: number; webhookSecret: string; number: string; toolId: number };
    let english: { id: number; name: string };
    let second: { id: number; name: string; iso_2: string };

    beforeAll(async () => {
      english = languages.find((language) => language.iso_2 === 'en')!;
      second = languages.find((language) => language.iso_2 === 'de') ?? languages.find((l) => l.iso_2 !== 'en')!;
      const knowledgebaseId = await createFaqKnowledgebase(stack, owner);
      const tool = (await post('tools', orderToolRequest(site.origin, TOOL_SECRET)).expect(201)).body.data;
      const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
      const created = (
        await post('assistant', {
          name: 'Front desk',
          type: 'inbound',
          language_id: english.id,
          secondary_language_ids: [second.id],
          phone_number_id: number.id,
          knowledgebase_id: knowledgebaseId,
          tool_ids: [tool.id],
          timezone: 'Europe/Berlin',
          model: { provider: 'openai', model: 'gpt-4.1', temperature: 0.3 },
          voice: { provider: 'openai', voice_id: 'coral', speed: 1.1 },
          initial_message: 'Hello, {{company}} here. How can I help?',
          system_prompt: 'You answer the phone for {{company}}. Be brief.',
          variables: { company: 'Acme' },
          post_call_schema: [
            { name: 'order_id', type: 'string', description: 'The order the caller asked about' },
            { name: 'refund_asked', type: 'boolean', description: 'Whether the caller asked about a refund' },
            { name: 'satisfaction', type: 'integer', description: 'How satisfied the caller sounded, 1 to 5' },
          ],
          webhook_url: `${site.origin}/hook`,
          is_webhook_active: true,
          max_duration: 600,
        }).expect(201)
      ).body.data;
      const webhookSecret = (await stack.http.get(api(`assistant/${created.id}`)).set(owner.auth)).body.data
        .webhook_secret;
      assistant = { id: created.id, webhookSecret, number: number.phone_number, toolId: tool.id };
    }, 60_000);

    it('runs the assistant from its session: tools through the service, knowledge, turns and the final write', async () => {
      // The inbound dispatch rule's metadata, in the room LiveKit made for the call.
      const room = `call-_${CALLER}_Ab3dEf5hJk7m`;
      const dispatch = readDispatch(
        JSON.stringify({
          assistant_id: assistant.id,
          phone_number_id: 1,
          phone_number: assistant.number,
          external_id: '{room}',
        }),
        room,
      );
      expect(dispatch).toEqual({ externalId: room, type: 'inbound', dialledNumber: assistant.number });

      const model = new ScriptedLLM([
        // The caller asks about an order: the model calls the assistant's tool...
        () => ({ toolCalls: [{ name: 'check_order', args: { order_id: 'A-17', quantity: 2 } }] }),
        // ...and answers from what the tool's endpoint said.
        (request) => ({ text: `Order ${JSON.parse(ScriptedLLM.lastToolOutput(request)).body.order} has shipped.` }),
        // The caller asks about refunds: the model looks it up...
        () => ({ toolCalls: [{ name: KNOWLEDGE_TOOL, args: { query: 'when is my refund paid' } }] }),
        // ...and reads the passage out.
        (request) => ({ text: JSON.parse(ScriptedLLM.lastToolOutput(request))[0].text }),
        // After the call: the post-call schema, one field of the wrong type, one the schema does not have.
        () => ({
          toolCalls: [
            {
              name: EVALUATION_TOOL,
              args: { order_id: 'A-17', refund_asked: true, satisfaction: 'high', mood: 'calm' },
            },
          ],
        }),
      ]);
      const line = new FakeLine({ client: CALLER, trunk: null });
      // The pipeline the agent would build for the session's assistant; the scripted model stands in for it.
      let pipeline: Pipeline | undefined;
      const finished = runCall({
        dispatch,
        line,
        service,
        createSession: (sessionAssistant) => {
          pipeline = pipelineOf(AGENT_MODELS, sessionAssistant);
          return textSession(model);
        },
        unavailableMessage: 'unused',
      });
      const session = await line.running();
      // The caller hears the first message before saying anything.
      await waitFor(async () => (conversation(session).length > 0 ? true : undefined));
      // The assistant's own LLM and voice, the agent's transcriber, in the assistant's two languages.
      expect(pipeline).toEqual({
        stt: { provider: 'deepgram', model: 'nova-3', language: 'multi', languages: ['en', second.iso_2] },
        llm: { provider: 'openai', model: 'gpt-4.1', temperature: 0.3 },
        tts: { provider: 'openai', model: 'gpt-4o-mini-tts', voice: 'coral', speed: 1.1, language: 'en' },
        ignored: [],
      });

      // The agent, from the session alone.
      const instructions = String(line.agent!.instructions);
      expect(instructions).toContain('You answer the phone for Acme. Be brief.');
      expect(instructions).toContain(
        `Speak ${english.name}. If the caller speaks ${second.name}, answer in that language.`,
      );
      expect(instructions).toMatch(/It is now .* \(Europe\/Berlin\)\./);
      expect(instructions).toContain(`look them up with ${KNOWLEDGE_TOOL}`);

      const asked = session.run({ userInput: 'Where is my order A-17?' });
      await asked.wait();
      asked.expect.nextEvent().isFunctionCall({ name: 'check_order', args: { order_id: 'A-17', quantity: 2 } });
      asked.expect.nextEvent().isFunctionCallOutput();
      asked.expect.nextEvent().isMessage({ role: 'assistant' });

      // What the model was offered: the assistant's tool with the service's JSON Schema as it is, the look-up, and the
      // session's built-in actions (no transfer: this assistant has no destinations).
      const offered = model.requests[0].tools;
      expect(Object.keys(offered).sort()).toEqual(['check_order', 'end_call', KNOWLEDGE_TOOL, 'send_dtmf']);
      expect(offered.check_order.description).toBe('Looks an order up by its number');
      expect(llm.toJsonSchema(offered.check_order.parameters)).toEqual({
        type: 'object',
        properties: {
          order_id: { type: 'string', description: 'The order number' },
          quantity: { type: 'integer', description: 'How many' },
        },
        required: ['order_id'],
        additionalProperties: false,
      });
      expect(llm.toJsonSchema(offered[KNOWLEDGE_TOOL].parameters)).toMatchObject({ required: ['query'] });

      // The tool call reached the endpoint through the service, with the secret only the service holds.
      const sent = site.requests.filter((request) => request.path === '/orders');
      expect(sent).toHaveLength(1);
      expect(sent[0].headers['x-api-key']).toBe(TOOL_SECRET);
      expect(JSON.parse(sent[0].body)).toEqual({ order_id: 'A-17', quantity: 2, company: 'Acme' });

      const refund = session.run({ userInput: 'When do I get my refund?' });
      await refund.wait();
      expect(ScriptedLLM.lastToolOutput(model.requests[3])).toContain('fourteen days');

      expect(conversation(session)).toEqual([
        { role: 'assistant', text: 'Hello, Acme here. How can I help?' },
        { role: 'user', text: 'Where is my order A-17?' },
        { role: 'assistant', text: 'Order A-17 has shipped.' },
        { role: 'user', text: 'When do I get my refund?' },
        { role: 'assistant', text: REFUNDS_PASSAGE },
      ]);
      line.callerHangsUp();
      await finished;
      expect(line.hangUps).toBe(1);
      // The evaluation was asked for with the post-call schema as the function's arguments.
      expect(model.requests[4].toolChoice).toEqual({ type: 'function', function: { name: EVALUATION_TOOL } });
      expect(llm.toJsonSchema(model.requests[4].tools[EVALUATION_TOOL].parameters)).toMatchObject({
        properties: {
          order_id: { type: 'string' },
          refund_asked: { type: 'boolean' },
          satisfaction: { type: 'integer' },
        },
      });

      // What the owner sees: the call, its turns in order and the tool call.
      const read = (await stack.http.get(api('calls')).query({ assistant_id: assistant.id }).set(owner.auth)).body.data;
      const callId: number = read.find((call: { external_id: string }) => call.external_id === room).id;
      const ended = (
        await stack.http
          .get(api(`calls/${callId}`))
          .set(owner.auth)
          .expect(200)
      ).body.data;
      expect(ended).toMatchObject({
        type: 'inbound',
        status: 'ended_by_customer',
        answered_by: 'human',
        client_phone_number: CALLER,
        evaluation: { order_id: 'A-17', refund_asked: true },
      });
      expect(ended.evaluation).not.toHaveProperty('satisfaction');
      expect(ended.evaluation).not.toHaveProperty('mood');
      expect(ended.transcript.split('\n')).toEqual([
        'Assistant: Hello, Acme here. How can I help?',
        'Customer: Where is my order A-17?',
        'Assistant: Order A-17 has shipped.',
        'Customer: When do I get my refund?',
        `Assistant: ${REFUNDS_PASSAGE}`,
      ]);
      const events = (
        await stack.http
          .get(api(`calls/${callId}/events`))
          .set(owner.auth)
          .expect(200)
      ).body.data;
      expect(events.filter((event: { type: string }) => event.type === 'transcript')).toEqual(
        ['assistant', 'user', 'assistant', 'user', 'assistant'].map((role, index) =>
          expect.objectContaining({ seq: index + 1, role }),
        ),
      );
      expect(events.filter((event: { type: string }) => event.type === 'tool_call')).toEqual([
        expect.objectContaining({ tool_id: assistant.toolId, name: 'check_order', status: 200 }),
      ]);

      // The signed call.ended webhook carries the same turns and tool call.
      const [end] = await waitFor(async () => {
        const found = webhookDeliveries(site, 'call.ended', callId);
        return found.length > 0 ? found : undefined;
      });
      expect(verifiesWebhook(assistant.webhookSecret, end.request.headers, end.request.body)).toBe(true);
      expect(end.body.call.turns.map((turn: { seq: number }) => turn.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(end.body.call.tool_calls).toEqual([expect.objectContaining({ name: 'check_order', status: 200 })]);
      expect(end.body.call).toMatchObject({ status: 'ended_by_customer', evaluation: { order_id: 'A-17' } });
      expect(end.request.body).not.toContain(TOOL_SECRET);
    });

    it('obeys its owner: says their words as they are, takes their instruction, and hangs up when they do', async () => {
      const room = `call-_${CALLER}_Owner0Steers`;
      const dispatch = readDispatch(
        JSON.stringify({ assistant_id: assistant.id, phone_number: assistant.number, external_id: '{room}' }),
        room,
      );
      const model = new ScriptedLLM([
        // The caller's question, answered with the owner's instruction in the model's context.
        () => ({ text: 'We have a table on the terrace at eight.' }),
        // After the call: the post-call schema.
        () => ({ toolCalls: [{ name: EVALUATION_TOOL, args: { refund_asked: false } }] }),
      ]);
      const line = new FakeLine({ client: CALLER, trunk: null });
      const finished = runCall({
        dispatch,
        line,
        service,
        createSession: () => textSession(model),
        unavailableMessage: 'unused',
      });
      const session = await line.running();
      await waitFor(async () => (conversation(session).length > 0 ? true : undefined));
      const callId = await waitFor(async () => {
        const calls = (await stack.http.get(api('calls')).query({ assistant_id: assistant.id }).set(owner.auth)).body
          .data as { id: number; external_id: string }[];
        return calls.find((call) => call.external_id === room)?.id;
      });
      const steer = (action: string, body?: object) =>
        stack.http
          .post(api(`calls/${callId}/${action}`))
          .set(owner.auth)
          .send(body)
          .expect(202);

      await steer('say', { text: 'Our manager will call you back today.' });
      await waitFor(async () =>
        conversation(session).some((turn) => turn.text === 'Our manager will call you back today.') ? true : undefined,
      );
      await steer('instruct', { text: 'Offer the terrace.' });
      await waitFor(async () =>
        line.agent!.chatCtx.items.some(
          (item) => item.type === 'message' && (item.textContent ?? '').includes('Offer the terrace.'),
        )
          ? true
          : undefined,
      );
      const asked = session.run({ userInput: 'Is there a table for tonight?' });
      await asked.wait();
      expect(
        model.requests[0].chatCtx.items.some(
          (item) =>
            item.type === 'message' &&
            item.role === 'system' &&
            (item.textContent ?? '').includes('Offer the terrace.'),
        ),
      ).toBe(true);

      await steer('hangup');
      await finished;
      expect(line.hangUps).toBe(1);
      expect(conversation(session)).toEqual([
        { role: 'assistant', text: 'Hello, Acme here. How can I help?' },
        { role: 'assistant', text: 'Our manager will call you back today.' },
        { role: 'user', text: 'Is there a table for tonight?' },
        { role: 'assistant', text: 'We have a table on the terrace at eight.' },
      ]);
      const ended = (
        await stack.http
          .get(api(`calls/${callId}`))
          .set(owner.auth)
          .expect(200)
      ).body.data;
      expect(ended.status).toBe('ended');
      // The agent ended the call itself within the grace: the service has nothing to enforce at the provider.
      const controlId = (
        await stack.dataSource.query(`SELECT id FROM call_events WHERE call_id = $1 AND data->>'action' = 'hangup'`, [
          callId,
        ])
      )[0].id;
      const outcome = await waitForJobResult(
        stack.api.get(JobQueue).queue(Jobs.enforceOwnerHangup.queue),
        `owner-hangup-${controlId}`,
      );
      expect(outcome).toEqual({ status: 'confirmed' });
      expect(await stack.dataSource.query(`SELECT 1 FROM local_call_control_requests WHERE room = $1`, [room])).toEqual(
        [],
      );
    }, 30_000);

    it('tells the model a tool that gave no answer by the kind of failure, never where it was sent', async () => {
      const port = await closedPort();
      const tool = (
        await post('tools', {
          name: 'check_stock',
          description: 'Looks up the stock',
          endpoint: `http://127.0.0.1:${port}/stock/{{company}}?key=STOCKSECRET`,
          method: 'GET',
        }).expect(201)
      ).body.data;
      const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
      await post('assistant', {
        name: 'Stock desk',
        type: 'inbound',
        initial_message: 'Hello, stock desk.',
        language_id: english.id,
        phone_number_id: number.id,
        tool_ids: [tool.id],
        variables: { company: 'Acme' },
      }).expect(201);
      const model = new ScriptedLLM([
        () => ({ toolCalls: [{ name: 'check_stock', args: {} }] }),
        () => ({ text: 'I cannot check that right now.' }),
      ]);
      const line = new FakeLine({ client: CALLER, trunk: null });
      const finished = runCall({
        dispatch: {
          externalId: `call-_${CALLER}_stock${Date.now()}`,
          type: 'inbound',
          dialledNumber: number.phone_number,
        },
        line,
        service,
        createSession: () => textSession(model),
        unavailableMessage: 'unused',
      });
      const session = await line.running();
      const asked = session.run({ userInput: 'Is the blue one in stock?' });
      await asked.wait();
      const told = ScriptedLLM.lastToolOutput(model.requests[1]);
      // The kind of failure, in a sentence of the agent's own.
      expect(told).toMatch(/^check_stock could not be reached just now \(network\)\. /);
      expect(told).not.toMatch(/127\.0\.0\.1|STOCKSECRET|\/stock|Acme/);
      line.callerHangsUp();
      await finished;
    });

    it('sends turns whose answer was lost again under the same seq, and the service keeps each once', async () => {
      // The service stores the first two events posts, and both answers are lost on the way back.
      let lost = 0;
      const proxy = await startLossyProxy(
        serviceUrl,
        (method, path) => method === 'POST' && path.endsWith('/events') && lost++ < 2,
      );
      try {
        const lossy = new ServiceClient(
          { baseUrl: proxy.origin, retry: { attempts: 2, firstDelayMs: 10 } },
          RUNTIME_TOKEN,
        );
        const externalId = `call-_${CALLER}_lossy${Date.now()}`;
        const opened = await lossy.openSession(externalId, {
          type: 'inbound',
          client_phone_number: CALLER,
          assistant_phone_number: assistant.number,
        });
        const stream = new TranscriptStream(lossy.forCall(opened), Date.now());
        stream.addMessage(llm.ChatMessage.create({ role: 'assistant', content: 'Hello, Acme here.' }));
        stream.addMessage(llm.ChatMessage.create({ role: 'user', content: 'Hi, I have a question.' }));
        stream.note('Caller on a mobile line');
        await stream.close();

        const posted = proxy.forwarded
          .filter((request) => request.path.endsWith('/events'))
          .map((request) => JSON.parse(request.body).events.map((event: { seq: number }) => event.seq));
        // The first turn went out more than once (the client's retry, then the stream's), always as seq 1.
        expect(posted.filter((seqs) => seqs.includes(1)).length).toBeGreaterThanOrEqual(3);
        expect(new Set(posted.flat())).toEqual(new Set([1, 2, 3]));
        const events = (
          await stack.http
            .get(api(`calls/${opened.call.id}/events`))
            .set(owner.auth)
            .expect(200)
        ).body.data;
        expect(events).toEqual([
          expect.objectContaining({ seq: 1, type: 'transcript', role: 'assistant', text: 'Hello, Acme here.' }),
          expect.objectContaining({ seq: 2, type: 'transcript', role: 'user', text: 'Hi, I have a question.' }),
          expect.objectContaining({ seq: 3, type: 'note', text: 'Caller on a mobile line' }),
        ]);
        // Nothing in what went over the wire carries the call token outside its header.
        expect(JSON.stringify(proxy.forwarded)).not.toContain(opened.token);
      } finally {
        await proxy.close();
      }
    });

    it('says so and hangs up when the service cannot say what to run, without a word from the model', async () => {
      const apologies = [
        // The service is down.
        new ServiceClient(
          { baseUrl: `http://127.0.0.1:${await closedPort()}`, retry: { attempts: 2, firstDelayMs: 10 } },
          RUNTIME_TOKEN,
        ),
        // The service is up, but no assistant answers the number dialled.
        service,
      ];
      for (const client of apologies) {
        const model = new ScriptedLLM([]);
        const line = new FakeLine({ client: CALLER, trunk: '+14155550000' });
        const asked: (string | null)[] = [];
        await runCall({
          dispatch: readDispatch(JSON.stringify({ external_id: '{room}' }), `call-_${CALLER}_nobody${Date.now()}`),
          line,
          service: client,
          createSession: (forAssistant) => {
            asked.push(forAssistant?.name ?? null);
            return textSession(model);
          },
          unavailableMessage: 'Sorry, we cannot take your call right now.',
        });
        expect(asked).toEqual([null]);
        expect(conversation(line.session!)).toEqual([
          { role: 'assistant', text: 'Sorry, we cannot take your call right now.' },
        ]);
        expect(model.requests).toHaveLength(0);
        expect(line.hangUps).toBe(1);
      }
    });
  });

  describe('an inbound call the owner’s ring-time hook refuses', () => {
    it('says the owner’s words and hangs up, without a word from the model, and the service ends the call', async () => {
      const refusal = 'Sorry, this number cannot take your call.';
      const refusing = await startLocalSite({
        '/ring': (_request, response) =>
          response
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ reject: { message: refusal } })),
      });
      try {
        const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
        const screened = (
          await post('assistant', {
            name: 'Screened line',
            type: 'inbound',
            language_id: languages[0].id,
            phone_number_id: number.id,
          }).expect(201)
        ).body.data;
        await stack.http
          .put(api(`phone-numbers/${number.id}`))
          .set(owner.auth)
          .send({ server_url: `${refusing.origin}/ring` })
          .expect(200);
        const room = `call-_${CALLER}_Screened${Date.now()}`;
        const model = new ScriptedLLM([]);
        const line = new FakeLine({ client: CALLER, trunk: null });
        const asked: (string | null)[] = [];
        await runCall({
          dispatch: readDispatch(
            JSON.stringify({
              assistant_id: screened.id,
              phone_number_id: number.id,
              phone_number: number.phone_number,
              external_id: '{room}',
            }),
            room,
          ),
          line,
          service,
          createSession: (forAssistant) => {
            asked.push(forAssistant?.name ?? null);
            return textSession(model);
          },
          unavailableMessage: 'Sorry, we cannot take your call right now.',
        });
        expect(asked).toEqual([null]);
        expect(conversation(line.session!)).toEqual([{ role: 'assistant', text: refusal }]);
        expect(model.requests).toHaveLength(0);
        expect(line.hangUps).toBe(1);
        const calls = (
          await stack.http.get(api('calls')).query({ assistant_id: screened.id }).set(owner.auth).expect(200)
        ).body.data;
        expect(calls).toEqual([
          expect.objectContaining({
            external_id: room,
            status: 'ended_by_assistant',
            assistant_request: expect.objectContaining({ status: 'rejected' }),
          }),
        ]);
        expect(refusing.requests).toHaveLength(1);
      } finally {
        await refusing.close();
      }
    });
  });

  describe('an inbound call beyond the account’s limit of calls in progress', () => {
    it('refuses the caller politely and hangs up, asking the service once, without a word from the model', async () => {
      // An account of its own, which an operator allowed one call at a time, with one call under way.
      const busy = await createAccount(stack);
      expect(
        await operatorCommand(stack, ['accounts:max-concurrent-calls', '--user', busy.email, '--limit', '1']),
      ).toMatchObject({ code: 0 });
      const number = (
        await stack.http.post(api('phone-numbers/sip-trunks')).set(busy.auth).send(sipTrunkRequest()).expect(201)
      ).body.data;
      const desk = (
        await stack.http
          .post(api('assistant'))
          .set(busy.auth)
          .send({ name: 'Busy desk', type: 'inbound', language_id: languages[0].id, phone_number_id: number.id })
          .expect(201)
      ).body.data;
      await stack.http
        .post(`/api/internal/calls/call-in-progress-${Date.now()}/session`)
        .set({ Authorization: `Bearer ${RUNTIME_TOKEN}` })
        .send({ type: 'inbound', client_phone_number: '+14155550111', assistant_phone_number: number.phone_number })
        .expect(201);

      const proxy = await startLossyProxy(serviceUrl, () => false);
      try {
        const model = new ScriptedLLM([]);
        const line = new FakeLine({ client: CALLER, trunk: null });
        const asked: (string | null)[] = [];
        const room = `call-_${CALLER}_Busy${Date.now()}`;
        await runCall({
          dispatch: readDispatch(
            JSON.stringify({
              assistant_id: desk.id,
              phone_number_id: number.id,
              phone_number: number.phone_number,
              external_id: '{room}',
            }),
            room,
          ),
          line,
          service: new ServiceClient({ baseUrl: proxy.origin }, RUNTIME_TOKEN),
          createSession: (forAssistant) => {
            asked.push(forAssistant?.name ?? null);
            return textSession(model);
          },
          unavailableMessage: 'unused',
        });
        expect(asked).toEqual([null]);
        expect(conversation(line.session!)).toEqual([
          { role: 'assistant', text: 'Sorry, all our lines are busy right now. Please call again in a few minutes.' },
        ]);
        expect(model.requests).toHaveLength(0);
        expect(line.hangUps).toBe(1);
        // A refusal the service answers at once is not retried: the caller would only wait longer for it.
        expect(proxy.forwarded.map(({ method, path }) => `${method} ${path}`)).toEqual([
          `POST /api/internal/calls/${encodeURIComponent(room)}/session`,
        ]);
        // Nothing was recorded of the refused call; the call in progress goes on.
        const calls = (await stack.http.get(api('calls')).set(busy.auth).expect(200)).body.data;
        expect(calls.map((call: { external_id: string }) => call.external_id)).not.toContain(room);
        expect(calls).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });
  });

  describe('a campaign call', () => {
    it('runs the call the dialer placed with the lead’s variables and ends it at max_duration', async () => {
      const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
      const created = (
        await post('assistant', renewalsAssistantRequest(languages[0].id, number.id, { max_duration: 10 })).expect(201)
      ).body.data;
      const campaign = (
        await post('campaign', { name: 'Renewals', assistant_id: created.id, phone_number_ids: [number.id] }).expect(
          201,
        )
      ).body.data;
      const leads = await Promise.all(
        [
          { phone_number: '+14155550142', variables: { name: 'Grace', plan: 'premium' } },
          { phone_number: '+14155550143', variables: { name: 'Alan' } },
        ].map(async (lead) => (await post('lead', { ...lead, campaign_id: campaign.id }).expect(201)).body.data),
      );
      await post('campaigns/update-status', { campaign_id: campaign.id, action: 'start' }).expect(200);

      // What the dialer dispatched: LiveKit would hand the agent this metadata, in the room named after the call.
      const dials = await campaignDials(stack, campaign.id, 2);
      const dialFor = (phone: string) => dials.find((dial) => dial.to === phone)!;
      const run = (phone: string, line: FakeLine, model: ScriptedLLM) => {
        const { metadata } = dialFor(phone);
        const dispatch = readDispatch(JSON.stringify(metadata), String(metadata.external_id));
        expect(dispatch.type).toBe('outbound');
        return runCall({
          dispatch,
          line,
          service,
          createSession: () => textSession(model),
          unavailableMessage: 'unused',
        });
      };

      // Grace picks up (the line's answering machine detection says a person); Alan never does.
      const answered = new FakeLine({ client: '+14155550142', trunk: number.phone_number }, { answeredBy: 'human' });
      const unanswered = new FakeLine(
        { client: '+14155550143', trunk: number.phone_number },
        { connection: { status: 'no-answer' } },
      );
      const model = new ScriptedLLM([]);
      const started = Date.now();
      const both = Promise.all([
        run('+14155550142', answered, model),
        run('+14155550143', unanswered, new ScriptedLLM([])),
      ]);
      // Once picked up, the call is under way for its owner too.
      await waitFor(async () => {
        const calls = (await stack.http.get(api('calls')).query({ campaign_id: campaign.id }).set(owner.auth)).body;
        return calls.data.some((call: { status: string }) => call.status === 'in-progress') ? true : undefined;
      });
      await both;
      expect(Date.now() - started).toBeGreaterThanOrEqual(10_000);
      expect(conversation(answered.session!)).toEqual([
        { role: 'assistant', text: 'Hi Grace, this is Acme about your premium plan.' },
      ]);
      expect(model.requests).toHaveLength(0);
      expect([answered.hangUps, unanswered.hangUps]).toEqual([1, 1]);

      const calls = (await stack.http.get(api('calls')).query({ campaign_id: campaign.id }).set(owner.auth)).body.data;
      const callOf = (phone: string) =>
        calls.find((call: { client_phone_number: string }) => call.client_phone_number === phone);
      expect(callOf('+14155550142')).toMatchObject({
        status: 'ended_by_assistant',
        answered_by: 'human',
        lead_id: leads[0].id,
      });
      expect(callOf('+14155550142').duration).toBeGreaterThanOrEqual(10);
      expect(callOf('+14155550143')).toMatchObject({ status: 'no-answer', answered_by: 'unknown', duration: 0 });
      const events = (
        await stack.http
          .get(api(`calls/${callOf('+14155550142').id}/events`))
          .set(owner.auth)
          .expect(200)
      ).body.data;
      expect(events).toEqual([
        expect.objectContaining({ seq: 1, type: 'transcript', role: 'assistant' }),
        expect.objectContaining({ seq: 2, type: 'note', text: expect.stringContaining('max_duration of 10 s') }),
      ]);
      const lead = async (id: number) => (await stack.http.get(api(`leads/${id}`)).set(owner.auth)).body.data.status;
      expect(await lead(leads[0].id)).toBe('completed');
      expect(await lead(leads[1].id)).toMatch(/^(rescheduled|reached-max-retries)$/);
    }, 40_000);
  });

  describe('a web call', () => {
    it('answers the person in the browser as it answers a caller: the session by the call’s id, no numbers', async () => {
      const created = (
        await post('assistant', {
          name: 'Web desk',
          type: 'inbound',
          language_id: languages.find((language) => language.iso_2 === 'en')!.id,
          initial_message: 'Hello {{name}}, you are talking to the web desk.',
          variables: { name: 'there' },
        }).expect(201)
      ).body.data;
      const started = (await post(`assistant/${created.id}/web-call`, { variables: { name: 'Ada' } }).expect(201)).body
        .data;
      // What the service dispatched into the call's room (the local adapter records it): LiveKit hands the agent this.
      const [{ request }] = await stack.dataSource.query(
        `SELECT request FROM local_call_control_requests WHERE room = $1 AND operation = 'startWebCall'`,
        [started.room],
      );
      const dispatch = readDispatch(JSON.stringify(request.metadata), started.room);
      expect(dispatch).toEqual({ externalId: started.call.external_id, type: 'web', dialledNumber: null });

      const model = new ScriptedLLM([() => ({ text: 'We are open from nine to five.' })]);
      // A browser's participant: no SIP attributes, so no numbers.
      const line = new FakeLine({ client: null, trunk: null });
      const finished = runCall({
        dispatch,
        line,
        service,
        createSession: () => textSession(model),
        unavailableMessage: 'unused',
      });
      const session = await line.running();
      await waitFor(async () => (conversation(session).length > 0 ? true : undefined));
      // Once the agent hears the person, the call is under way for its owner.
      const read = async () =>
        (
          await stack.http
            .get(api(`calls/${started.call.id}`))
            .set(owner.auth)
            .expect(200)
        ).body.data;
      await waitFor(async () => ((await read()).status === 'in-progress' ? true : undefined));
      await session.run({ userInput: 'When are you open?' }).wait();
      line.callerHangsUp();
      await finished;

      expect(conversation(session)).toEqual([
        { role: 'assistant', text: 'Hello Ada, you are talking to the web desk.' },
        { role: 'user', text: 'When are you open?' },
        { role: 'assistant', text: 'We are open from nine to five.' },
      ]);
      expect(await read()).toMatchObject({
        type: 'web',
        status: 'ended_by_customer',
        ended_reason: 'customer_hangup',
        answered_by: 'human',
        client_phone_number: null,
        assistant_phone_number: null,
        transcript: expect.stringContaining('Customer: When are you open?'),
      });
      expect(line.hangUps).toBe(1);
    });
  });

  describe('call control', () => {
    let assistantId: number;
    let number: string;
    let calls = 0;

    beforeAll(async () => {
      const trunk = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
      number = trunk.phone_number;
      assistantId = (
        await post('assistant', {
          name: 'Help desk',
          type: 'inbound',
          language_id: languages.find((language) => language.iso_2 === 'en')!.id,
          phone_number_id: trunk.id,
          initial_message: 'Help desk, how can I help?',
          transfer_destinations: [
            { name: 'billing_desk', description: 'Invoices', number: '+14155550142', message: 'Putting you through.' },
            { name: 'sales_lead', description: 'Buying', number: '+14155550177', mode: 'warm' },
          ],
          end_call: { message: 'Thanks for calling, goodbye!' },
        }).expect(201)
      ).body.data.id;
    });

    /** An inbound call of the help desk run by the agent with `script`, and what the owner then sees of it. */
    const helpDeskCall = (script: ConstructorParameters<typeof ScriptedLLM>[0]) => {
      const room = `call-_${CALLER}_control${++calls}`;
      const model = new ScriptedLLM(script);
      const line = new FakeLine({ client: CALLER, trunk: null });
      const finished = runCall({
        dispatch: { externalId: room, type: 'inbound', dialledNumber: number },
        line,
        service,
        createSession: () => textSession(model),
        unavailableMessage: 'unused',
      });
      const ownerCall = async () => {
        const listed = (await stack.http.get(api('calls')).query({ assistant_id: assistantId }).set(owner.auth)).body;
        const id: number = listed.data.find((call: { external_id: string }) => call.external_id === room).id;
        const call = (
          await stack.http
            .get(api(`calls/${id}`))
            .set(owner.auth)
            .expect(200)
        ).body.data;
        const events = (
          await stack.http
            .get(api(`calls/${id}/events`))
            .set(owner.auth)
            .expect(200)
        ).body.data;
        return { call, events };
      };
      return { room, model, line, finished, ownerCall };
    };

    it('offers the built-in actions and hands the caller over with a cold transfer through the service', async () => {
      const { model, line, finished, ownerCall } = helpDeskCall([
        () => ({ toolCalls: [{ name: 'transfer_call', args: { destination: 'billing_desk' } }] }),
        () => ({ text: 'unused' }),
      ]);
      const session = await line.running();
      await session
        .run({ userInput: 'I have a question about my invoice.' })
        .wait()
        .catch(() => undefined);
      await finished;
      expect(Object.keys(model.requests[0].tools).sort()).toEqual(['end_call', 'send_dtmf', 'transfer_call']);
      const { call, events } = await ownerCall();
      expect(call).toMatchObject({
        status: 'ended',
        ended_reason: 'transferred',
        transfer: { destination: 'billing_desk', mode: 'cold', status: 'transferred' },
      });
      expect(events).toContainEqual(expect.objectContaining({ type: 'transfer', status: 'transferred' }));
      expect(conversation(session)).toContainEqual({ role: 'assistant', text: 'Putting you through.' });
    });

    it('a warm transfer the person takes: briefed with the summary, then joined to the caller', async () => {
      const { room, line, finished, ownerCall } = helpDeskCall([
        () => ({
          toolCalls: [{ name: 'transfer_call', args: { destination: 'sales_lead', summary: 'Wants 12 seats.' } }],
        }),
        () => ({ text: 'unused' }),
      ]);
      // The agent LiveKit dispatches into the consultation room the service creates, with the person rung into it.
      const consulted = (async () => {
        const [consultation] = await waitFor(async () => {
          const rows = await stack.dataSource.query(
            `SELECT request FROM local_call_control_requests
              WHERE operation = 'createRoom' AND request #>> '{agentDispatch,metadata,external_id}' = $1`,
            [room],
          );
          return rows.length > 0 ? rows : undefined;
        });
        const metadata = consultation.request.agentDispatch.metadata;
        const dispatch = readDispatch(JSON.stringify(metadata), consultation.request.name);
        expect(dispatch).toMatchObject({
          externalId: room,
          consultation: { destination: 'sales_lead', summary: 'Wants 12 seats.' },
        });
        const person = new FakeLine({ client: '+14155550177', trunk: null });
        let briefingSession!: voice.AgentSession;
        await runConsultation({
          externalId: dispatch.externalId,
          consultation: dispatch.consultation!,
          line: person,
          service,
          createSession: () => (briefingSession = textSession(new ScriptedLLM([]))),
        });
        return briefingSession;
      })();
      const session = await line.running();
      await session
        .run({ userInput: 'I want to buy.' })
        .wait()
        .catch(() => undefined);
      await finished;
      expect(conversation(await consulted)).toEqual([
        { role: 'assistant', text: 'Hello, I have a caller for you. Wants 12 seats. I am connecting you now.' },
      ]);
      const { call } = await ownerCall();
      expect(call).toMatchObject({ ended_reason: 'transferred', transfer: { mode: 'warm', status: 'transferred' } });
      // The person was joined to the caller.
      const moved = await stack.dataSource.query(
        `SELECT operation FROM local_call_control_requests WHERE operation = 'moveParticipant' AND request->>'toRoom' = $1`,
        [room],
      );
      expect(moved).toHaveLength(1);
    });

    it('a warm transfer the person declines: the assistant tells the caller and carries on', async () => {
      stack.api.get<symbol, LocalCallControl>(CALL_CONTROL, { strict: false }).answerNext('dialIntoRoom', 'declined');
      const { model, line, finished, ownerCall } = helpDeskCall([
        () => ({ toolCalls: [{ name: 'transfer_call', args: { destination: 'sales_lead' } }] }),
        (request) => ({ text: `Sorry: ${ScriptedLLM.lastToolOutput(request)}` }),
      ]);
      const session = await line.running();
      await session.run({ userInput: 'I want to buy.' }).wait();
      expect(ScriptedLLM.lastToolOutput(model.requests[1])).toContain('The call was declined.');
      line.callerHangsUp();
      await finished;
      const { call } = await ownerCall();
      expect(call).toMatchObject({
        status: 'ended_by_customer',
        ended_reason: 'customer_hangup',
        transfer: { mode: 'warm', status: 'declined', reason: 'declined' },
      });
    });

    it('ends the call with end_call, after the goodbye, recorded as ended by the assistant', async () => {
      const { line, finished, ownerCall } = helpDeskCall([
        () => ({ toolCalls: [{ name: 'end_call', args: {} }] }),
        () => ({ text: 'unused' }),
      ]);
      const session = await line.running();
      await session
        .run({ userInput: 'That was all, thanks.' })
        .wait()
        .catch(() => undefined);
      await finished;
      expect(conversation(session)).toContainEqual({ role: 'assistant', text: 'Thanks for calling, goodbye!' });
      const { call } = await ownerCall();
      expect(call).toMatchObject({ status: 'ended_by_assistant', ended_reason: 'assistant_hangup' });
    });

    it('a DTMF menu: the caller’s key reaches the model, the assistant presses keys, both recorded', async () => {
      const { line, finished, ownerCall } = helpDeskCall([
        (request) => ({ text: `You chose ${JSON.stringify(request.chatCtx.items.at(-1))}`.slice(0, 40) }),
        () => ({ toolCalls: [{ name: 'send_dtmf', args: { digits: '2#' } }] }),
        (request) => ({ text: ScriptedLLM.lastToolOutput(request) }),
      ]);
      const session = await line.running();
      line.callerPresses('1');
      await waitFor(async () =>
        conversation(session).some((turn) => turn.text.includes('pressed 1')) ? true : undefined,
      );
      await session.run({ userInput: 'Please go to the second option of that menu.' }).wait();
      expect(line.keysSent).toEqual(['2#']);
      line.callerHangsUp();
      await finished;
      const { events } = await ownerCall();
      expect(events.filter((event: { type: string }) => event.type === 'dtmf')).toEqual([
        expect.objectContaining({ digits: '1', direction: 'inbound' }),
        expect.objectContaining({ digits: '2#', direction: 'outbound' }),
      ]);
    });
  });
});
