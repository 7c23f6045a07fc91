import { JobQueue, Jobs } from '@app/jobs';
import { type LocalSite, type RecordedRequest, startLocalSite } from '../libs/outbound-http/test/local-site';
import { AppProcess } from './support/app-process';
import { createAccount, type TestAccount } from './support/factories';
import { FakeOpenAi } from './support/openai.fake';
import { verifiesWebhook } from './support/runtime-fixtures';
import { type Stack, startStack } from './support/stack';
import { UNTIL_STALLED, waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-tests-0123456789abcdef';
const runtime = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const CHAT = '/v1/chat/completions';
const SNAPSHOT = 'gpt-4o-mini-2024-07-18';

const TRANSCRIPT = [
  'Assistant: Good evening, Trattoria Roma, how can I help?',
  'Customer: Hi, this is Ada. A table for four on Friday at eight, please.',
  'Assistant: Done: four people, Friday at 8 pm. Anything else?',
  'Customer: We would love the truffle pasta and the tiramisu. Thanks, lovely!',
].join('\n');

/** The analysis plan and fields of a booking assistant. */
const BOOKING = {
  post_call_schema: [
    { name: 'customer_name', type: 'string', description: 'The caller’s name' },
    { name: 'party_size', type: 'integer', description: 'How many people' },
    { name: 'mood', type: 'enum', description: 'How the caller sounded', values: ['happy', 'neutral', 'angry'] },
    { name: 'dishes', type: 'array', description: 'Dishes the caller named', items: { type: 'string' } },
  ],
  analysis: { success: { rubric: 'score_1_10', criteria: 'A table is booked.' } },
};
const BOOKED = {
  summary: 'Ada booked a table for four on Friday at 8 pm and asked for truffle pasta and tiramisu.',
  structured_data: { customer_name: 'Ada', party_size: 4, mood: 'happy', dishes: ['truffle pasta', 'tiramisu'] },
  success: { reason: 'The table was booked as asked.', value: 9 },
};

/** What a test needs of a stack whose API answers the owner and the runtime. */
function callFixtures(stack: () => Stack) {
  const http = () => stack().http;
  let english: number | undefined;
  const language = async (owner: TestAccount) =>
    (english ??= (await http().get('/api/user/assistants/languages').set(owner.auth)).body.find(
      (item: { iso_2: string }) => item.iso_2 === 'en',
    ).id as number);
  const assistant = async (owner: TestAccount, body: object = {}) =>
    (
      await http()
        .post('/api/user/assistant')
        .set(owner.auth)
        .send({ name: 'Trattoria', type: 'inbound', language_id: await language(owner), ...body })
        .expect(201)
    ).body.data;
  return {
    assistant,
    /** A booking assistant (BOOKING's fields and plan) whose webhook posts to `webhook`. */
    booking: (owner: TestAccount, webhook: LocalSite, body: object = {}) =>
      assistant(owner, { ...BOOKING, webhook_url: `${webhook.origin}/hook`, is_webhook_active: true, ...body }),
    ingest: (externalId: string, body: object) =>
      http().put(`/api/internal/calls/${externalId}`).set(runtime).send(body),
    call: (assistantId: number, overrides: object = {}) => ({
      assistant_id: assistantId,
      type: 'inbound',
      status: 'completed',
      client_phone_number: '+14155550123',
      assistant_phone_number: '+14155550100',
      duration: 90,
      transcript: TRANSCRIPT,
      ...overrides,
    }),
    read: async (owner: TestAccount, id: number) =>
      (await http().get(`/api/user/calls/${id}`).set(owner.auth).expect(200)).body.data,
    /** The call once its analysis has settled. */
    settled: (owner: TestAccount, id: number, timeoutMs = 30_000) =>
      waitFor(async () => {
        const call = (await http().get(`/api/user/calls/${id}`).set(owner.auth).expect(200)).body.data;
        return call.analysis && call.analysis.status !== 'pending' ? call : undefined;
      }, timeoutMs),
  };
}

const analyzedEvents = (receiver: LocalSite, callId: number): RecordedRequest[] =>
  receiver.requests.filter((request) => {
    const body = JSON.parse(request.body);
    return body.event === 'call.analyzed' && body.call.id === callId;
  });

const chatRequestsAbout = (fake: FakeOpenAi, marker: string) =>
  fake.requestsTo(CHAT).filter((request) => JSON.stringify(request.body).includes(marker));

describe('Post-call analysis', () => {
  let fake: FakeOpenAi;
  let receiver: LocalSite;
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  const f = callFixtures(() => stack);

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    receiver = await startLocalSite({
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
    });
    stack = await startStack({
      env: {
        RUNTIME_API_TOKEN: RUNTIME_TOKEN,
        JOB_RETRY_DELAY_MS: '100',
        LLM_BASE_URL: fake.baseUrl,
        LLM_API_KEY: fake.apiKey,
        LLM_MODEL: 'gpt-4o-mini',
        // The job's own retries are what a provider's outage meets.
        LLM_MAX_RETRIES: '0',
      },
    });
    [owner, other] = [await createAccount(stack), await createAccount(stack)];
  });
  afterAll(async () => {
    await stack?.close();
    await fake?.close();
    await receiver?.close();
  });

  it('analyses a call that ended with a transcript: summary, structured data and success, sent signed', async () => {
    const booking = await f.booking(owner, receiver, { system_prompt: 'You take table bookings.' });
    expect(booking.analysis).toEqual({
      summary: { enabled: true, prompt: null },
      structured_data: { enabled: true },
      success: { enabled: true, rubric: 'score_1_10', criteria: 'A table is booked.' },
    });
    fake.answer({ json: BOOKED });
    await f.ingest('analysed-1', f.call(booking.id, { status: 'in-progress', transcript: undefined })).expect(201);
    const ended = await f.ingest('analysed-1', { status: 'completed', transcript: TRANSCRIPT }).expect(200);
    expect(ended.body.data.analysis).toMatchObject({ status: 'pending', summary: null, analyzed_at: null });

    const call = await f.settled(owner, ended.body.data.id);
    expect(call.analysis).toEqual({
      status: 'done',
      summary: BOOKED.summary,
      structured_data: BOOKED.structured_data,
      success: { rubric: 'score_1_10', value: 9, passed: true, reason: 'The table was booked as asked.' },
      model: SNAPSHOT,
      tokens: { prompt: expect.any(Number), completion: expect.any(Number), total: expect.any(Number) },
      error: null,
      analyzed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
    expect(call.analysis.tokens.total).toBe(call.analysis.tokens.prompt + call.analysis.tokens.completion);

    // One strict structured-output request, the transcript and the plan's instructions in it.
    const [asked] = chatRequestsAbout(fake, 'Ada. A table for four');
    expect(asked.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(asked.body).toMatchObject({
      model: 'gpt-4o-mini',
      response_format: { type: 'json_schema', json_schema: { name: 'call_analysis', strict: true } },
    });
    const schema = asked.body!.response_format.json_schema.schema;
    expect(schema.required).toEqual(['summary', 'structured_data', 'success']);
    expect(schema.properties.structured_data.properties.mood).toMatchObject({
      enum: ['happy', 'neutral', 'angry', null],
    });
    expect(JSON.stringify(asked.body!.messages)).toContain('A table is booked.');

    // call.analyzed: signed with the assistant's secret, its own event id, the call and its analysis.
    const [delivery] = await waitFor(async () => {
      const found = analyzedEvents(receiver, call.id);
      return found.length > 0 ? found : undefined;
    });
    expect(verifiesWebhook(booking.webhook_secret, delivery.headers, delivery.body)).toBe(true);
    const endedEvent = await waitFor(async () =>
      receiver.requests.find((request) => {
        const body = JSON.parse(request.body);
        return body.event === 'call.ended' && body.call.id === call.id;
      }),
    );
    expect(delivery.headers['webhook-id']).not.toBe(endedEvent.headers['webhook-id']);
    expect(JSON.parse(delivery.body)).toMatchObject({
      event: 'call.analyzed',
      call: { id: call.id, external_id: 'analysed-1', transcript: TRANSCRIPT, analysis: call.analysis, lead: null },
    });

    // The tokens are the account's, on today's usage.
    const today = new Date().toISOString().slice(0, 10);
    const usage = await stack.http
      .get(`/api/user/usage?date_from=${today}&date_to=${today}`)
      .set(owner.auth)
      .expect(200);
    expect(usage.body.data).toEqual([
      { date: today, calls: 1, minutes: 1.5, llm_tokens: call.analysis.tokens.total, embedding_tokens: 0 },
    ]);
    // Another account sees none of it.
    const others = await stack.http.get(`/api/user/usage?date_from=${today}&date_to=${today}`).set(other.auth);
    expect(others.body.data).toEqual([{ date: today, calls: 0, minutes: 0, llm_tokens: 0, embedding_tokens: 0 }]);
  }, 60_000);

  it('runs an analysis again on request, as a new run with its own call.analyzed; pending, it is the one', async () => {
    const booking = await f.booking(owner, receiver);
    fake.answer({ json: BOOKED });
    const id = (await f.ingest('rerun-1', f.call(booking.id)).expect(201)).body.data.id;
    await f.settled(owner, id);
    await waitFor(async () => (analyzedEvents(receiver, id).length === 1 ? true : undefined));

    // The plan changed since: the re-run follows it.
    await stack.http
      .put(`/api/user/assistant/${booking.id}`)
      .set(owner.auth)
      .send({ analysis: { structured_data: { enabled: false }, success: { rubric: 'pass_fail' } } })
      .expect(200);
    const asked = fake.requestsTo(CHAT).length;
    // The provider takes its time: a second request meanwhile finds the run pending and starts none.
    fake.fail({ delayMs: 1500 }, 1, 'chat');
    fake.answer({ json: { summary: 'A booking for four.', success: { reason: 'Booked.', value: true } } });
    const queued = await stack.http.post(`/api/user/calls/${id}/analysis`).set(owner.auth).expect(202);
    expect(queued.body).toMatchObject({ message: 'The call’s analysis is queued.', data: { id } });
    expect(queued.body.data.analysis).toMatchObject({ status: 'pending', summary: null, success: null });
    await stack.http.post(`/api/user/calls/${id}/analysis`).set(owner.auth).expect(202);
    const call = await f.settled(owner, id);
    expect(call.analysis).toMatchObject({
      status: 'done',
      summary: 'A booking for four.',
      structured_data: null,
      success: { rubric: 'pass_fail', value: true, passed: true, reason: 'Booked.' },
    });
    expect(fake.requestsTo(CHAT).length - asked).toBe(1);
    const deliveries = await waitFor(async () => {
      const found = analyzedEvents(receiver, id);
      return found.length === 2 ? found : undefined;
    });
    expect(deliveries[0].headers['webhook-id']).not.toBe(deliveries[1].headers['webhook-id']);
    expect(JSON.parse(deliveries[1].body).call.analysis).toEqual(call.analysis);

    // Another account's call is a missing one; a call that has not ended or has nothing to analyse is 409.
    await stack.http.post(`/api/user/calls/${id}/analysis`).set(other.auth).expect(404, { message: 'Call not found.' });
    await stack.http.post('/api/user/calls/0x1/analysis').set(owner.auth).expect(404, { message: 'Call not found.' });
    const going = (await f.ingest('rerun-open', f.call(booking.id, { status: 'in-progress' })).expect(201)).body.data;
    expect(going.analysis).toBeNull();
    await stack.http
      .post(`/api/user/calls/${going.id}/analysis`)
      .set(owner.auth)
      .expect(409, { message: 'The call has not ended yet: it is analysed when it ends.' });
    const silent = (
      await f.ingest('rerun-silent', f.call(booking.id, { status: 'no-answer', transcript: '' })).expect(201)
    ).body.data;
    expect(silent.analysis).toMatchObject({
      status: 'skipped',
      error: 'Nothing to analyse: the call has no transcript.',
      analyzed_at: expect.any(String),
    });
    await stack.http
      .post(`/api/user/calls/${silent.id}/analysis`)
      .set(owner.auth)
      .expect(409, { message: 'The call has no transcript to analyse.' });
    // The runtime sends the transcript after the final status: the analysis it lacked is requested then.
    const later = await f
      .ingest('rerun-silent', { status: 'no-answer', transcript: 'Customer: Hello? Is anyone there?' })
      .expect(200);
    expect(later.body.data.analysis).toMatchObject({ status: 'pending', error: null });
    expect((await f.settled(owner, silent.id)).analysis.status).toBe('done');
  }, 60_000);

  it('filters calls by success on the rubric, with exact totals', async () => {
    const grader = await f.assistant(owner, { analysis: { summary: { enabled: false } } });
    const graded: Record<string, boolean> = { 'graded-1': true, 'graded-2': false, 'graded-3': true };
    for (const [externalId, value] of Object.entries(graded)) {
      fake.answer({ json: { success: { reason: 'Because.', value } } });
      const id = (await f.ingest(externalId, f.call(grader.id)).expect(201)).body.data.id;
      await f.settled(owner, id);
    }
    const listed = async (query: string) => {
      const page = await stack.http
        .get(`/api/user/calls?assistant_id=${grader.id}&${query}`)
        .set(owner.auth)
        .expect(200);
      return { ids: page.body.data.map((call: { external_id: string }) => call.external_id), total: page.body.total };
    };
    expect(await listed('success=true')).toEqual({ ids: ['graded-3', 'graded-1'], total: 2 });
    expect(await listed('success=0')).toEqual({ ids: ['graded-2'], total: 1 });
    // Sent empty, the filter is not set.
    expect((await listed('success=')).total).toBe(3);
    // The success filter alone counts from the counters: every account's graded calls, this one's only.
    const passed = await stack.http.get('/api/user/calls?success=true').set(owner.auth).expect(200);
    expect(
      passed.body.data.every((call: { analysis: { success: { passed: boolean } } }) => call.analysis.success.passed),
    ).toBe(true);
    expect(passed.body.total).toBe(passed.body.data.length);
    expect((await stack.http.get('/api/user/calls?success=true').set(other.auth).expect(200)).body.total).toBe(0);
    const refused = await stack.http.get('/api/user/calls?success=maybe').set(owner.auth).expect(422);
    expect(refused.body.errors).toEqual({ success: ['The success field must be true or false.'] });
  }, 60_000);

  it('asks again after an invalid answer, and after three records the analysis failed with the reason', async () => {
    const booking = await f.booking(owner, receiver);
    // Cut at the token limit once, then valid: done.
    fake.answer({ length: true }, { json: BOOKED });
    const recovered = (
      await f.ingest('invalid-1', f.call(booking.id, { transcript: `${TRANSCRIPT}\nCustomer: one` })).expect(201)
    ).body.data.id;
    expect((await f.settled(owner, recovered)).analysis.status).toBe('done');
    expect(chatRequestsAbout(fake, 'Customer: one')).toHaveLength(2);

    fake.answer({ length: true }, { refusal: 'I can’t help with that.' }, { length: true });
    const id = (
      await f.ingest('invalid-2', f.call(booking.id, { transcript: `${TRANSCRIPT}\nCustomer: two` })).expect(201)
    ).body.data.id;
    const call = await f.settled(owner, id);
    expect(call.analysis).toMatchObject({
      status: 'failed',
      summary: null,
      structured_data: null,
      success: null,
      model: SNAPSHOT,
      error:
        "No valid analysis in 3 answers. The last: The model's answer was cut at 8192 tokens (finish_reason length).",
    });
    // The three answers were paid for: their tokens are the analysis' and the account's.
    expect(call.analysis.tokens.total).toBeGreaterThan(0);
    expect(chatRequestsAbout(fake, 'Customer: two')).toHaveLength(3);
    // The owner hears of the failure too, and the grade is in neither list.
    const [delivery] = await waitFor(async () => {
      const found = analyzedEvents(receiver, id);
      return found.length > 0 ? found : undefined;
    });
    expect(JSON.parse(delivery.body).call.analysis).toMatchObject({ status: 'failed' });
  }, 60_000);

  it('waits a provider’s outage out (429 and 5xx) and analyses the call once it answers', async () => {
    const booking = await f.assistant(owner, BOOKING);
    fake.fail({ status: 429, retryAfter: '0' }, 2, 'chat');
    fake.fail({ status: 503 }, 1, 'chat');
    fake.answer({ json: BOOKED });
    const id = (
      await f.ingest('outage-1', f.call(booking.id, { transcript: `${TRANSCRIPT}\nCustomer: outage` })).expect(201)
    ).body.data.id;
    // Pending while the provider refuses.
    await waitFor(async () => (chatRequestsAbout(fake, 'Customer: outage').length >= 1 ? true : undefined));
    expect((await f.read(owner, id)).analysis.status).toBe('pending');
    const call = await f.settled(owner, id);
    expect(call.analysis).toMatchObject({ status: 'done', summary: BOOKED.summary });
    expect(chatRequestsAbout(fake, 'Customer: outage')).toHaveLength(4);
  }, 60_000);

  it('keeps the plan and post_call_schema an assistant is given, and refuses hostile ones naming the field', async () => {
    const booking = await f.assistant(owner, BOOKING);
    expect(booking.post_call_schema).toEqual(BOOKING.post_call_schema);
    const refused = async (body: object) =>
      (await stack.http.put(`/api/user/assistant/${booking.id}`).set(owner.auth).send(body).expect(422)).body.errors;
    const field = (extra: object) => ({ post_call_schema: [{ name: 'x', description: 'd', ...extra }] });
    expect(await refused(field({ type: 'enum' }))).toEqual({
      'post_call_schema.0.values': ['The post call schema.0.values field is required when type is enum.'],
    });
    expect(await refused(field({ type: 'string', values: ['a'] }))).toEqual({
      'post_call_schema.0.values': ['The post call schema.0.values field is prohibited unless type is in enum.'],
    });
    expect(await refused(field({ type: 'enum', values: ['a', 'a', 7, 'b'.repeat(101)] }))).toEqual({
      'post_call_schema.0.values.1': ['The post call schema.0.values.1 field has a duplicate value.'],
      'post_call_schema.0.values.2': ['The post call schema.0.values.2 field must be a string.'],
      'post_call_schema.0.values.3': ['The post call schema.0.values.3 field must not be greater than 100 characters.'],
    });
    expect(await refused(field({ type: 'array' }))).toEqual({
      'post_call_schema.0.items': ['The post call schema.0.items field is required when type is array.'],
    });
    expect(await refused(field({ type: 'array', items: { type: 'array' } }))).toEqual({
      'post_call_schema.0.items.type': ['The selected post call schema.0.items.type is invalid.'],
    });
    expect(await refused(field({ type: 'array', items: 'string' }))).toEqual({
      'post_call_schema.0.items': ['The post call schema.0.items field must be an object.'],
    });
    expect(await refused(field({ type: 'object' }))).toEqual({
      'post_call_schema.0.type': ['The selected post call schema.0.type is invalid.'],
    });
    const many = Array.from({ length: 6 }, (_, index) => ({
      name: `f${index}`,
      type: 'enum',
      description: 'd',
      values: Array.from({ length: 100 }, (_, value) => `v${value}`),
    }));
    expect(await refused({ post_call_schema: many })).toEqual({
      post_call_schema: ['The post call schema field must not have more than 500 enum values in all.'],
    });
    expect(await refused({ analysis: { success: { rubric: 'stars', enabled: 'yes' }, summary: [] } })).toEqual({
      'analysis.summary': ['The analysis.summary field must be an object.'],
      'analysis.success.rubric': ['The selected analysis.success.rubric is invalid.'],
      'analysis.success.enabled': ['The analysis.success.enabled field must be true or false.'],
    });
    expect(await refused({ analysis: { summary: { prompt: 'p'.repeat(4001) } } })).toEqual({
      'analysis.summary.prompt': ['The analysis.summary.prompt field must not be greater than 4000 characters.'],
    });
    // Null restores the defaults.
    const reset = await stack.http
      .put(`/api/user/assistant/${booking.id}`)
      .set(owner.auth)
      .send({ analysis: null })
      .expect(200);
    expect(reset.body.data.analysis).toEqual({
      summary: { enabled: true, prompt: null },
      structured_data: { enabled: true },
      success: { enabled: true, rubric: 'pass_fail', criteria: null },
    });
  });

  it('answers usage per UTC day from the counters, every day of the range, and refuses a bad range', async () => {
    const account = await createAccount(stack);
    const agent = await f.assistant(account, {
      analysis: { summary: { enabled: false }, success: { enabled: false } },
    });
    // Two days in the past, as the counters recorded them when those calls were written.
    await stack.dataSource.query(
      `INSERT INTO calls (user_id, external_id, assistant_id, assistant_name, type, status, client_phone_number,
                          assistant_phone_number, duration, created_at)
       VALUES ($1, 'usage-1', $2, 'A', 'inbound', 'completed', '+1', '+2', 30, '2026-01-03T10:00:00Z'),
              ($1, 'usage-2', $2, 'A', 'inbound', 'completed', '+1', '+2', 0, '2026-01-03T23:59:59Z'),
              ($1, 'usage-3', $2, 'A', 'outbound', 'busy', '+1', '+2', 0, '2026-01-05T00:00:00Z')`,
      [account.id, agent.id],
    );
    // A duration reported later counts too; deleting a call does not take back what it used.
    await stack.dataSource.query(`UPDATE calls SET duration = 75 WHERE external_id = 'usage-2'`);
    const deleted = (await stack.dataSource.query(`SELECT id FROM calls WHERE external_id = 'usage-1'`))[0].id;
    await stack.http.delete(`/api/user/calls/${deleted}`).set(account.auth).expect(200);
    await stack.dataSource.query(
      `INSERT INTO model_usage_daily (user_id, day, purpose, requests, prompt_tokens, completion_tokens, total_tokens)
       VALUES ($1, '2026-01-03', 'analysis', 2, 900, 100, 1000), ($1, '2026-01-05', 'document_embeddings', 1, 50, 0, 50),
              ($1, '2026-01-05', 'search_embeddings', 3, 7, 0, 7)`,
      [account.id],
    );
    const usage = await stack.http
      .get('/api/user/usage?date_from=2026-01-02&date_to=2026-01-05')
      .set(account.auth)
      .expect(200);
    expect(usage.body).toEqual({
      data: [
        { date: '2026-01-02', calls: 0, minutes: 0, llm_tokens: 0, embedding_tokens: 0 },
        { date: '2026-01-03', calls: 2, minutes: 1.75, llm_tokens: 1000, embedding_tokens: 0 },
        { date: '2026-01-04', calls: 0, minutes: 0, llm_tokens: 0, embedding_tokens: 0 },
        { date: '2026-01-05', calls: 1, minutes: 0, llm_tokens: 0, embedding_tokens: 57 },
      ],
    });
    // Without dates: the last 30 days, today included.
    const recent = await stack.http.get('/api/user/usage').set(account.auth).expect(200);
    expect(recent.body.data).toHaveLength(30);
    expect(recent.body.data.at(-1).date).toBe(new Date().toISOString().slice(0, 10));
    const refused = async (query: string) =>
      (await stack.http.get(`/api/user/usage?${query}`).set(account.auth).expect(422)).body.errors;
    expect(await refused('date_from=2026-02-30')).toEqual({
      date_from: ['The date from field must match the format Y-m-d.'],
    });
    expect(await refused('date_from=2026-01-05&date_to=2026-01-04')).toEqual({
      date_to: ['The date to field must be a date after or equal to 2026-01-05.'],
    });
    expect(await refused('date_from=2025-01-01&date_to=2026-01-02')).toEqual({
      date_to: ['The date to field must be a date before or equal to 2026-01-01.'],
    });
    expect(await refused('date_from=2000-01-01')).toEqual({
      date_from: [expect.stringMatching(/^The date from field must be a date after or equal to \d{4}-\d{2}-\d{2}\.$/)],
    });
    // Another account's usage is its own.
    const others = await stack.http.get('/api/user/usage?date_from=2026-01-03&date_to=2026-01-03').set(owner.auth);
    expect(others.body.data).toEqual([
      { date: '2026-01-03', calls: 0, minutes: 0, llm_tokens: 0, embedding_tokens: 0 },
    ]);
  });
});

describe('Post-call analysis with a worker killed mid-analysis', () => {
  let fake: FakeOpenAi;
  let receiver: LocalSite;
  let stack: Stack;
  let owner: TestAccount;
  const workers: AppProcess[] = [];
  const f = callFixtures(() => stack);

  beforeAll(async () => {
    fake = await FakeOpenAi.start();
    receiver = await startLocalSite({
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
    });
    const llm = { LLM_BASE_URL: fake.baseUrl, LLM_API_KEY: fake.apiKey, LLM_MODEL: 'gpt-4o-mini' };
    stack = await startStack({ worker: false, env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, ...llm } });
    owner = await createAccount(stack);
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await stack?.close();
    await fake?.close();
    await receiver?.close();
  });

  it(
    'analyses the call once a worker takes the job over, exactly once',
    async () => {
      const env = {
        LLM_BASE_URL: fake.baseUrl,
        LLM_API_KEY: fake.apiKey,
        LLM_MODEL: 'gpt-4o-mini',
        JOB_LOCK_MS: '2000',
        JOB_STALLED_CHECK_MS: '1000',
      };
      workers.push(await AppProcess.start(env, 'worker'));
      const booking = await f.booking(owner, receiver);
      // The provider holds the first request: the worker dies waiting for its answer.
      fake.fail({ delayMs: 600_000 }, 1, 'chat');
      fake.answer({ json: BOOKED });
      const id = (await f.ingest('killed-1', f.call(booking.id)).expect(201)).body.data.id;
      await waitFor(async () => (fake.requestsTo(CHAT).length === 1 ? true : undefined), 60_000);
      await workers[0].stop(); // SIGKILL, mid-analysis
      expect((await f.read(owner, id)).analysis.status).toBe('pending');

      workers.push(await AppProcess.start(env, 'worker'));
      const call = await f.settled(owner, id, 120_000);
      expect(call.analysis).toMatchObject({ status: 'done', summary: BOOKED.summary });
      await waitFor(async () => (analyzedEvents(receiver, id).length === 1 ? true : undefined), 60_000);
      expect(fake.requestsTo(CHAT)).toHaveLength(2);

      // Nothing analyses it twice: the runtime repeating its final write, the run's job queued again.
      await f.ingest('killed-1', f.call(booking.id)).expect(200);
      const job = await stack.api.get(JobQueue).enqueue(Jobs.analyzeCall, { callId: id, run: 1 });
      await waitFor(async () => ((await job.getState()) === 'completed' ? true : undefined), 60_000);
      expect(await job.getState()).toBe('completed');
      expect(fake.requestsTo(CHAT)).toHaveLength(2);
      expect(analyzedEvents(receiver, id)).toHaveLength(1);
      expect((await f.read(owner, id)).analysis).toEqual(call.analysis);
      // Only the answer received was spent.
      const [usage] = await stack.dataSource.query(
        `SELECT requests, total_tokens FROM model_usage_daily WHERE user_id = $1 AND purpose = 'analysis'`,
        [owner.id],
      );
      expect({ requests: usage.requests, tokens: Number(usage.total_tokens) }).toEqual({
        requests: 1,
        tokens: call.analysis.tokens.total,
      });
    },
    UNTIL_STALLED,
  );
});

describe('Post-call analysis without a model provider', () => {
  let stack: Stack;
  let owner: TestAccount;
  const f = callFixtures(() => stack);

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    owner = await createAccount(stack);
  });
  afterAll(() => stack?.close());

  it('analyses nothing, and says so to a re-run', async () => {
    const agent = await f.assistant(owner, BOOKING);
    const call = (await f.ingest('unanalysed-1', f.call(agent.id)).expect(201)).body.data;
    expect(call.analysis).toBeNull();
    expect((await f.read(owner, call.id)).analysis).toBeNull();
    await stack.http
      .post(`/api/user/calls/${call.id}/analysis`)
      .set(owner.auth)
      .expect(409, { message: 'No model provider is configured: calls are not analysed.' });
  });
});
