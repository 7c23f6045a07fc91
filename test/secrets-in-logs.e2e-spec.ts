import { LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { ApiProcess } from './support/api-process';

/** Secrets must never reach a log line, even at the most verbose level. */
describe('Secrets in logs', () => {
  let api: ApiProcess;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startLocalSite({
      '*': (_request, response) => response.writeHead(500, { 'content-type': 'text/plain' }).end('upstream failed'),
    });
    api = await ApiProcess.start({ LOG_LEVEL: 'trace' });
  }, 90_000);
  afterAll(async () => {
    await api?.stop();
    await site?.close();
  });

  it('logs no tool header value, neither when stored nor when a test call sends it', async () => {
    const call = async (method: string, path: string, token?: string, body?: object) => {
      const response = await fetch(`${api.baseUrl}${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
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

    const logs = api.output.join('');
    expect(logs).toContain('"method":"POST"'); // the request lines are there
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(token);
  });
});
