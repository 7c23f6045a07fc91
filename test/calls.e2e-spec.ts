import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { JobQueue, Jobs } from '@app/jobs';
import { CallWebhooks } from '../apps/worker/src/calls/call-webhooks.service';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, type TestAccount } from './support/factories';
import { verifiesWebhook } from './support/runtime-fixtures';
import { type Stack, startStack } from './support/stack';
import { waitFor } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-tests-0123456789abcdef';
const runtime = { Authorization: `Bearer ${RUNTIME_TOKEN}` };

describe('Calls', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let receiver: LocalSite;
  let failuresLeft = 0;
  let english: number;

  beforeAll(async () => {
    receiver = await startLocalSite({
      '/hook': (_request, response) => {
        if (failuresLeft > 0) {
          failuresLeft--;
          return response.writeHead(500, { 'content-type': 'text/plain' }).end('try later');
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      },
      '/down': (_request, response) => response.writeHead(503, { 'content-type': 'text/plain' }).end('down'),
    });
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN, JOB_RETRY_DELAY_MS: '100' } });
    account = await createAccount(stack);
    other = await createAccount(stack);
    english = (await stack.http.get('/api/user/assistants/languages').set(account.auth)).body.find(
      (language: { iso_2: string }) => language.iso_2 === 'en',
    ).id;
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  const assistant = async (body: object = {}, owner = account) =>
    (
      await stack.http
        .post('/api/user/assistant')
        .set(owner.auth)
        .send({ name: 'Caller', type: 'outbound', language_id: english, ...body })
        .expect(201)
    ).body.data;
  /** A campaign of `assistantId` whose leads get two tries. */
  const campaignOf = async (assistantId: number, name: string) =>
    (
      await stack.http
        .post('/api/user/campaign')
        .set(account.auth)
        .send({ name, assistant_id: assistantId, max_retries: 2 })
        .expect(201)
    ).body.data;
  const leadIn = async (campaignId: number, phoneNumber: string) =>
    (
      await stack.http
        .post('/api/user/lead')
        .set(account.auth)
        .send({ phone_number: phoneNumber, campaign_id: campaignId })
        .expect(201)
    ).body.data;
  const ingest = (externalId: string, body: object) =>
    stack.http.put(`/api/internal/calls/${externalId}`).set(runtime).send(body);
  const base = (assistantId: number, overrides: object = {}) => ({
    assistant_id: assistantId,
    type: 'outbound',
    status: 'initiated',
    client_phone_number: '+14155550123',
    assistant_phone_number: '+14155550999',
    ...overrides,
  });

  it('separates the runtime token from users’ tokens', async () => {
    const mine = await assistant();
    await stack.http
      .put('/api/internal/calls/x-1')
      .set(account.auth)
      .send(base(mine.id))
      .expect(401, { message: 'Unauthenticated.' });
    await stack.http.put('/api/internal/calls/x-1').send(base(mine.id)).expect(401);
    await stack.http.get('/api/user/calls').set(runtime).expect(401);
  });

  it('never moves a call to another account: 409 and nothing changed, finished or not', async () => {
    const mine = await assistant({ name: 'Mine' });
    const theirs = await assistant({ name: 'Theirs' }, other);
    const created = (await ingest('kept-1', base(mine.id, { transcript: 'private words' })).expect(201)).body.data;
    for (const status of ['in-progress', 'completed']) {
      const moved = await ingest('kept-1', base(theirs.id, { status, transcript: 'overwritten' }));
      expect(moved.status).toBe(409);
      expect(moved.body).toEqual({
        message: 'The call belongs to another account; it cannot be moved to this assistant.',
      });
      await ingest('kept-1', base(mine.id, { status })).expect(200);
    }
    const read = (await stack.http.get(`/api/user/calls/${created.id}`).set(account.auth).expect(200)).body.data;
    expect(read).toMatchObject({ assistant_name: 'Mine', transcript: 'private words', status: 'completed' });
    await stack.http.get(`/api/user/calls/${created.id}`).set(other.auth).expect(404);
    const theirList = (await stack.http.get('/api/user/calls').set(other.auth).expect(200)).body.data;
    expect(theirList.map((call: { external_id: string }) => call.external_id)).not.toContain('kept-1');
  });

  it('shows answered_by as "unknown" until reported, and a recording only for an assistant that records', async () => {
    const quiet = await assistant({ name: 'Unrecorded' });
    const first = await ingest('call-unrecorded', base(quiet.id)).expect(201);
    expect(first.body.data.answered_by).toBe('unknown');
    const ended = await ingest(
      'call-unrecorded',
      base(quiet.id, { status: 'completed', recording_url: 'https://rec.example.com/not-enabled.mp3' }),
    ).expect(200);
    expect(ended.body.data).not.toHaveProperty('recording_url');
    expect(ended.body.data.answered_by).toBe('unknown');
    const read = await stack.http.get(`/api/user/calls/${ended.body.data.id}`).set(account.auth).expect(200);
    expect(read.body.data).not.toHaveProperty('recording_url');
    expect(read.body.data.answered_by).toBe('unknown');
    const listed = (await stack.http.get('/api/user/calls').set(account.auth).expect(200)).body.data.find(
      (call: { id: number }) => call.id === ended.body.data.id,
    );
    expect(listed.answered_by).toBe('unknown');
    expect(listed).not.toHaveProperty('recording_url');
  });

  it('records a call by its external id: 201 first, 200 after, forward only, 409 off a final status', async () => {
    const mine = await assistant({ name: 'Front', record: true });
    const first = await ingest('call-a', base(mine.id)).expect(201);
    expect(first.body.data).toMatchObject({
      external_id: 'call-a',
      status: 'initiated',
      assistant_name: 'Front',
      lead_id: null,
    });
    expect(first.body.data).not.toHaveProperty('campaign_name');
    expect(first.body.data).not.toHaveProperty('recording_url');
    await ingest('call-a', base(mine.id, { status: 'in-progress' })).expect(200);
    await ingest('call-a', base(mine.id, { status: 'ringing' })).expect(409);
    const ended = await ingest(
      'call-a',
      base(mine.id, {
        status: 'completed',
        duration: 42,
        transcript: 'Hello',
        total_cost: 0.125,
        carrier_cost: 0.05,
        recording_url: 'https://rec.example.com/a.mp3',
        answered_by: 'human',
      }),
    ).expect(200);
    expect(ended.body.data).toMatchObject({
      status: 'completed',
      duration: 42,
      total_cost: 0.125,
      carrier_cost: 0.05,
      recording_url: 'https://rec.example.com/a.mp3',
    });
    await ingest('call-a', base(mine.id, { status: 'completed', duration: 42 })).expect(200);
    const conflict = await ingest('call-a', base(mine.id, { status: 'failed' }));
    expect(conflict.status).toBe(409);
    expect(conflict.body).toEqual({ message: 'The call is already completed; it cannot become failed.' });
    const list = await stack.http.get('/api/user/calls').set(account.auth).expect(200);
    expect(list.body.data[0]).toMatchObject({
      external_id: 'call-a',
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
  });

  it('belongs to the assistant’s account, and refuses another account’s campaign or lead', async () => {
    const theirs = await assistant({}, other);
    await ingest('call-b', base(theirs.id)).expect(201);
    const mine = await stack.http.get('/api/user/calls').query({ per_page: 100 }).set(account.auth).expect(200);
    expect(mine.body.data.map((call: { external_id: string }) => call.external_id)).not.toContain('call-b');
    const id = (await stack.http.get('/api/user/calls').set(other.auth).expect(200)).body.data[0].id;
    await stack.http.get(`/api/user/calls/${id}`).set(account.auth).expect(404, { message: 'Call not found.' });
    await stack.http.delete(`/api/user/calls/${id}`).set(account.auth).expect(404, { message: 'Call not found.' });
    const myCampaign = (
      await stack.http
        .post('/api/user/campaign')
        .set(account.auth)
        .send({ name: 'Mine', assistant_id: (await assistant()).id })
        .expect(201)
    ).body.data.id;
    const refused = await ingest('call-c', base(theirs.id, { campaign_id: myCampaign }));
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual({ campaign_id: ['The selected campaign id is invalid.'] });
    await stack.http
      .delete(`/api/user/calls/${id}`)
      .set(other.auth)
      .expect(200, { message: 'Call deleted successfully.' });
  });

  it('moves the lead with its calls through one retry budget to reached-max-retries', async () => {
    const caller = await assistant();
    const campaign = await campaignOf(caller.id, 'Retries');
    const lead = await leadIn(campaign.id, '+14155550124');
    const readLead = async () =>
      (await stack.http.get(`/api/user/leads/${lead.id}`).set(account.auth).expect(200)).body.data.status;
    const withLead = { campaign_id: campaign.id, lead_id: lead.id };
    await ingest('retry-1', base(caller.id, withLead)).expect(201);
    expect(await readLead()).toBe('processing');
    const first = await ingest('retry-1', base(caller.id, { ...withLead, status: 'no-answer' })).expect(200);
    expect(first.body.data.campaign_name).toBe('Retries');
    expect(await readLead()).toBe('rescheduled');
    await ingest('retry-2', base(caller.id, { ...withLead, status: 'completed', answered_by: 'machine' })).expect(201);
    expect(await readLead()).toBe('reached-max-retries');

    const reached = await leadIn(campaign.id, '+14155550125');
    await ingest(
      'done-1',
      base(caller.id, { campaign_id: campaign.id, lead_id: reached.id, status: 'ended_by_customer' }),
    ).expect(201);
    expect((await stack.http.get(`/api/user/leads/${reached.id}`).set(account.auth)).body.data.status).toBe(
      'completed',
    );
  });

  it('ends a call from a write of only what changed, its lead following, its variables merged', async () => {
    const caller = await assistant();
    const campaign = await campaignOf(caller.id, 'Partial');
    const lead = await leadIn(campaign.id, '+14155550127');
    await ingest(
      'partial-1',
      base(caller.id, { campaign_id: campaign.id, lead_id: lead.id, variables: { plan: 'basic', tier: 'gold' } }),
    ).expect(201);
    const ended = await ingest('partial-1', { status: 'no-answer', variables: { plan: 'pro' } }).expect(200);
    expect(ended.body.data).toMatchObject({
      status: 'no-answer',
      type: 'outbound',
      assistant_name: 'Caller',
      campaign_name: 'Partial',
      lead_id: lead.id,
      client_phone_number: '+14155550123',
      variables: { plan: 'pro', tier: 'gold' },
    });
    expect((await stack.http.get(`/api/user/leads/${lead.id}`).set(account.auth).expect(200)).body.data.status).toBe(
      'rescheduled',
    );
  });

  it('lands racing writes of one call once: one 201, one end, one retry of the lead spent', async () => {
    const caller = await assistant();
    const campaign = await campaignOf(caller.id, 'Races');
    const lead = await leadIn(campaign.id, '+14155550126');
    const withLead = { campaign_id: campaign.id, lead_id: lead.id };
    const firsts = await Promise.all(
      Array.from({ length: 8 }, () => ingest('racing-writes-1', base(caller.id, withLead))),
    );
    expect(firsts.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const ends = await Promise.all(
      Array.from({ length: 8 }, () => ingest('racing-writes-1', base(caller.id, { ...withLead, status: 'no-answer' }))),
    );
    expect(ends.map((response) => response.status)).toEqual(Array(8).fill(200));
    // Every answer shows the one end the call has.
    expect(new Set(ends.map((response) => response.body.data.ended_at)).size).toBe(1);
    const [{ count, events }] = await stack.dataSource.query(
      `SELECT count(*)::int AS count, count(DISTINCT webhook_event_id)::int AS events FROM calls WHERE external_id = 'racing-writes-1'`,
    );
    expect({ count, events }).toEqual({ count: 1, events: 1 });
    const readLead = async () =>
      (await stack.http.get(`/api/user/leads/${lead.id}`).set(account.auth).expect(200)).body.data.status;
    // Counted twice, the budget of 2 would already be spent.
    expect(await readLead()).toBe('rescheduled');
    await ingest('racing-writes-2', base(caller.id, { ...withLead, status: 'busy' })).expect(201);
    expect(await readLead()).toBe('reached-max-retries');
  });

  it('matches a client number by any part of it, among the account’s own calls only', async () => {
    const fresh = await createAccount(stack);
    const stranger = await createAccount(stack);
    const mine = await assistant({}, fresh);
    const theirs = await assistant({}, stranger);
    const numbers = ['+14155550901', '+14155555555', '+447700900123', '+33612345678', '12'];
    const ids = new Map<number, string>();
    for (const [index, number] of numbers.entries()) {
      const call = await ingest(`part-${index}`, base(mine.id, { client_phone_number: number })).expect(201);
      ids.set(call.body.data.id, number);
      await ingest(`part-other-${index}`, base(theirs.id, { client_phone_number: number })).expect(201);
    }
    const matching = async (part: string) => {
      const page = (
        await stack.http.get('/api/user/calls').query({ phone_number: part, per_page: 100 }).set(fresh.auth).expect(200)
      ).body;
      const found = page.data.map((call: { id: number }) => ids.get(call.id) ?? `another account's call ${call.id}`);
      expect(page.total).toBe(found.length);
      return found.sort();
    };
    // Whatever the part's length, repeats or plus sign: exactly the numbers that contain it, as a substring.
    for (const part of ['+14155550901', '+44', '0901', '555', '5555555', '55555555', '009', '1', '12', '2', '99999']) {
      expect({ part, found: await matching(part) }).toEqual({
        part,
        found: numbers.filter((number) => number.includes(part)).sort(),
      });
    } // A `+` sent as it is in the query string, as most HTTP clients send it, is the number's plus (not a space).
    for (const raw of ['+14155550901', '+44']) {
      const page = (
        await stack.http.get(`/api/user/calls?phone_number=${raw}&per_page=100`).set(fresh.auth).expect(200)
      ).body;
      expect(page.data.map((call: { id: number }) => ids.get(call.id)).sort()).toEqual(
        numbers.filter((number) => number.includes(raw)).sort(),
      );
    }
  });

  it('filters the list and refuses bad filter values by name', async () => {
    const fresh = await createAccount(stack);
    const one = await assistant({}, fresh);
    const two = await assistant({ type: 'inbound' }, fresh);
    await ingest('f-1', base(one.id, { status: 'completed', client_phone_number: '+14155550901' })).expect(201);
    await ingest('f-2', base(two.id, { type: 'inbound', status: 'busy', client_phone_number: '+14155550902' })).expect(
      201,
    );
    await ingest('f-3', base(one.id, { type: 'web', client_phone_number: '+14155550903' })).expect(201);
    const total = async (query: object) =>
      (await stack.http.get('/api/user/calls').query(query).set(fresh.auth).expect(200)).body.total;
    expect(await total({})).toBe(3);
    expect(await total({ status: 'busy' })).toBe(1);
    expect(await total({ type: 'web' })).toBe(1);
    expect(await total({ assistant_id: one.id })).toBe(2);
    expect(await total({ phone_number: '0902' })).toBe(1);
    const today = new Date().toISOString().slice(0, 10);
    expect(await total({ date_from: today, date_to: today })).toBe(3);
    expect(await total({ date_to: '2020-01-01' })).toBe(0);
    // Totals come from counters the triggers keep; after a status change and a delete they still match the rows.
    await ingest('f-3', base(one.id, { type: 'web', status: 'failed', client_phone_number: '+14155550903' })).expect(
      200,
    );
    const firstId = (await stack.http.get('/api/user/calls').query({ phone_number: '0901' }).set(fresh.auth)).body
      .data[0].id;
    await stack.http.delete(`/api/user/calls/${firstId}`).set(fresh.auth).expect(200);
    expect({
      all: await total({}),
      failed: await total({ status: 'failed' }),
      initiated: await total({ status: 'initiated' }),
      one: await total({ assistant_id: one.id }),
    }).toEqual({
      all: 2,
      failed: 1,
      initiated: 0,
      one: 1,
    });
    for (const [name, value] of [
      ['status', 'gone'],
      ['type', 'fax'],
      ['assistant_id', 'x'],
      ['date_from', '2026-13-01'],
    ]) {
      const invalid = await stack.http
        .get('/api/user/calls')
        .query({ [name]: value })
        .set(fresh.auth);
      expect({ name, status: invalid.status, keys: Object.keys(invalid.body.errors ?? {}) }).toEqual({
        name,
        status: 422,
        keys: [name],
      });
    }
    // Laravel's date_format message, the same on leads and calls, for a date that does not exist too.
    for (const path of ['/api/user/calls', '/api/user/leads']) {
      for (const [name, value] of [
        ['date_from', '2026-02-30'],
        ['date_to', '24/11/2026'],
      ]) {
        const invalid = await stack.http
          .get(path)
          .query({ [name]: value })
          .set(fresh.auth)
          .expect(422);
        expect(invalid.body.errors).toEqual({
          [name]: [`The ${name.replace('_', ' ')} field must match the format Y-m-d.`],
        });
      }
    }
  });

  describe('webhooks', () => {
    it('delivers an ended call, signed, retrying with the same webhook-id until the receiver accepts', async () => {
      const hooked = await assistant({ webhook_url: `${receiver.origin}/hook`, is_webhook_active: true });
      const before = receiver.requests.length;
      failuresLeft = 2;
      await ingest('hook-1', base(hooked.id)).expect(201);
      await ingest('hook-1', base(hooked.id, { status: 'in-progress' })).expect(200);
      await ingest(
        'hook-1',
        base(hooked.id, { status: 'completed', transcript: 'Thanks!', variables: { intent: 'renew' } }),
      ).expect(200);
      const call = await waitFor(async () => {
        const response = await stack.http.get('/api/user/calls').set(account.auth).expect(200);
        const found = response.body.data.find((item: { external_id: string }) => item.external_id === 'hook-1');
        return found?.webhook_response?.status === 200 ? found : undefined;
      }, 20_000);
      const deliveries = receiver.requests.slice(before);
      expect(deliveries).toHaveLength(3);
      expect(new Set(deliveries.map((request) => request.headers['webhook-id'])).size).toBe(1);
      for (const delivery of deliveries)
        expect(verifiesWebhook(hooked.webhook_secret, delivery.headers, delivery.body)).toBe(true);
      expect(
        verifiesWebhook(hooked.webhook_secret, deliveries[2].headers, deliveries[2].body.replace('Thanks!', 'Thanks?')),
      ).toBe(false);
      // The documented example for receivers (docs/api/calls.md) agrees.
      const page = readFileSync(join(__dirname, '..', 'docs', 'api', 'calls.md'), 'utf8');
      const snippet = /<!-- webhook-verification-example -->\s*```js\n([\s\S]*?)```/.exec(page)![1];
      const verifyWebhook = new Function('require', `${snippet}\nreturn verifyWebhook;`)(require);
      expect(verifyWebhook(hooked.webhook_secret, deliveries[2].headers, deliveries[2].body)).toBe(true);
      expect(
        verifyWebhook(hooked.webhook_secret, deliveries[2].headers, deliveries[2].body.replace('Thanks!', 'Thanks?')),
      ).toBe(false);
      const payload = JSON.parse(deliveries[2].body);
      expect(payload).toMatchObject({
        event: 'call.ended',
        call: {
          id: call.id,
          status: 'completed',
          transcript: 'Thanks!',
          variables: { intent: 'renew' },
          answered_by: 'unknown',
          lead: null,
        },
      });
      expect(call.webhook_response).toMatchObject({ status: 200, body: '{"received":true}', attempts: 3 });
    }, 40_000);

    it('delivers nothing for an inactive webhook or a call still going', async () => {
      const inactive = await assistant({ webhook_url: `${receiver.origin}/hook`, is_webhook_active: false });
      const active = await assistant({ webhook_url: `${receiver.origin}/hook`, is_webhook_active: true });
      const before = receiver.requests.length;
      await ingest('quiet-1', base(inactive.id, { status: 'completed' })).expect(201);
      await ingest('quiet-2', base(active.id, { status: 'in-progress' })).expect(201);
      await ingest('marker', base(active.id, { status: 'completed' })).expect(201);
      await waitFor(async () => (receiver.requests.length > before ? true : undefined), 15_000);
      expect(receiver.requests.slice(before).map((request) => JSON.parse(request.body).call.external_id)).toEqual([
        'marker',
      ]);
    }, 30_000);

    it('delivers, once, a call whose delivery job was lost, and settles one whose job already finished', async () => {
      const hooked = await assistant({ webhook_url: `${receiver.origin}/hook`, is_webhook_active: true });
      const owed = async (externalId: string) =>
        (await stack.dataSource.query(`SELECT id, webhook_due FROM calls WHERE external_id = $1`, [externalId]))[0] as {
          id: number;
          webhook_due: boolean;
        };
      const deliveriesOf = (externalId: string) =>
        receiver.requests.filter((request) => JSON.parse(request.body).call.external_id === externalId);
      // The worker's own sweep, as its schedule runs it.
      const sweep = () => stack.worker!.get(CallWebhooks).sweepUndelivered();
      for (const externalId of ['lost-job-1', 'finished-job-1']) {
        await ingest(externalId, base(hooked.id, { status: 'completed' })).expect(201);
        await waitFor(async () => (deliveriesOf(externalId).length === 1 ? true : undefined), 15_000);
        // Delivered: nothing is owed any more.
        await waitFor(async () => ((await owed(externalId)).webhook_due === false ? true : undefined), 5_000);
      }
      // What a Redis failover can leave: the call says a delivery is owed, and its job is gone.
      const lost = await owed('lost-job-1');
      await (await stack.api.get(JobQueue).queue(Jobs.deliverCallWebhook.queue).getJob(`webhook-${lost.id}`))!.remove();
      await stack.dataSource.query(
        `UPDATE calls SET webhook_due = true, webhook_response = '{}', ended_at = now() - interval '1 hour'
          WHERE external_id = 'lost-job-1'`,
      );
      // A mark left behind by a worker that died between its delivery and clearing it: the job tells.
      await stack.dataSource.query(
        `UPDATE calls SET webhook_due = true, ended_at = ended_at - interval '1 hour' WHERE external_id = 'finished-job-1'`,
      );

      // The schedule's own run may come first; either way the delivery is queued once (its job id).
      await sweep();
      await waitFor(async () => (deliveriesOf('lost-job-1').length === 2 ? true : undefined), 15_000);
      await waitFor(async () => ((await owed('lost-job-1')).webhook_due === false ? true : undefined), 5_000);
      const [first, again] = deliveriesOf('lost-job-1');
      expect(again.headers['webhook-id']).toBe(first.headers['webhook-id']);
      expect(verifiesWebhook(hooked.webhook_secret, again.headers, again.body)).toBe(true);
      expect((await owed('finished-job-1')).webhook_due).toBe(false);
      expect(deliveriesOf('finished-job-1')).toHaveLength(1);
      // Nothing is owed now: another sweep queues nothing.
      expect((await sweep()).requeued).toBe(0);
      const metrics = await request(stack.worker!.getHttpServer()).get('/api/metrics').expect(200);
      expect(metrics.text).toMatch(/^jobs_requeued_total\{job="deliver-call-webhook"\} 1$/m);
    }, 60_000);

    it('goes on counting from the attempts of a lost delivery job, and gives up at the same total', async () => {
      const down = await assistant({ webhook_url: `${receiver.origin}/down`, is_webhook_active: true });
      const row = async () =>
        (
          await stack.dataSource.query(
            `SELECT id, webhook_due, webhook_response FROM calls WHERE external_id = 'down-1'`,
          )
        )[0] as { id: number; webhook_due: boolean; webhook_response: { attempts?: number; status?: number } };
      await ingest('down-1', base(down.id, { status: 'completed' })).expect(201);
      const first = await waitFor(async () => {
        const call = await row();
        return call?.webhook_response.attempts ? call : undefined;
      }, 15_000);
      expect(first).toMatchObject({ webhook_due: true, webhook_response: { status: 503 } });
      // Lost between two retries (a Redis failover), after 13 of its 14 attempts: the call remembers them.
      const queue = stack.api.get(JobQueue).queue(Jobs.deliverCallWebhook.queue);
      await waitFor(async () => {
        const job = await queue.getJob(`webhook-${first.id}`);
        // Removed between two attempts, waiting for its next: an attempt under way (its count written, its retry not
        // yet scheduled) would go on retrying and write its own counts over the call's. Until a removal is made here
        // the check answers undefined, polled again (a `false` would end the wait with the job still there).
        if (!job || (await job.getState()) !== 'delayed') return undefined;
        return job.remove().then(
          () => true as const,
          // Taken by the worker in between (locked): its next wait between two attempts comes soon.
          () => undefined,
        );
      }, 15_000);
      // The lost job is gone: a job found under its id from here on is one the sweep queued.
      expect(await queue.getJob(`webhook-${first.id}`)).toBeUndefined();
      await stack.dataSource.query(
        `UPDATE calls SET webhook_response = jsonb_set(webhook_response, '{attempts}', '13'),
                          ended_at = now() - interval '1 hour'
          WHERE id = $1`,
        [first.id],
      );
      // The delivery queued again by the sweep (run here as its schedule runs it: again until the call is settled, as a
      // sweep that found the removal not yet visible leaves it to the next) makes the 14th attempt, the last: nothing is
      // owed after it, and no retry follows.
      const settled = await waitFor(
        async () => {
          const call = await row();
          if (!call.webhook_due) return call;
          await stack.worker!.get(CallWebhooks).sweepUndelivered();
          return undefined;
        },
        30_000,
        500,
      );
      expect(settled.webhook_response).toMatchObject({ status: 503, attempts: 14 });
      await waitFor(async () =>
        (await (await queue.getJob(`webhook-${first.id}`))?.getState()) === 'failed' ? true : undefined,
      );
    }, 60_000);

    it('refuses a private address and records why', async () => {
      const blocked = await assistant({ webhook_url: 'http://10.0.0.1/hook', is_webhook_active: true });
      await ingest('private-1', base(blocked.id, { status: 'completed' })).expect(201);
      const call = await waitFor(async () => {
        const response = await stack.http.get('/api/user/calls').set(account.auth).expect(200);
        const found = response.body.data.find((item: { external_id: string }) => item.external_id === 'private-1');
        return found?.webhook_response?.error ? found : undefined;
      }, 15_000);
      expect(call.webhook_response).toMatchObject({
        status: null,
        error: expect.stringMatching(/not a public address/),
      });
    }, 30_000);
  });

  it('ends calls the runtime never finished, and their webhook fires', async () => {
    const hooked = await assistant({ webhook_url: `${receiver.origin}/hook`, is_webhook_active: true });
    await ingest('stale-1', base(hooked.id, { status: 'in-progress' })).expect(201);
    await stack.dataSource.query(
      `UPDATE calls SET updated_at = now() - interval '1 day' WHERE external_id = 'stale-1'`,
    );
    const before = receiver.requests.length;
    await stack.api.get(JobQueue).enqueue(Jobs.reapStaleCalls, {});
    const call = await waitFor(async () => {
      const response = await stack.http.get('/api/user/calls').set(account.auth).expect(200);
      const found = response.body.data.find((item: { external_id: string }) => item.external_id === 'stale-1');
      return found?.status === 'failed' ? found : undefined;
    }, 15_000);
    expect(call.evaluation.reason).toMatch(/No final status/);
    await waitFor(
      async () =>
        receiver.requests.slice(before).some((request) => request.body.includes('stale-1')) ? true : undefined,
      15_000,
    );
  }, 40_000);
});
