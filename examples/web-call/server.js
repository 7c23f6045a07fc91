// The page's server: serves the page, and starts, follows and hangs up web calls on the service with the API key it
// holds. The key never reaches the browser: the browser gets only the LiveKit URL, the room and its own
// participant token, which lets it join that one room for a short while.
//
//   VOICE_API_KEY=... ASSISTANT_ID=... npm start     (then open http://127.0.0.1:8080)
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** Where the web-call route's answer (`{message, data: {call, livekit_url, ...}}`) keeps each field: the one place. */
export const WEB_CALL_FIELDS = {
  id: ['data', 'call', 'id'],
  livekitUrl: ['data', 'livekit_url'],
  room: ['data', 'room'],
  token: ['data', 'participant_token'],
};

/** The settings, from the environment; one line naming every missing or bad one otherwise. */
export function readSettings(env = process.env) {
  const problems = [];
  const serviceUrl = (env.VOICE_SERVICE_URL || 'http://127.0.0.1:3000').replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(serviceUrl)) problems.push('VOICE_SERVICE_URL must be an http(s) URL');
  const apiKey = env.VOICE_API_KEY?.trim();
  if (!apiKey) problems.push('VOICE_API_KEY is required');
  const assistantId = env.ASSISTANT_ID?.trim();
  if (!assistantId) problems.push('ASSISTANT_ID is required');
  const port = Number(env.PORT || 8080);
  if (!(Number.isInteger(port) && port >= 0 && port < 65536)) problems.push('PORT must be a port number');
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  return { serviceUrl, apiKey, assistantId, port, host: env.HOST || '127.0.0.1' };
}

/** The page's script with livekit-client, bundled once for the browser. */
async function bundle() {
  const result = await build({
    entryPoints: [path.join(HERE, 'page', 'app.js')],
    bundle: true,
    format: 'esm',
    target: 'es2020',
    minify: true,
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].contents;
}

/** Reads a JSON request body of at most 16 KiB. */
async function readJson(request) {
  let text = '';
  for await (const chunk of request) {
    text += chunk;
    if (text.length > 16_384) throw Object.assign(new Error('Request too large'), { status: 413 });
  }
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    throw Object.assign(new Error('The body is not JSON'), { status: 400 });
  }
}

function send(response, status, body, type = 'application/json') {
  response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
  response.end(type === 'application/json' ? JSON.stringify(body) : body);
}

/** Starts the server; resolves with it and its address once it listens. */
export async function startServer(settings) {
  const [html, script] = await Promise.all([readFile(path.join(HERE, 'page', 'index.html')), bundle()]);
  const service = (pathname, init = {}) =>
    fetch(`${settings.serviceUrl}/api${pathname}`, {
      ...init,
      headers: { authorization: `Bearer ${settings.apiKey}`, accept: 'application/json', ...init.headers },
    });

  const routes = {
    'GET /': (request, response) => send(response, 200, html, 'text/html; charset=utf-8'),
    'GET /app.js': (request, response) => send(response, 200, script, 'text/javascript; charset=utf-8'),
    // Starts a web call of the assistant; the browser gets what joining the room needs, and the call's id.
    'POST /calls': async (request, response) => {
      const { variables } = await readJson(request);
      const answer = await service(`/user/assistant/${encodeURIComponent(settings.assistantId)}/web-call`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(variables && typeof variables === 'object' ? { variables } : {}),
      });
      const body = await answer.json().catch(() => ({}));
      if (!answer.ok) return send(response, answer.status, { message: body.message ?? 'The call could not start.' });
      const field = (name) => WEB_CALL_FIELDS[name].reduce((value, key) => value?.[key], body);
      send(response, 201, {
        id: field('id'),
        livekit_url: field('livekitUrl'),
        room: field('room'),
        token: field('token'),
      });
    },
    'POST /calls/:id/hangup': async (request, response, id) => {
      const answer = await service(`/user/calls/${encodeURIComponent(id)}/hangup`, { method: 'POST' });
      send(response, answer.status, await answer.json().catch(() => ({})));
    },
    // The call's events as the service streams them (the transcript's turns among them), relayed as they come.
    'GET /calls/:id/events': async (request, response, id) => {
      const controller = new AbortController();
      response.once('close', () => controller.abort());
      const headers = { accept: 'text/event-stream' };
      if (request.headers['last-event-id']) headers['last-event-id'] = request.headers['last-event-id'];
      const answer = await service(`/user/calls/${encodeURIComponent(id)}/events/stream`, {
        headers,
        signal: controller.signal,
      });
      if (!answer.ok || !answer.body) {
        return send(response, answer.status, await answer.json().catch(() => ({})));
      }
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      try {
        for await (const chunk of answer.body) response.write(chunk);
      } catch {
        // The browser left (the abort above) or the service closed the stream: either way it is over.
      }
      response.end();
    },
  };

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://page');
    const match = /^\/calls\/([^/]+)(\/hangup|\/events)$/.exec(url.pathname);
    const key = match ? `${request.method} /calls/:id${match[2]}` : `${request.method} ${url.pathname}`;
    const route = routes[key];
    if (!route) return send(response, 404, { message: 'Not found.' });
    Promise.resolve(route(request, response, match && decodeURIComponent(match[1]))).catch((error) => {
      if (!response.headersSent)
        send(response, error.status ?? 502, { message: error.status ? error.message : 'The service did not answer.' });
      else response.end();
    });
  });
  await new Promise((resolve, reject) => server.once('error', reject).listen(settings.port, settings.host, resolve));
  const { port } = server.address();
  return { server, url: `http://${settings.host}:${port}` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let settings;
  try {
    settings = readSettings();
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  const { url } = await startServer(settings);
  console.log(`Open ${url} to talk to assistant ${settings.assistantId}`);
}
