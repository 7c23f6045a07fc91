import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Jobs } from '@app/jobs';
import { JobQueue } from '@app/jobs';
import { AppProcess } from './support/app-process';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { serverSentEvents } from './support/server-sent-events';
import { type Stack, startStack } from './support/stack';
import { UNTIL_STALLED, waitFor, waitForJobResult } from './support/wait-for';

const RUNTIME_TOKEN = 'runtime-token-for-live-control-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };

interface StreamEvent {
  id?: string;
  event: string;
  data: Record<string, unknown>;
}

/** A server-sent event stream read as a browser's EventSource reads it, from outside, over HTTP. */
class EventStreamClient {
  readonly events: StreamEvent[] = [];
  closed = false;
  private readonly abort = new AbortController();
  private waiters: (() => void)[] = [];

  private constructor(readonly status: number) {}

  static async open(url: string, headers: Record<string, string>): Promise<EventStreamClient> {
    const abort = new AbortController();
    const response = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
    const client = new EventStreamClient(response.status);
    (client as unknown as { abort: AbortController }).abort = abort;
    if (response.status !== 200) {
      client.body = await response.json();
      client.closed = true;
      return client;
    }
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    void client.read(response.body!);
    return client;
  }

  body: unknown;

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const { id, event, data } of serverSentEvents(body as unknown as AsyncIterable<Uint8Array>)) {
        this.events.push({ id, event, data: JSON.parse(data) });
        this.wake();
      }
    } catch {
      // Aborted by the test.
    }
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Waits (at most `timeoutMs`) until `count` events arrived. */
  async next(count: number, timeoutMs = 5000): Promise<StreamEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      if (this.closed) throw new Error(`stream closed after ${this.events.length} of ${count} events`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.events.length} of ${count} events within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.events.slice(0, count);
  }

  async untilClosed(timeoutMs = 10_000): Promise<void> {
    await waitFor(async () => (this.closed ? true : undefined), timeoutMs, 20);
  }

  close(): void {
    this.abort.abort();
  }
}

/**
 * The owner steers and watches a live call from outside: control messages reach the runtime's stream within a second
 * and replay after a reconnect, a hang-up the runtime does not confirm is enforced at the provider, and the call's
 * events reach a watcher on another API process than the one that stored them.
 */
