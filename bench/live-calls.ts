/**
 * Live calls watched and steered, against the built apps in their own processes (production settings): two API
 * processes and one worker on the run's own database and private Redis.
 *   1. BENCH_ACCOUNTS accounts open BENCH_CALLS inbound calls between them (sessions with the deployment token); every
 *      call's runtime holds its control stream (`GET /api/internal/calls/{external_id}/control`), on either process;
 *   2. BENCH_WATCHERS owners each watch one call (`GET /api/user/calls/{id}/events/stream`) on the other process than
 *      the one its turns are posted to, so every event crosses processes through the pub/sub;
 *   3. every call posts a transcript turn every BENCH_INTERVAL_MS for BENCH_SECONDS (its next post waits for the
 *      answer to the previous one, as an agent's does), and each watcher's owner tells its call to `say` something
 *      every BENCH_CONTROL_INTERVAL_MS;
 *   4. then every call is ended, and each stream must have sent exactly what was stored, in order, nothing twice:
 *      every acknowledged turn of a watched call to its watcher, every accepted control message to its runtime's
 *      control stream and, as a `control` event, to its watcher.
 * Latency is from the moment the post was sent (it includes the post's own time) to the moment the stream delivered it.
 *
 *   npm run bench:live-calls                  (builds first; 60 s, 200 calls, 50 watchers)
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/live-calls.ts --seconds 10
 *
 * Flags (or their environment variables): --seconds (BENCH_SECONDS, 60), --calls (BENCH_CALLS, 200), --watchers
 * (BENCH_WATCHERS, 50), --accounts (BENCH_ACCOUNTS, 10), --interval-ms (BENCH_INTERVAL_MS, 1000),
 * --control-interval-ms (BENCH_CONTROL_INTERVAL_MS, 2000). Stopped and cleaned up after BENCH_DEADLINE_SECONDS
 * (default 240 plus twice the run's duration).
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { serverSentEvents } from '../test/support/server-sent-events';
import { BENCH_RUNTIME_TOKEN } from './support/http-load';
import {
  API_ENTRY,
  freePort,
  productionEnv,
  startServer,
  waitForHttp,
  WORKER_ENTRY,
  type ServerProcess,
} from './support/processes';
import { fixed, nowMs, onInterrupt, percentile, printTable, runMain, setting } from './support/report';
import { ApiClient, createBenchEnvironment } from './support/stack';

const SECONDS = setting('seconds', 'BENCH_SECONDS', 60);
const CALLS = setting('calls', 'BENCH_CALLS', 200);
const WATCHERS = Math.min(CALLS, setting('watchers', 'BENCH_WATCHERS', 50));
const ACCOUNTS = setting('accounts', 'BENCH_ACCOUNTS', 10);
const INTERVAL_MS = setting('interval-ms', 'BENCH_INTERVAL_MS', 1000);
const CONTROL_INTERVAL_MS = setting('control-interval-ms', 'BENCH_CONTROL_INTERVAL_MS', 2000);
const DEADLINE_SECONDS = setting('deadline-seconds', 'BENCH_DEADLINE_SECONDS', 240 + 2 * SECONDS);
const REQUEST_TIMEOUT_MS = 30_000;
/** How long the streams get to deliver what was stored before the calls ended. */
const DRAIN_MS = 30_000;

const load = () =>
  loadavg()
    .map((value) => fixed(value, 2))
    .join(' ');

interface StreamEvent {
  id: number;
  event: string;
  data: any;
  at: number;
}

