import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { AppProcess } from './support/app-process';
import { unheldNumber } from './support/factories';
import { FakeOpenAi } from './support/openai.fake';
import { UNTIL_STALLED, waitFor } from './support/wait-for';

/** Secrets must never reach a log line, even at the most verbose level. */
describe('Secrets in logs', () => {
  let api: AppProcess;
  let worker: AppProcess;
  let site: LocalSite;
  let modelProvider: FakeOpenAi;

  beforeAll(async () => {
    site = await startLocalSite({
      '*': (_request, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('upstream failed'),
    });
    modelProvider = await FakeOpenAi.start();
    const env = {
      LOG_LEVEL: 'trace',
      LLM_BASE_URL: modelProvider.baseUrl,
      LLM_API_KEY: modelProvider.apiKey,
      LLM_MODEL: 'gpt-4o-mini',
    };
    [api, worker] = await Promise.all([AppProcess.start(env), AppProcess.start(env, 'worker')]);
  }, UNTIL_STALLED);
  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await site?.close();
    await modelProvider?.close();
  });

  it("says the model provider's host and model once at boot in each app, never its key", () => {
    for (const app of [api, worker]) {
      const said = app.output
        .join('')
        .split('\n')
        .filter((line) => line.includes('Model provider'));
      expect(said).toHaveLength(1);
      expect(JSON.parse(said[0]).msg).toBe(
        `Model provider at ${new URL(modelProvider.url).host}: model gpt-4o-mini, no embeddings model (EMBEDDINGS_MODEL unset): no search by meaning`,
      );
    }
    const logs = api.output.join('') + worker.output.join('');
    expect(logs).not.toContain(modelProvider.apiKey);
  });

  it('logs no tool header value, neither when stored nor when a test call sends it', async () => {
    const call = async (method: string, path: string, token?: string, body?: object, requestId?: string) => {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(requestId ? { 'x-request-id': requestId } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const registered = await call('POST', '/auth/register', undefined, {
      name: 'Logs',
      email: `logs-${Date.now()}@example.com`,
      password: 'correct horse battery staple',
    });
    const token: string = registered.body.token;
    const secret = 'sk_live_NEVER_IN_LOGS_7731';
    const created = await call('POST', '/user/tools', token, {
      name: 'secretive',
      description: 'Uses a key',
      endpoint: `${site.origin}/hook`,
      method: 'POST',
      headers: [{ name: 'Authorization', value: `Bearer ${secret}` }],
      static_fields: [{ key: 'k', value: 'v' }],
    });
    expect(created.status).toBe(201);
    const tested = await call('POST', `/user/tools/${created.body.data.id}/test`, token, { arguments: {} });
    expect(tested.status).toBe(200);
    expect(site.requests[0].headers.authorization).toBe(`Bearer ${secret}`);
    await call('GET', `/user/tools/${created.body.data.id}`, token);

    const sipPassword = 'sip-pw-NEVER-IN-LOGS-5521';
    const trunk = await call(
      'POST',
      '/user/phone-numbers/sip-trunks',
      token,
      {
        sip_trunk_type: 'number',
        phone_number: unheldNumber(),
        sip_username: 'acme-user',
        sip_password: sipPassword,
        sip_address: 'sip.carrier.example.com',
      },
      'trunk-request-42',
    );
    expect(trunk.status).toBe(201);
    const updated = await call('PUT', `/user/phone-numbers/sip-trunks/${trunk.body.data.id}`, token, {
      sip_password: `${sipPassword}-2`,
    });
    expect(updated.status).toBe(200);

    const logs = api.output.join('') + worker.output.join('');
    expect(logs).toContain('"method":"POST"'); // the request lines are there
    expect(logs).toContain('provision-sip-trunk'); // and the worker's job lines
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(sipPassword);

    // Every line is JSON; request lines name the account and carry no response headers; job lines carry the
    // id of the request that enqueued them.
    const lines = logs.split('\n').filter(Boolean);
    const parsed = lines.map((line) => JSON.parse(line) as Record<string, any>);
    const trunkLine = parsed.find((line) => line.req?.path === '/api/user/phone-numbers/sip-trunks' && line.res);
    expect(trunkLine).toMatchObject({ userId: registered.body.user.id, req: { id: 'trunk-request-42' } });
    expect(trunkLine!.res).toEqual({ statusCode: 201 });
    const jobLine = parsed.find((line) => line.msg === 'job started' && line.job === 'provision-sip-trunk');
    expect(jobLine).toMatchObject({ requestId: 'trunk-request-42' });
    expect(parsed.some((line) => typeof line.msg === 'string' && line.msg.startsWith('Listening on http://'))).toBe(
      true,
    );
  });

  it('names a failed job’s reason by its class in the worker’s line, never the document’s name or content', async () => {
    const headers = (token?: string) => ({
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    });
    const registered = (await (
      await fetch(`${api.baseUrl}/auth/register`, {
        method: 'POST',
        headers: headers(),
        body: JSON.stringify({
          name: 'Reasons',
          email: `reasons-${Date.now()}@example.com`,
          password: 'a long password',
        }),
      })
    ).json()) as { token: string };
    const knowledgebase = (await (
      await fetch(`${api.baseUrl}/user/knowledgebases`, {
        method: 'POST',
        headers: headers(registered.token),
        body: JSON.stringify({ name: 'Reasons' }),
      })
    ).json()) as { data: { id: number } };
    const secret = 'sk_live_IN_A_FILE_NEVER_IN_LOGS_9921';
    const form = new FormData();
    form.set('name', 'Salaries 2026');
    form.set('type', 'docx');
    form.set('file', new Blob([`Not a Word document. ${secret}`]), 'salaries-private.docx');
    const created = await fetch(`${api.baseUrl}/user/knowledgebases/${knowledgebase.data.id}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${registered.token}` },
      body: form,
    });
    expect(created.status).toBe(201);
    const documentId = ((await created.json()) as { data: { id: number } }).data.id;

    const line = await waitFor(async () =>
      worker.output
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((each) => JSON.parse(each) as Record<string, any>)
        .find((each) => each.msg === 'job finished' && each.jobId === `document-${documentId}`),
    );
    expect(line).toMatchObject({
      level: 40,
      queue: 'documents',
      job: 'process-document',
      outcome: 'failed',
      error: 'process-document failed: content does not match the declared type',
    });
    const logs = api.output.join('') + worker.output.join('');
    for (const hidden of [secret, 'salaries-private', 'Salaries 2026']) expect(logs).not.toContain(hidden);
  });

  it('writes a boot failure as one pino line naming every bad variable at once', async () => {
    const failing = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/api/src/main.ts'],
      {
        env: { ...process.env, NODE_ENV: 'production', PORT: 'not-a-port', DATABASE_URL: '', ENCRYPTION_KEY: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    failing.stdout.on('data', (chunk) => (output += chunk));
    failing.stderr.on('data', (chunk) => (output += chunk));
    const [code] = await once(failing, 'exit');
    expect(code).toBe(1);
    const lines = output.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]);
    expect(line).toMatchObject({ level: 60, time: expect.any(Number), pid: failing.pid, context: 'Bootstrap' });
    for (const named of ['PORT: ', 'ENCRYPTION_KEY: is required', 'DATABASE_URL: is required'])
      expect(line.msg).toContain(named);
  }, 60_000);
});
