import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { TokenVerifier } from 'livekit-server-sdk';
import { type Browser, chromium } from 'playwright-core';
import { type WebSocket, WebSocketServer } from 'ws';
import { createAccount, languageId } from '../../../test/support/factories';
import { type Stack, startStack } from '../../../test/support/stack';

const EXAMPLE = path.join(__dirname, '..');
const API_KEY = 'va_test_key_that_stays_on_the_server';
const ASSISTANT_ID = '42';

/** Debian's Chromium, or the one CHROMIUM_PATH names; none where neither is installed. */
function findChromium(): string | undefined {
  return [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find(
    (candidate) => candidate && existsSync(candidate),
  );
}

/** A participant token as LiveKit's are: a JWT whose `video` grant names the one room it may join. */
function participantToken(room: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: 'web-1', video: { room, roomJoin: true } })}.signature`;
}

function roomOf(token: string): string | undefined {
  const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
    video?: { room?: string };
  };
  return payload.video?.room;
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function until<T>(read: () => T | undefined, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const executablePath = findChromium();
const describeWithBrowser = executablePath ? describe : describe.skip;
if (!executablePath) {
  // One line, in the test's output, saying why these tests did not run and how to run them.
  process.stdout.write("web-call page: skipped, no Chromium (install Debian's chromium or set CHROMIUM_PATH)\n");
}

describeWithBrowser('the web-call page in headless Chromium', () => {
  const room = 'web-7f3c0a1e';
  const token = participantToken(room);
  /** What the stand-in service was asked, and with which credential. */
  const serviceRequests: { method?: string; url?: string; authorization?: string; body: string }[] = [];
  /** The connections the stand-in LiveKit server received: the URL each was opened at. */
  const livekitConnections: URL[] = [];
  /** The connections held open until the test refuses the join. */
  const heldSockets: WebSocket[] = [];
  let refuseJoins = false;
  let service: Server;
  let livekit: Server;
  let sockets: WebSocketServer;
  let page: ChildProcess;
  let pageUrl: string;
  let browser: Browser;

  beforeAll(async () => {
    // LiveKit's signalling endpoint, standing in: records the connection, and closes it when the test says (there is
    // no SFU behind it), so the page's failure to join comes after what the test looks at first, however loaded the
    // machine.
    livekit = createServer((request, response) => response.writeHead(404).end());
    sockets = new WebSocketServer({ server: livekit });
    sockets.on('connection', (socket, request: IncomingMessage) => {
      livekitConnections.push(new URL(request.url ?? '/', 'ws://livekit'));
      if (refuseJoins) socket.close(1011, 'stand-in');
      else heldSockets.push(socket);
    });
    const livekitPort = await listen(livekit);

    // The service's web-call route and the call's event stream, standing in: they ask for the API key.
    service = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        serviceRequests.push({
          method: request.method,
          url: request.url,
          authorization: request.headers.authorization,
          body,
        });
        if (request.headers.authorization !== `Bearer ${API_KEY}`) {
          response.writeHead(401, { 'content-type': 'application/json' });
          return response.end(JSON.stringify({ message: 'Unauthenticated.' }));
        }
        if (request.method === 'POST' && request.url === `/api/user/assistant/${ASSISTANT_ID}/web-call`) {
          response.writeHead(201, { 'content-type': 'application/json' });
          return response.end(
            JSON.stringify({
              message: 'Web call started.',
              data: {
                call: { id: 9001, type: 'web', status: 'initiated', client_phone_number: null },
                livekit_url: `ws://127.0.0.1:${livekitPort}`,
                room,
                participant_token: token,
                expires_at: new Date(Date.now() + 600_000).toISOString(),
              },
            }),
          );
        }
        if (request.method === 'POST' && request.url === '/api/user/calls/9001/hangup') {
          response.writeHead(202, { 'content-type': 'application/json' });
          return response.end(JSON.stringify({ message: 'The call is being hung up.' }));
        }
        if (request.method === 'GET' && request.url === '/api/user/calls/9001/events/stream') {
          response.writeHead(200, { 'content-type': 'text/event-stream' });
          const turn = { type: 'transcript', seq: 1, role: 'assistant', text: 'Hello! How can I help you today?' };
          return response.end(`id: 1\nevent: transcript\ndata: ${JSON.stringify(turn)}\n\nevent: end\ndata: {}\n\n`);
        }
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not found."}');
      });
    });
    const servicePort = await listen(service);

    page = spawn(process.execPath, ['server.js'], {
      cwd: EXAMPLE,
      env: {
        PATH: process.env.PATH ?? '',
        VOICE_SERVICE_URL: `http://127.0.0.1:${servicePort}`,
        VOICE_API_KEY: API_KEY,
        ASSISTANT_ID,
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    page.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    pageUrl = await until(() => /Open (http:\/\/\S+)/.exec(output)?.[1], "the page's server");

    browser = await chromium.launch({
      executablePath,
      args: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--no-sandbox'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    page?.kill();
    sockets?.close();
    await Promise.all([livekit, service].map((server) => server && new Promise((resolve) => server.close(resolve))));
  });

  it('starts a call through its server, which holds the key, and joins the room it was given with its token', async () => {
    const tab = await browser.newPage();
    const seenByBrowser: string[] = [];
    tab.on('response', (response) => {
      if (response.url().startsWith(pageUrl))
        void response.text().then(
          (text) => seenByBrowser.push(text),
          () => {},
        );
    });
    await tab.goto(pageUrl);
    expect(await tab.title()).toBe('Talk to your assistant');
    expect(await tab.textContent('#status')).toBe('Not connected.');

    await tab.click('#start');

    const connection = await until(() => livekitConnections[0], 'the connection to LiveKit');
    expect(connection.pathname).toMatch(/^\/rtc(\/v1)?$/);
    expect(connection.searchParams.get('access_token')).toBe(token);
    expect(roomOf(connection.searchParams.get('access_token')!)).toBe(room);

    // The call was started once, by the page's server, with the key; the browser never saw the key.
    const starts = serviceRequests.filter((request) => request.url?.endsWith('/web-call'));
    expect(starts).toEqual([
      {
        method: 'POST',
        url: `/api/user/assistant/${ASSISTANT_ID}/web-call`,
        authorization: `Bearer ${API_KEY}`,
        body: '{}',
      },
    ]);
    await tab.waitForSelector('#transcript li');
    expect(await tab.textContent('#transcript li')).toBe('AssistantHello! How can I help you today?');
    // The stand-in has no media server behind it: the page cannot join, says so, and ends the call at the service.
    refuseJoins = true;
    for (const socket of heldSockets.splice(0)) socket.close(1011, 'stand-in');
    await tab.waitForFunction("document.querySelector('#status').textContent.startsWith('Could not start')");
    await until(() => serviceRequests.find((request) => request.url === '/api/user/calls/9001/hangup'), 'the hang-up');
    expect(serviceRequests.filter((request) => request.url?.endsWith('/hangup'))).toEqual([
      { method: 'POST', url: '/api/user/calls/9001/hangup', authorization: `Bearer ${API_KEY}`, body: '' },
    ]);
    expect(await tab.isEnabled('#start')).toBe(true);
    expect(seenByBrowser.length).toBeGreaterThan(0);
    expect(seenByBrowser.filter((text) => text.includes(API_KEY))).toEqual([]);
    await tab.close();
  }, 60_000);
});

describe("the web-call page's server with a bad environment", () => {
  it('exits 1 with one line naming every missing or invalid variable', async () => {
    const child = spawn(process.execPath, ['server.js'], {
      cwd: EXAMPLE,
      env: { PATH: process.env.PATH ?? '', VOICE_SERVICE_URL: 'localhost:3000', PORT: '99999' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('close', (exit) => resolve(exit)));
    expect(code).toBe(1);
    expect(stderr).toBe(
      'Invalid configuration: VOICE_SERVICE_URL must be an http(s) URL; VOICE_API_KEY is required; ' +
        'ASSISTANT_ID is required; PORT must be a port number\n',
    );
  });
});

describeWithBrowser('the web-call page against the real API and worker', () => {
  const livekitKey = 'page-test-key';
  const livekitSecret = 'page-test-secret-of-at-least-32-chars';
  const connections: URL[] = [];
  let livekit: Server;
  let sockets: WebSocketServer;
  let stack: Stack;
  let page: ChildProcess | undefined;
  let browser: Browser | undefined;

  beforeAll(async () => {
    livekit = createServer((request, response) => response.writeHead(404).end());
    sockets = new WebSocketServer({ server: livekit });
    sockets.on('connection', (socket, request: IncomingMessage) => {
      connections.push(new URL(request.url ?? '/', 'ws://livekit'));
      socket.close(1011, 'stand-in');
    });
    const livekitPort = await listen(livekit);
    // The local dialer records the room; the token is signed with the configured key, for the URL configured.
    stack = await startStack({
      env: {
        CALL_DIALER: 'local',
        LIVEKIT_URL: `ws://127.0.0.1:${livekitPort}`,
        LIVEKIT_API_KEY: livekitKey,
        LIVEKIT_API_SECRET: livekitSecret,
      },
    });
    await stack.api.listen(0, '127.0.0.1');
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    page?.kill();
    await stack?.close();
    sockets?.close();
    await new Promise((resolve) => livekit?.close(resolve));
  });

  it("starts the assistant's web call on the service with an API key and joins that call's room with its token", async () => {
    const account = await createAccount(stack, 'Page Owner');
    const key = (await stack.http.post('/api/user/api-keys').set(account.auth).send({ name: 'web page' }).expect(201))
      .body.api_key.token as string;
    const assistant = (
      await stack.http
        .post('/api/user/assistant')
        .set(account.auth)
        .send({ name: 'Front desk', type: 'inbound', language_id: await languageId(stack, account) })
        .expect(201)
    ).body.data as { id: number };
    const { port } = stack.api.getHttpServer().address() as AddressInfo;
    page = spawn(process.execPath, ['server.js'], {
      cwd: EXAMPLE,
      env: {
        PATH: process.env.PATH ?? '',
        VOICE_SERVICE_URL: `http://127.0.0.1:${port}`,
        VOICE_API_KEY: key,
        ASSISTANT_ID: String(assistant.id),
        PORT: '0',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    page.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const pageUrl = await until(() => /Open (http:\/\/\S+)/.exec(output)?.[1], "the page's server");
    browser = await chromium.launch({ executablePath, args: ['--use-fake-ui-for-media-stream', '--no-sandbox'] });
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    await tab.click('#start');

    const connection = await until(() => connections[0], 'the connection to LiveKit');
    const grants = await new TokenVerifier(livekitKey, livekitSecret).verify(
      connection.searchParams.get('access_token')!,
    );
    const calls = (await stack.http.get('/api/user/calls').query({ type: 'web' }).set(account.auth).expect(200)).body
      .data as { id: number; external_id: string }[];
    expect(calls).toHaveLength(1);
    expect(grants.video).toMatchObject({ room: calls[0].external_id, roomJoin: true });
  }, 90_000);
});
