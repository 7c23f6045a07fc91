import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createClient, idempotencyKey, RequestTimeoutError } from '../src/index.js';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** A server on 127.0.0.1 answering each request with the next handler, recording what it was sent. */
async function scriptedServer(...handlers: Handler[]) {
  const received: { method: string; url: string; key: string | undefined; at: number }[] = [];
  const server: Server = createServer((request, response) => {
    received.push({
      method: request.method!,
      url: request.url!,
      key: request.headers['idempotency-key'] as string | undefined,
      at: Date.now(),
    });
    request.resume();
    const handler = handlers.shift();
    if (handler) handler(request, response);
    else response.writeHead(599).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { baseUrl, received, close };
}

const answer =
  (status: number, body: unknown = {}, headers: Record<string, string> = {}): Handler =>
  (_request, response) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
/** Never answers: the client's timeout must end the attempt. */
const silent: Handler = () => undefined;
/** Drops the connection without an answer: a network failure. */
const dropped: Handler = (request) => request.socket.destroy();

const page = { data: [], current_page: 1, per_page: 10, total: 0 };

describe('The SDK client against a server', () => {
  let server: Awaited<ReturnType<typeof scriptedServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('reads again after a dropped connection, 408, 429, 500, 502 and 503, and answers with the success', async () => {
    server = await scriptedServer(
      dropped,
      answer(408, { message: 'Request Timeout' }, { 'retry-after': '0' }),
      answer(429, { message: 'Too Many Attempts.' }, { 'retry-after': '0' }),
      answer(500, { message: 'Server Error' }, { 'retry-after': '0' }),
      answer(502, { message: 'Bad Gateway' }, { 'retry-after': '0' }),
      answer(503, { message: 'Service Unavailable' }, { 'retry-after': '0' }),
      answer(200, page),
    );
    const api = createClient({ baseUrl: server.baseUrl, token: 'vak_x', retries: 6 });
    const { data, response } = await api.GET('/api/user/folders');
    expect({ status: response.status, data }).toEqual({ status: 200, data: page });
    expect(server.received.map((request) => `${request.method} ${request.url}`)).toEqual(
      Array(7).fill('GET /api/user/folders'),
    );
  });

  it('waits as Retry-After says, in seconds or as a date', async () => {
    server = await scriptedServer(
      answer(429, { message: 'Too Many Attempts.' }, { 'retry-after': '1' }),
      // Two seconds from when it answers, to the whole second an HTTP date holds.
      (request, response) =>
        answer(503, {}, { 'retry-after': new Date(Date.now() + 2_000).toUTCString() })(request, response),
      answer(200, page),
    );
    await createClient({ baseUrl: server.baseUrl }).GET('/api/user/folders');
    const [first, second, third] = server.received.map((request) => request.at);
    expect(second - first).toBeGreaterThanOrEqual(950);
    // An HTTP date has whole seconds: at least the part of a second left, at most two.
    expect(third - second).toBeGreaterThanOrEqual(900);
    expect(third - second).toBeLessThan(2_500);
  });

  it('gives up after its retries and answers with the last failure', async () => {
    const unavailable = () => answer(503, { message: 'Service Unavailable' }, { 'retry-after': '0' });
    server = await scriptedServer(unavailable(), unavailable(), unavailable(), answer(200, page));
    const { error, response } = await createClient({ baseUrl: server.baseUrl }).GET('/api/user/folders');
    expect({ status: response.status, error }).toEqual({ status: 503, error: { message: 'Service Unavailable' } });
    expect(server.received).toHaveLength(3);
  });

  it('sends a create again only with an Idempotency-Key, the same key each time', async () => {
    server = await scriptedServer(answer(500, { message: 'Server Error' }), answer(201, { data: { id: 1 } }));
    const api = createClient({ baseUrl: server.baseUrl });
    const unkeyed = await api.POST('/api/user/knowledgebases', { body: { name: 'FAQ' } });
    expect(unkeyed.response.status).toBe(500);
    expect(server.received).toHaveLength(1);

    server.received.length = 0;
    const handlers = [answer(502, {}, { 'retry-after': '0' }), answer(201, { data: { id: 1 } })];
    await server.close();
    server = await scriptedServer(...handlers);
    const key = idempotencyKey();
    const keyed = await createClient({ baseUrl: server.baseUrl }).POST('/api/user/knowledgebases', {
      body: { name: 'FAQ' },
      params: { header: { 'Idempotency-Key': key } },
    });
    expect(keyed.response.status).toBe(201);
    expect(server.received.map((request) => request.key)).toEqual([key, key]);
  });

  it('abandons an attempt at its timeout, and retries a read that timed out', async () => {
    server = await scriptedServer(silent, answer(200, page));
    const started = Date.now();
    const { data } = await createClient({ baseUrl: server.baseUrl, timeoutMs: 300 }).GET('/api/user/folders');
    expect(data).toEqual(page);
    expect(server.received).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });

  it('abandons attempts at their timeout while memory is being collected', async () => {
    // A Request collected while its fetch waits used to take its timeout with it: the call never ended.
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    server = await scriptedServer(silent, silent, silent, answer(200, page));
    const collecting = setInterval(collect, 20);
    try {
      const api = createClient({ baseUrl: server.baseUrl, timeoutMs: 200, retries: 0 });
      const outcomes = await Promise.all(
        [1, 2, 3].map(() =>
          Promise.race([
            api.GET('/api/user/folders').catch((error: unknown) => (error as Error).name),
            new Promise((resolve) => setTimeout(resolve, 5_000, 'still waiting after 5 s')),
          ]),
        ),
      );
      expect(outcomes).toEqual(Array(3).fill('RequestTimeoutError'));
    } finally {
      clearInterval(collecting);
    }
  });

  it('throws a RequestTimeoutError naming the request when no attempt is answered in time', async () => {
    server = await scriptedServer(silent, silent);
    const api = createClient({ baseUrl: server.baseUrl, timeoutMs: 200, retries: 1 });
    const failure = await api.GET('/api/user/folders').catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RequestTimeoutError);
    expect((failure as RequestTimeoutError).message).toBe(
      `GET ${server.baseUrl}/api/user/folders got no answer within 200 ms`,
    );
    expect(server.received).toHaveLength(2);
  });

  it('stops at once when the caller aborts, without retrying', async () => {
    server = await scriptedServer(silent, answer(200, page));
    const controller = new AbortController();
    const pending = createClient({ baseUrl: server.baseUrl }).GET('/api/user/folders', { signal: controller.signal });
    // Aborted once the server has the request.
    const poll = setInterval(() => server!.received.length && controller.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    clearInterval(poll);
    expect(server.received).toHaveLength(1);
  });
});