/** A server-sent event stream read as EventSource reads it; `ended` once the server sent `end` and closed. */
class EventStream {
  readonly events: StreamEvent[] = [];
  ended = false;
  error?: string;
  private readonly abort = new AbortController();
  private reading?: Promise<void>;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly onEvent: (event: StreamEvent) => void = () => undefined,
  ) {}

  async open(): Promise<void> {
    const response = await fetch(this.url, {
      headers: { accept: 'text/event-stream', ...this.headers },
      signal: this.abort.signal,
    });
    if (response.status !== 200) throw new Error(`${this.url} answered ${response.status}: ${await response.text()}`);
    this.reading = this.read(response.body!);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const { id, event, data } of serverSentEvents(body as unknown as AsyncIterable<Uint8Array>)) {
        if (event === 'end') {
          this.ended = true;
          continue;
        }
        const parsed = { id: Number(id), event, data: JSON.parse(data), at: nowMs() };
        this.events.push(parsed);
        this.onEvent(parsed);
      }
    } catch (error) {
      if (!this.abort.signal.aborted) this.error = (error as Error).message;
    }
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.reading;
  }
}

async function request(
  pool: Pool,
  method: 'POST' | 'PUT',
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; json: any }> {
  try {
    const response = await pool.request({
      method,
      path,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      headersTimeout: REQUEST_TIMEOUT_MS,
      bodyTimeout: REQUEST_TIMEOUT_MS,
    });
    const text = await response.body.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, json };
  } catch (error) {
    return { status: 0, json: { error: String(error) } };
  }
}

interface LiveCall {
  externalId: string;
  id: number;
  token: string;
  owner: ApiClient;
  /** Which API process its turns are posted to (0 or 1); its watcher and control stream use the other. */
  home: number;
  /** seq -> when the post was sent, for each acknowledged turn. */
  turns: Map<number, number>;
  /** control text -> when the owner's post was sent, for each accepted one. */
  controls: Map<string, number>;
}

