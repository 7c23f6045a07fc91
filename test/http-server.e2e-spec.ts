import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { createApiApp } from '../apps/api/src/api.app';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack, testConfig } from './support/stack';
import { TestRoutesModule, slowRequests } from './support/test-routes.module';
import { waitFor } from './support/wait-for';

/** A raw connection to a listening app: what a client (or a hostile one) sends, byte by byte, and what it gets. */
class RawConnection {
  private received = '';
  closed = false;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (this.received += chunk));
    socket.on('close', () => (this.closed = true));
    socket.on('error', () => undefined);
  }

  static async open(app: INestApplication): Promise<RawConnection> {
    const { port } = app.getHttpServer().address();
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    return new RawConnection(socket);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next complete answer (head and a Content-Length body), removed from what was received. */
  async answer(timeoutMs = 5_000): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    let parsed: { status: number; headers: Record<string, string>; body: string; length: number } | undefined;
    await until(() => (parsed = parseAnswer(this.received)) !== undefined, timeoutMs);
    this.received = this.received.slice(parsed!.length);
    return parsed!;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

const until = (condition: () => boolean, timeoutMs: number) =>
  waitFor(async () => (condition() ? true : undefined), timeoutMs, 20);

function parseAnswer(text: string) {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  if (text.length < end + 4 + length) return undefined;
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: text.slice(end + 4, end + 4 + length),
    length: end + 4 + length,
  };
}

describe('The HTTP server', () => {
  let stack: Stack;
  let account: TestAccount;
  const connections: RawConnection[] = [];
  const open = async () => {
    const connection = await RawConnection.open(stack.api);
    connections.push(connection);
    return connection;
  };
  const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n`;

  beforeAll(async () => {
    stack = await startStack({ worker: false, apiModules: [TestRoutesModule] });
    await stack.api.listen(0, '127.0.0.1');
    account = await createAccount(stack);
  });
  afterEach(() => connections.splice(0).forEach((connection) => connection.destroy()));
  afterAll(() => stack.close());

  it('keeps an idle keep-alive connection open past the 5 s that Node and Express default to', async () => {
    const connection = await open();
    connection.send(get('/api/health'));
    const first = await connection.answer();
    expect(first.status).toBe(200);
    expect(first.headers['keep-alive']).toBe('timeout=65');
    await new Promise((resolve) => setTimeout(resolve, 5_500));
    expect(connection.closed).toBe(false);
    connection.send(get('/api/health'));
    expect((await connection.answer()).status).toBe(200);
  }, 15_000);

  it('answers a body declared over the limit with 413 at once, without reading it, and closes', async () => {
    const connection = await open();
    connection.send(
      'POST /api/user/api-keys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Authorization: ${account.auth.Authorization}\r\nContent-Length: ${1024 * 1024 * 1024}\r\n\r\n{"name":`,
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toEqual({ message: 'The request body is too large.' });
    expect(answer.headers.connection).toBe('close');
    await until(() => connection.closed, 5_000);
  });

  it('answers a chunked body at the moment it passes the limit, and closes', async () => {
    const connection = await open();
    connection.send(
      'POST /api/user/api-keys HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n' +
        `Authorization: ${account.auth.Authorization}\r\nTransfer-Encoding: chunked\r\n\r\n`,
    );
    const chunk = 'x'.repeat(256 * 1024);
    for (let sent = 0; sent < 5; sent++) connection.send(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    // The body never ends: the answer cannot have waited for it.
    const answer = await connection.answer();
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
  });

  it('refuses a multipart body on a route that takes no file without reading it', async () => {
    const connection = await open();
    connection.send(
      'POST /api/user/api-keys HTTP/1.1\r\nHost: localhost\r\n' +
        'Content-Type: multipart/form-data; boundary=x\r\n' +
        `Authorization: ${account.auth.Authorization}\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n` +
        '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nCRM\r\n',
    );
    const answer = await connection.answer();
    expect(answer.status).toBe(422);
    expect(JSON.parse(answer.body).errors).toEqual({ name: ['The name field is required.'] });
    expect(answer.headers.connection).toBe('close');
    await until(() => connection.closed, 5_000);
  });

  it('leaves the body of a GET unread instead of refusing it', async () => {
    const response = await stack.http
      .get('/api/user/api-keys')
      .set(account.auth)
      .set('Content-Type', 'application/json')
      .send('{"broken": ');
    expect(response.status).toBe(200);
    expect(response.body.api_keys).toEqual([]);
  });

  it('ends each connection after its answer once the app is closing', async () => {
    const draining = await startStack({ worker: false, apiModules: [TestRoutesModule] });
    await draining.api.listen(0, '127.0.0.1');
    const connection = await RawConnection.open(draining.api);
    connections.push(connection);
    const started = slowRequests.started;
    connection.send(get('/api/test/slow'));
    await waitFor(async () => (slowRequests.started > started ? true : undefined));
    const closing = draining.close();
    const answer = await connection.answer();
    expect(answer.status).toBe(200);
    expect(answer.headers.connection).toBe('close');
    await closing;
    await until(() => connection.closed, 5_000);
  });
});

describe('The HTTP server with short timeouts', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await createApiApp(
      testConfig({
        HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '1',
        HTTP_HEADERS_TIMEOUT_SECONDS: '1',
        HTTP_REQUEST_TIMEOUT_SECONDS: '2',
      }),
    );
    await app.listen(0, '127.0.0.1');
  });
  afterAll(() => app.close());

  it('answers 408 in the spec shape and closes when the headers do not arrive in time', async () => {
    const connection = await RawConnection.open(app);
    const started = Date.now();
    connection.send('GET /api/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ');
    const answer = await connection.answer(6_000);
    expect(answer.status).toBe(408);
    expect(JSON.parse(answer.body)).toEqual({ message: 'The request was not received in time.' });
    await until(() => connection.closed, 2_000);
    // One second, checked every second.
    expect(Date.now() - started).toBeLessThan(4_000);
  }, 10_000);

  it('answers 408 and closes when a body stops arriving', async () => {
    const connection = await RawConnection.open(app);
    const started = Date.now();
    connection.send(
      'POST /api/auth/login HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":',
    );
    const answer = await connection.answer(8_000);
    expect(answer.status).toBe(408);
    await until(() => connection.closed, 2_000);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 12_000);

  it('closes an idle keep-alive connection after its timeout', async () => {
    const connection = await RawConnection.open(app);
    connection.send('GET /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n');
    expect((await connection.answer()).headers['keep-alive']).toBe('timeout=1');
    await until(() => connection.closed, 4_000);
  });
});