describe('Live calls: the owner’s control and view', () => {
  let stack: Stack;
  let base: string;
  let owner: TestAccount;
  let number: string;
  const streams: EventStreamClient[] = [];

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    const server = stack.api.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
    owner = await createAccount(stack);
    const languageId = (await stack.http.get('/api/user/assistants/languages').set(owner.auth)).body[0].id as number;
    const trunk = (
      await stack.http.post('/api/user/phone-numbers/sip-trunks').set(owner.auth).send(sipTrunkRequest()).expect(201)
    ).body.data as { id: number; phone_number: string };
    await stack.http
      .post('/api/user/assistant')
      .set(owner.auth)
      .send({ name: 'Front desk', type: 'inbound', language_id: languageId, phone_number_id: trunk.id })
      .expect(201);
    number = trunk.phone_number;
  }, 120_000);
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(async () => {
    await stack?.close();
  });

  /** A live inbound call: its external id, id and call token. */
  const liveCall = async () => {
    const externalId = `live-${randomUUID()}`;
    const session = await stack.http
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'inbound', client_phone_number: '+14155550199', assistant_phone_number: number })
      .expect(201);
    return {
      externalId,
      id: session.body.data.call.id as number,
      token: { Authorization: `Bearer ${session.body.data.token as string}` },
    };
  };
  const stream = async (path: string, headers: Record<string, string>, origin = base) => {
    const opened = await EventStreamClient.open(`${origin}${path}`, headers);
    streams.push(opened);
    return opened;
  };
  const control = (id: number, action: string, body?: object, as: TestAccount = owner) =>
    stack.http.post(`/api/user/calls/${id}/${action}`).set(as.auth).send(body);
  const finish = (externalId: string, token: Record<string, string>) =>
    stack.http
      .put(`/api/internal/calls/${externalId}`)
      .set(token)
      .send({ status: 'completed', duration: 30 })
      .expect(200);
  const recorded = (room: string) =>
    stack.dataSource.query(`SELECT operation FROM local_call_control_requests WHERE room = $1`, [room]);

  it('hands say and instruct to the runtime’s control stream within a second, in order', async () => {
    const call = await liveCall();
    const runtime = await stream(`/internal/calls/${call.externalId}/control`, call.token);
    expect(runtime.status).toBe(200);
    const sent = Date.now();
    const said = await control(call.id, 'say', { text: 'One moment please.' }).expect(202);
    expect(said.body).toEqual({ message: 'The message is on its way to the call.' });
    const [say] = await runtime.next(1, 1000);
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(say).toMatchObject({ event: 'control', data: { action: 'say', text: 'One moment please.' } });
    expect(say.id).toBe(String(say.data.id));
    await control(call.id, 'instruct', { text: 'Offer the caller a callback tomorrow.' }).expect(202);
    const [, instruct] = await runtime.next(2, 1000);
    expect(instruct.data).toMatchObject({ action: 'instruct', text: 'Offer the caller a callback tomorrow.' });
    // The owner sees what was asked among the call's events.
    const events = await stack.http.get(`/api/user/calls/${call.id}/events`).set(owner.auth).expect(200);
    expect(events.body.data).toEqual([
      expect.objectContaining({ type: 'control', action: 'say', text: 'One moment please.' }),
      expect.objectContaining({ type: 'control', action: 'instruct' }),
    ]);
    await finish(call.externalId, call.token);
    await runtime.untilClosed();
    expect(runtime.events.at(-1)?.event).toBe('end');
  });

  it('replays what the runtime missed after it reconnects with Last-Event-ID, nothing twice', async () => {
    const call = await liveCall();
    const first = await stream(`/internal/calls/${call.externalId}/control`, call.token);
    await control(call.id, 'say', { text: 'First.' }).expect(202);
    const [seen] = await first.next(1);
    first.close();
    await control(call.id, 'say', { text: 'Second.' }).expect(202);
    await control(call.id, 'instruct', { text: 'Third.' }).expect(202);
    const again = await stream(`/internal/calls/${call.externalId}/control`, {
      ...call.token,
      'Last-Event-ID': seen.id!,
    });
    const replayed = await again.next(2);
    expect(replayed.map((event) => event.data.text)).toEqual(['Second.', 'Third.']);
    await control(call.id, 'say', { text: 'Fourth.' }).expect(202);
    expect((await again.next(3))[2].data.text).toBe('Fourth.');
    // From the start, everything once.
    const fromStart = await stream(`/internal/calls/${call.externalId}/control`, deployment);
    expect((await fromStart.next(4)).map((event) => event.data.text)).toEqual([
      'First.',
      'Second.',
      'Third.',
      'Fourth.',
    ]);
    expect(fromStart.events).toHaveLength(4);
    const bad = await stream(`/internal/calls/${call.externalId}/control`, { ...call.token, 'Last-Event-ID': 'x1' });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ errors: { 'Last-Event-ID': [expect.any(String)] } });
    await finish(call.externalId, call.token);
  });

  it('enforces an unconfirmed hang-up at the provider after 5 seconds, and leaves a confirmed one alone', async () => {
    const call = await liveCall();
    const runtime = await stream(`/internal/calls/${call.externalId}/control`, call.token);
    const asked = Date.now();
    expect((await control(call.id, 'hangup').expect(202)).body).toEqual({ message: 'The call is being hung up.' });
    expect((await runtime.next(1, 1000))[0].data).toMatchObject({ action: 'hangup' });
    // The runtime does nothing: the worker closes the room and ends the call.
    const ended = await waitFor(async () => {
      const row = (await stack.http.get(`/api/user/calls/${call.id}`).set(owner.auth).expect(200)).body.data;
      return row.status === 'ended' ? row : undefined;
    }, 20_000);
    expect(Date.now() - asked).toBeGreaterThanOrEqual(4500);
    expect(ended).toMatchObject({ status: 'ended', ended_reason: 'owner_hangup' });
    expect(await recorded(call.externalId)).toEqual([{ operation: 'endCall' }]);
    await runtime.untilClosed();
    await control(call.id, 'say', { text: 'Too late.' }).expect(409);

    // A runtime that ends the call itself in time is not overruled.
    const confirmed = await liveCall();
    const queued = await control(confirmed.id, 'hangup').expect(202);
    expect(queued.status).toBe(202);
    await finish(confirmed.externalId, confirmed.token);
    const jobs = stack.api.get(JobQueue).queue(Jobs.enforceOwnerHangup.queue);
    const controlId = (
      await stack.dataSource.query(`SELECT id FROM call_events WHERE call_id = $1 AND type = 'control'`, [confirmed.id])
    )[0].id;
    const outcome = await waitForJobResult(jobs, `owner-hangup-${controlId}`);
    expect(outcome).toEqual({ status: 'confirmed' });
    expect(await recorded(confirmed.externalId)).toEqual([]);
    const row = (await stack.http.get(`/api/user/calls/${confirmed.id}`).set(owner.auth).expect(200)).body.data;
    expect(row.status).toBe('completed');
  }, 60_000);

  it('answers 409 for a finished call, 404 for another account’s or none, and 422 naming the field', async () => {
    const call = await liveCall();
    const stranger = await createAccount(stack);
    for (const action of ['hangup', 'say', 'instruct']) {
      await control(call.id, action, { text: 'Hello' }, stranger).expect(404);
      await control(999_999_999, action, { text: 'Hello' }).expect(404);
    }
    expect((await stream(`/user/calls/${call.id}/events/stream`, stranger.auth)).status).toBe(404);
    for (const body of [
      {},
      { text: '' },
      { text: '   ' },
      { text: 42 },
      { text: ['a'] },
      { text: { a: 1 } },
      { text: 'x'.repeat(2001) },
    ]) {
      for (const action of ['say', 'instruct']) {
        const refused = await control(call.id, action, body).expect(422);
        expect(Object.keys(refused.body.errors)).toEqual(['text']);
      }
    }
    await stack.http
      .post(`/api/user/calls/${call.id}/say`)
      .set(owner.auth)
      .set('Content-Type', 'application/json')
      .send('[1,2]')
      .expect((response) => expect([400, 422]).toContain(response.status));
    await finish(call.externalId, call.token);
    for (const action of ['hangup', 'say', 'instruct']) {
      const refused = await control(call.id, action, { text: 'Hello' }).expect(409);
      expect(refused.body).toEqual({ message: 'The call has already ended.' });
    }
    const watch = await stream(`/user/calls/${call.id}/events/stream`, owner.auth);
    expect(watch.status).toBe(409);
    // A call token of a finished call opens nothing; the deployment's token is told the call ended.
    expect((await stream(`/internal/calls/${call.externalId}/control`, call.token)).status).toBe(401);
    expect((await stream(`/internal/calls/${call.externalId}/control`, deployment)).status).toBe(409);
  });

  it('closes the watchers’ and the control stream of a call the reaper ended, without waiting for a heartbeat', async () => {
    const call = await liveCall();
    const watcher = await stream(`/user/calls/${call.id}/events/stream`, owner.auth);
    const runtime = await stream(`/internal/calls/${call.externalId}/control`, deployment);
    expect([watcher.status, runtime.status]).toEqual([200, 200]);
    // The runtime died and wrote nothing for a day.
    await stack.dataSource.query(`UPDATE calls SET updated_at = now() - interval '1 day' WHERE id = $1`, [call.id]);
    const reaped = Date.now();
    await stack.api.get(JobQueue).enqueue(Jobs.reapStaleCalls, {});
    await watcher.untilClosed(5000);
    await runtime.untilClosed(5000);
    expect(Date.now() - reaped).toBeLessThan(5000);
    expect(watcher.events.map((event) => event.event)).toEqual(['end']);
    expect(runtime.events.map((event) => event.event)).toEqual(['end']);
    const stored = await stack.http.get(`/api/user/calls/${call.id}`).set(owner.auth).expect(200);
    expect(stored.body.data.status).toBe('failed');
  });

  describe('with a second API process', () => {
    let second: AppProcess;
    beforeAll(async () => {
      second = await AppProcess.start({ RUNTIME_API_TOKEN: RUNTIME_TOKEN, LIVE_STREAMS_PER_PROCESS: '3' });
    }, 120_000);
    afterAll(async () => {
      await second?.stop();
    });

    it(
      'delivers each event stored through one process to a watcher on another, resumably, until the call ends',
      async () => {
        const call = await liveCall();
        const watcher = await stream(`/user/calls/${call.id}/events/stream`, owner.auth, second.baseUrl);
        expect(watcher.status).toBe(200);
        const turn = (seq: number, text: string) =>
          stack.http
            .post(`/api/internal/calls/${call.externalId}/events`)
            .set(call.token)
            .send({
              events: [
                { seq, type: 'transcript', role: seq % 2 ? 'user' : 'assistant', text, at: new Date().toISOString() },
              ],
            })
            .expect(200);
        const stored = Date.now();
        await turn(1, 'Hello, I would like to book a table.');
        const [first] = await watcher.next(1, 1000);
        expect(Date.now() - stored).toBeLessThan(1000);
        expect(first).toMatchObject({ event: 'transcript', data: { type: 'transcript', seq: 1, role: 'user' } });
        await turn(2, 'Of course, for how many?');
        await control(call.id, 'instruct', { text: 'Mention the terrace.' }).expect(202);
        const seen = await watcher.next(3);
        expect(seen.map((event) => event.event)).toEqual(['transcript', 'transcript', 'control']);
        watcher.close();
        await turn(3, 'Four people.');
        const resumed = await stream(
          `/user/calls/${call.id}/events/stream`,
          { ...owner.auth, 'Last-Event-ID': seen[2].id! },
          second.baseUrl,
        );
        expect((await resumed.next(1))[0].data).toMatchObject({ seq: 3, text: 'Four people.' });
        await finish(call.externalId, call.token);
        await resumed.untilClosed();
        expect(resumed.events.map((event) => event.event)).toEqual(['transcript', 'end']);
      },
      UNTIL_STALLED,
    );

    it('sends a stream past the process’s bound to another process with 503 and Retry-After, and takes it once one closes', async () => {
      const call = await liveCall();
      const path = `${second.baseUrl}/user/calls/${call.id}/events/stream`;
      const held: EventStreamClient[] = [];
      // Streams of earlier tests may still be closing on the server: open until the process refuses one.
      let last: EventStreamClient | undefined;
      while (
        held.length < 6 &&
        (last = await stream(`/user/calls/${call.id}/events/stream`, owner.auth, second.baseUrl)).status === 200
      ) {
        held.push(last);
      }
      expect(last!.status).toBe(503);
      expect(last!.body).toEqual({ message: 'Service temporarily unavailable. Please try again.' });
      const refused = await fetch(path, { headers: { Accept: 'text/event-stream', ...owner.auth } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('2');
      await refused.body?.cancel();
      for (const each of held) each.close();
      await waitFor(async () => {
        const again = await EventStreamClient.open(path, owner.auth);
        streams.push(again);
        return again.status === 200 ? true : undefined;
      }, 10_000);
      await finish(call.externalId, call.token);
    });

    it('hands the owner’s control posted to one process to the runtime’s stream on the other', async () => {
      const call = await liveCall();
      const runtime = await stream(`/internal/calls/${call.externalId}/control`, call.token, second.baseUrl);
      const sent = Date.now();
      await control(call.id, 'say', { text: 'Hello from the owner.' }).expect(202);
      expect((await runtime.next(1, 1000))[0].data).toMatchObject({ action: 'say', text: 'Hello from the owner.' });
      expect(Date.now() - sent).toBeLessThan(1000);
      await finish(call.externalId, call.token);
      await runtime.untilClosed();
    });
  });
});