async function main(): Promise<void> {
  const loadBefore = load();
  const deadline = setTimeout(() => {
    console.error(`Deadline of ${DEADLINE_SECONDS} s passed: stopping`);
    process.exitCode = 1;
    process.kill(process.pid, 'SIGTERM');
  }, DEADLINE_SECONDS * 1000);
  deadline.unref();

  const environment = await createBenchEnvironment();
  const ports = [await freePort(), await freePort()];
  const origins = ports.map((port) => `http://127.0.0.1:${port}`);
  const workerPort = await freePort();
  const common = {
    ...productionEnv(environment),
    RUNTIME_API_TOKEN: BENCH_RUNTIME_TOKEN,
    WORKER_PORT: String(workerPort),
    ACCOUNT_MAX_CONCURRENT_CALLS: String(CALLS),
  };
  const processes: ServerProcess[] = [];
  const pools = origins.map((origin) => new Pool(origin, { connections: CALLS, pipelining: 1 }));
  const streams: EventStream[] = [];
  const closeClients = async () => {
    await Promise.allSettled(streams.map((stream) => stream.close()));
    await Promise.allSettled(pools.map((pool) => pool.destroy()));
  };
  const forgetClients = onInterrupt(closeClients);
  try {
    for (const port of ports) processes.push(startServer([API_ENTRY], { ...common, PORT: String(port) }));
    processes.push(startServer([WORKER_ENTRY], common));
    for (const [index, origin] of origins.entries()) await waitForHttp(`${origin}/api/health`, processes[index].child);
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, processes[2].child);

    // The accounts, each with a SIP trunk number answered by an inbound assistant.
    const owners: { client: ApiClient; number: string }[] = [];
    for (let index = 0; index < ACCOUNTS; index++) {
      const client = await ApiClient.register(origins[0]);
      const languages = await client.request<{ id: number }[]>('GET', '/api/user/assistants/languages');
      const number = await client.createAnsweredNumber({ name: 'Front desk', language_id: languages[0].id });
      owners.push({ client, number });
    }

    // 1. The calls, and their runtimes' control streams.
    const calls: LiveCall[] = [];
    for (let index = 0; index < CALLS; index++) {
      const owner = owners[index % owners.length];
      const externalId = `bench-live-${index}`;
      const home = index % 2;
      const session = await request(
        pools[home],
        'POST',
        `/api/internal/calls/${externalId}/session`,
        BENCH_RUNTIME_TOKEN,
        {
          type: 'inbound',
          client_phone_number: `+1415${3000000 + index}`,
          assistant_phone_number: owner.number,
        },
      );
      if (session.status !== 201) throw new Error(`session ${index} answered ${session.status}`);
      calls.push({
        externalId,
        id: session.json.data.call.id,
        token: session.json.data.token,
        owner: owner.client,
        home,
        turns: new Map(),
        controls: new Map(),
      });
    }
    const controlLatencies: number[] = [];
    const controlStreams = new Map<LiveCall, EventStream>();
    for (const call of calls) {
      const stream = new EventStream(
        `${origins[1 - call.home]}/api/internal/calls/${call.externalId}/control`,
        { authorization: `Bearer ${call.token}` },
        (event) => {
          const sent = call.controls.get(event.data.text);
          if (sent !== undefined) controlLatencies.push(event.at - sent);
        },
      );
      streams.push(stream);
      controlStreams.set(call, stream);
      await stream.open();
    }

    // 2. The watchers.
    const eventLatencies: number[] = [];
    const watched = calls.slice(0, WATCHERS);
    const watchers = new Map<LiveCall, EventStream>();
    for (const call of watched) {
      const stream = new EventStream(
        `${origins[1 - call.home]}/api/user/calls/${call.id}/events/stream`,
        { authorization: `Bearer ${call.owner.token}` },
        (event) => {
          if (event.event !== 'transcript') return;
          const sent = call.turns.get(event.data.seq);
          if (sent !== undefined) eventLatencies.push(event.at - sent);
        },
      );
      streams.push(stream);
      watchers.set(call, stream);
      await stream.open();
    }

    // 3. Turns and the owners' control, for SECONDS.
    const loadAtStart = load();
    const begun = nowMs();
    const until = begun + SECONDS * 1000;
    let turnErrors = 0;
    let controlErrors = 0;
    const talk = async (call: LiveCall, index: number) => {
      await sleep((index * INTERVAL_MS) / calls.length);
      for (let seq = 0; nowMs() < until; seq++) {
        const due = begun + (index * INTERVAL_MS) / calls.length + seq * INTERVAL_MS;
        await sleep(Math.max(0, due - nowMs()));
        const sent = nowMs();
        // The turn may be delivered before its post's answer is read: its send time is known first.
        call.turns.set(seq, sent);
        const answer = await request(
          pools[call.home],
          'POST',
          `/api/internal/calls/${call.externalId}/events`,
          call.token,
          {
            events: [
              {
                seq,
                type: 'transcript',
                role: seq % 2 ? 'assistant' : 'user',
                text: `Turn ${seq} of call ${index}.`,
                at: new Date().toISOString(),
              },
            ],
          },
        );
        if (answer.status !== 200) {
          call.turns.delete(seq);
          turnErrors++;
        }
      }
    };
    const steer = async (call: LiveCall, index: number) => {
      await sleep((index * CONTROL_INTERVAL_MS) / watched.length);
      for (let count = 0; nowMs() < until; count++) {
        const due = begun + (index * CONTROL_INTERVAL_MS) / watched.length + count * CONTROL_INTERVAL_MS;
        await sleep(Math.max(0, due - nowMs()));
        const text = `Owner message ${count} for call ${index}.`;
        call.controls.set(text, nowMs());
        const answer = await request(pools[call.home], 'POST', `/api/user/calls/${call.id}/say`, call.owner.token, {
          text,
        });
        if (answer.status !== 202) {
          call.controls.delete(text);
          controlErrors++;
        }
      }
    };
    await Promise.all([...calls.map(talk), ...watched.map(steer)]);
    const seconds = (nowMs() - begun) / 1000;
    const loadAtEnd = load();

    // 4. Every call ends; each stream must have delivered exactly what was stored.
    for (const call of calls) {
      const ended = await request(pools[call.home], 'PUT', `/api/internal/calls/${call.externalId}`, call.token, {
        status: 'completed',
        duration: SECONDS,
      });
      if (ended.status !== 200) throw new Error(`ending ${call.externalId} answered ${ended.status}`);
    }
    const drainUntil = nowMs() + DRAIN_MS;
    while (nowMs() < drainUntil && [...controlStreams.values(), ...watchers.values()].some((stream) => !stream.ended)) {
      await sleep(100);
    }
    let lostTurns = 0;
    let extraTurns = 0;
    let outOfOrder = 0;
    let lostControls = 0;
    let extraControls = 0;
    let unended = 0;
    for (const call of watched) {
      const stream = watchers.get(call)!;
      if (!stream.ended) unended++;
      const seqs = stream.events
        .filter((event) => event.event === 'transcript')
        .map((event) => event.data.seq as number);
      const expected = [...call.turns.keys()].sort((a, b) => a - b);
      lostTurns += expected.filter((seq) => !seqs.includes(seq)).length;
      extraTurns += seqs.length - new Set(seqs).size + seqs.filter((seq) => !call.turns.has(seq)).length;
      const ids = stream.events.map((event) => event.id);
      outOfOrder += ids.filter((id, index) => index > 0 && id <= ids[index - 1]).length;
      const seenControls = stream.events.filter((event) => event.event === 'control').map((event) => event.data.text);
      lostControls += [...call.controls.keys()].filter((text) => !seenControls.includes(text)).length;
    }
    for (const call of calls) {
      const stream = controlStreams.get(call)!;
      if (!stream.ended) unended++;
      const texts = stream.events.map((event) => event.data.text as string);
      lostControls += [...call.controls.keys()].filter((text) => !texts.includes(text)).length;
      extraControls += texts.length - new Set(texts).size + texts.filter((text) => !call.controls.has(text)).length;
    }
    const acknowledgedTurns = calls.reduce((sum, call) => sum + call.turns.size, 0);
    const acceptedControls = calls.reduce((sum, call) => sum + call.controls.size, 0);
    const errors = streams.filter((stream) => stream.error).length;

    const conditions =
      `Load average before ${loadBefore}, at the start of the run ${loadAtStart}, at its end ${loadAtEnd}; ` +
      `${seconds.toFixed(1)} s; a turn every ${INTERVAL_MS} ms a call, a say every ${CONTROL_INTERVAL_MS} ms a watcher.`;
    printTable(
      `Live calls: ${CALLS} calls, ${WATCHERS} watchers, 2 API processes and a worker`,
      ['delivered', 'count', 'p50 ms', 'p95 ms', 'p99 ms', 'max ms'],
      [
        ['stored turn -> watcher (other process)', eventLatencies],
        ['owner say -> runtime control stream', controlLatencies],
      ].map(([label, values]) => {
        const samples = values as number[];
        return [
          label as string,
          String(samples.length),
          fixed(percentile(samples, 50), 1),
          fixed(percentile(samples, 95), 1),
          fixed(percentile(samples, 99), 1),
          fixed(samples.length ? Math.max(...samples) : Number.NaN, 1),
        ];
      }),
      [conditions],
    );
    printTable(
      'What the streams delivered, against what was stored',
      [
        'turns acknowledged',
        'turn errors',
        'says accepted',
        'say errors',
        'lost turns',
        'extra turns',
        'out of order',
        'lost controls',
        'extra controls',
        'streams not ended',
        'stream errors',
      ],
      [
        [
          acknowledgedTurns,
          turnErrors,
          acceptedControls,
          controlErrors,
          lostTurns,
          extraTurns,
          outOfOrder,
          lostControls,
          extraControls,
          unended,
          errors,
        ].map(String),
      ],
    );
    if (lostTurns + extraTurns + outOfOrder + lostControls + extraControls + unended + errors > 0) process.exitCode = 1;
  } finally {
    forgetClients();
    await closeClients();
    await Promise.allSettled(processes.map((each) => each.stop()));
    await environment.clean();
  }
}

runMain(main);
