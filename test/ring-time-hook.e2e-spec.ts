import type { IncomingMessage, ServerResponse } from 'node:http';
import { type LocalSite, type RecordedRequest, startLocalSite } from '../libs/outbound-http/test/local-site';
import { createAccount, sipTrunkRequest, type TestAccount } from './support/factories';
import { verifiesWebhook } from './support/runtime-fixtures';
import { type Stack, startStack } from './support/stack';

const RUNTIME_TOKEN = 'runtime-token-for-ring-time-hook-0123456789';
const deployment = { Authorization: `Bearer ${RUNTIME_TOKEN}` };
const CALLER = '+14155550199';

const json =
  (body: unknown, status = 200) =>
  (_request: IncomingMessage, response: ServerResponse) =>
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
const text =
  (body: string, status = 200) =>
  (_request: IncomingMessage, response: ServerResponse) =>
    response.writeHead(status, { 'content-type': 'text/plain' }).end(body);

describe('Ring-time hook (server_url)', () => {
  let stack: Stack;
  let owner: TestAccount;
  let other: TestAccount;
  let site: LocalSite;
  let english: number;
  /** The number's own assistant, the one a hook may name instead, and assistants it may not name. */
  let frontDesk: { id: number; number: string; numberId: number };
  let vip: { id: number };
  let inactive: { id: number };
  let outbound: { id: number };
  let foreign: { id: number; name: string };
  let calls = 0;

  const http = () => stack.http;
  const post = (path: string, body: object, auth = owner.auth) => http().post(`/api/user/${path}`).set(auth).send(body);
  const put = (path: string, body: object, auth = owner.auth) => http().put(`/api/user/${path}`).set(auth).send(body);
  /** Points the front desk's number at a route of the receiver (or clears it with null). */
  const hookAt = async (path: string | null, fields: object = {}) =>
    (
      await put(`phone-numbers/${frontDesk.numberId}`, {
        server_url: path === null ? null : `${site.origin}${path}`,
        ...fields,
      }).expect(200)
    ).body.data;
  const session = (externalId: string, number = frontDesk.number) =>
    http()
      .post(`/api/internal/calls/${externalId}/session`)
      .set(deployment)
      .send({ type: 'inbound', client_phone_number: CALLER, assistant_phone_number: number });
  const newCallId = () => `call-hook-${++calls}-${Date.now()}`;
  const received = (path: string): RecordedRequest[] => site.requests.filter((request) => request.path === path);

  beforeAll(async () => {
    site = await startLocalSite({
      // Never answers: the session stops waiting at the number's timeout. Closing the site ends the connection.
      '/slow': () => undefined,
      '/garbage': text('<html>not json</html>'),
      '/error': text('down', 500),
      '/array': json([{ assistant_id: 1 }]),
      '/bad-id': json({ assistant_id: 'twelve' }),
      '/proto': (_request, response) =>
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"variables": {"__proto__": "x"}}'),
      '/too-many': json({ variables: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`v${i}`, i])) }),
      '/huge': text(`{"variables": {"a": "${'x'.repeat(70 * 1024)}"}}`),
      '/reject': json({ reject: { message: 'Sorry, this line does not take calls from your number.' } }),
      '/reject-quietly': json({ reject: {}, assistant_id: 1 }),
      '/keep': text(''),
      '*': (request, response) => {
        const route = routes[request.url ?? ''];
        if (route) return json(route())(request, response);
        response.writeHead(404).end();
      },
    });
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    owner = await createAccount(stack);
    other = await createAccount(stack);
    const languages = (await http().get('/api/user/assistants/languages').set(owner.auth)).body as {
      id: number;
      iso_2: string;
    }[];
    english = languages.find((language) => language.iso_2 === 'en')!.id;
    const number = (await post('phone-numbers/sip-trunks', sipTrunkRequest()).expect(201)).body.data;
    const assistant = async (fields: object, account = owner) =>
      (await post('assistant', { language_id: english, ...fields }, account.auth).expect(201)).body.data;
    const desk = await assistant({
      name: 'Front desk',
      type: 'inbound',
      phone_number_id: number.id,
      initial_message: 'Hello {{customer_name}}, you are {{tier}}.',
      variables: { customer_name: 'there', tier: 'standard' },
    });
    frontDesk = { id: desk.id, number: number.phone_number, numberId: number.id };
    vip = await assistant({ name: 'VIP line', type: 'inbound', initial_message: 'Welcome back, {{customer_name}}.' });
    inactive = await assistant({ name: 'Closed line', type: 'inbound', status: 'inactive' });
    outbound = await assistant({ name: 'Renewals', type: 'outbound' });
    foreign = await assistant({ name: 'Other account’s secret desk', type: 'inbound' }, other);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await site?.close();
  });

  /** Answers of the `*` route, made when a request comes, so they can name ids made in `beforeAll`. */
  const routes: Record<string, () => unknown> = {
    '/answer': () => ({ assistant_id: vip.id, variables: { customer_name: 'Ada', tier: 'gold' }, ignored: true }),
    '/foreign': () => ({ assistant_id: foreign.id }),
    '/missing': () => ({ assistant_id: 2_000_000_000 }),
    '/inactive': () => ({ assistant_id: inactive.id }),
    '/outbound': () => ({ assistant_id: outbound.id }),
    '/account': () => ({ variables: { tier: 'from the account' } }),
    '/number': () => ({ variables: { tier: 'from the number' } }),
  };

  it('runs the assistant and variables the server answers with, signed with the secret shown to the owner, once a call', async () => {
    const hook = await hookAt('/answer', { server_timeout_ms: 1500 });
    expect(hook).toMatchObject({ server_url: `${site.origin}/answer`, server_timeout_ms: 1500 });
    expect(hook.server_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const listed = (await http().get('/api/user/phone-numbers/all').set(owner.auth).expect(200)).body.data;
    expect(listed.find((number: { id: number }) => number.id === frontDesk.numberId)).toMatchObject({
      server_url: `${site.origin}/answer`,
      server_secret: hook.server_secret,
    });

    const externalId = newCallId();
    const opened = (await session(externalId).expect(201)).body.data;
    expect(opened.assistant).toMatchObject({
      id: vip.id,
      name: 'VIP line',
      initial_message: 'Welcome back, Ada.',
      variables: { customer_name: 'Ada', tier: 'gold' },
    });
    expect(opened.call.assistant_request).toEqual({
      status: 'answered',
      reason: expect.stringMatching(
        new RegExp(
          `^127\\.0\\.0\\.1:${site.port} answered in \\d+ ms: assistant ${vip.id} takes the call, with 2 variables\\.$`,
        ),
      ),
    });

    const [request, ...more] = received('/answer');
    expect(more).toEqual([]);
    expect(request.method).toBe('POST');
    expect(request.headers['user-agent']).toBe('VoiceAssistantWebhooks/1.0');
    expect(request.headers['webhook-id']).toMatch(/^msg_/);
    expect(verifiesWebhook(hook.server_secret, request.headers, request.body)).toBe(true);
    expect(JSON.parse(request.body)).toEqual({
      type: 'call.assistant_request',
      call: { external_id: externalId, client_phone_number: CALLER, assistant_phone_number: frontDesk.number },
      assistant_id: frontDesk.id,
    });

    // A repeated session answers the stored outcome, and the server is not asked again.
    const again = (await session(externalId).expect(200)).body.data;
    expect(again.assistant).toMatchObject({ id: vip.id, variables: { customer_name: 'Ada', tier: 'gold' } });
    expect(received('/answer')).toHaveLength(1);
    const call = (await http().get(`/api/user/calls/${opened.call.id}`).set(owner.auth).expect(200)).body.data;
    expect(call).toMatchObject({
      assistant_name: 'VIP line',
      variables: { customer_name: 'Ada', tier: 'gold' },
      assistant_request: opened.call.assistant_request,
    });
  });

  it('asks once when sessions of a new call race, and every one of them runs what the server answered', async () => {
    await hookAt('/answer', { server_timeout_ms: 1500 });
    const before = received('/answer').length;
    const externalId = newCallId();
    const answers = await Promise.all(Array.from({ length: 4 }, () => session(externalId)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 201]);
    for (const answer of answers) expect(answer.body.data.assistant.id).toBe(vip.id);
    expect(received('/answer').length - before).toBe(1);
  });

  it('falls back to the number’s assistant when the server answers late, fails or answers what cannot be used', async () => {
    const cases: [string, RegExp][] = [
      ['/slow', new RegExp(`^No answer from 127\\.0\\.0\\.1:${site.port} within 300 ms\\.$`)],
      ['/error', new RegExp(`^127\\.0\\.0\\.1:${site.port} answered 500 in \\d+ ms\\.$`)],
      ['/garbage', /cannot be used: it is not JSON\.$/],
      ['/array', /cannot be used: it is not a JSON object\.$/],
      ['/bad-id', /cannot be used: assistant_id is not an assistant’s id\.$/],
      ['/proto', /cannot be used: variables may not name __proto__\.$/],
      ['/too-many', /cannot be used: variables is not an object of at most 100 text, number or boolean values/],
      ['/huge', new RegExp(`^Response from 127\\.0\\.0\\.1:${site.port} is larger than 65536 bytes\\.$`)],
      ['/inactive', /named assistant \d+, which is inactive\.$/],
      ['/outbound', /named assistant \d+, which is an outbound assistant; inbound calls go to inbound ones\.$/],
    ];
    for (const [path, reason] of cases) {
      await hookAt(path, { server_timeout_ms: 300 });
      const started = Date.now();
      const opened = (await session(newCallId()).expect(201)).body.data;
      const took = Date.now() - started;
      expect({ path, assistant: opened.assistant.id, variables: opened.assistant.variables }).toEqual({
        path,
        assistant: frontDesk.id,
        variables: { customer_name: 'there', tier: 'standard' },
      });
      expect({ path, outcome: opened.call.assistant_request }).toEqual({
        path,
        outcome: { status: 'fallback', reason: expect.stringMatching(reason) },
      });
      // Never the URL's path: the owner reads the host at most.
      expect(opened.call.assistant_request.reason).not.toContain(path);
      if (path === '/slow') expect(took).toBeGreaterThanOrEqual(290);
      expect({ path, took: took < 3000 }).toEqual({ path, took: true });
    }
  });

  it('falls back, telling nothing of it, when the server names another account’s assistant', async () => {
    await hookAt('/foreign');
    const opened = await session(newCallId()).expect(201);
    await hookAt('/missing');
    const missing = (await session(newCallId()).expect(201)).body.data;
    const foreignOutcome = opened.body.data.call.assistant_request;
    expect(opened.body.data.assistant.id).toBe(frontDesk.id);
    expect(foreignOutcome.status).toBe('fallback');
    // Word for word what an id no assistant has reads as.
    expect(foreignOutcome.reason.replace(`assistant ${foreign.id},`, 'assistant N,')).toBe(
      missing.call.assistant_request.reason.replace('assistant 2000000000,', 'assistant N,'),
    );
    expect(foreignOutcome.reason).toMatch(/which is not one of this account’s assistants\.$/);
    expect(opened.text).not.toContain(foreign.name);
    const call = await http().get(`/api/user/calls/${opened.body.data.call.id}`).set(owner.auth).expect(200);
    expect(call.text).not.toContain(foreign.name);
    expect(call.body.data.assistant_name).toBe('Front desk');
  });

  it('refuses the call when the server rejects it: 403 with what to say, the call ended, the same on every session', async () => {
    await hookAt('/reject');
    const externalId = newCallId();
    const refused = await session(externalId).expect(403);
    expect(refused.body).toEqual({
      message: 'The owner’s server refused the call.',
      reject: { message: 'Sorry, this line does not take calls from your number.' },
    });
    const again = await session(externalId).expect(403);
    expect(again.body).toEqual(refused.body);
    expect(received('/reject')).toHaveLength(1);
    const [call] = (
      await http().get('/api/user/calls').query({ phone_number: CALLER, per_page: 100 }).set(owner.auth).expect(200)
    ).body.data.filter((row: { external_id: string }) => row.external_id === externalId);
    expect(call).toMatchObject({
      status: 'ended_by_assistant',
      assistant_name: 'Front desk',
      assistant_request: {
        status: 'rejected',
        reason: expect.stringMatching(/^127\.0\.0\.1:\d+ refused the call in \d+ ms, with a message\.$/),
      },
    });

    // A refusal wins over an assistant named beside it; without a message the runtime hangs up without a word.
    await hookAt('/reject-quietly');
    const quiet = await session(newCallId()).expect(403);
    expect(quiet.body.reject).toEqual({ message: null });
  });

  it('asks the account’s default when the number names no server, the number’s own when it does', async () => {
    const settings = await put('settings', { server_url: `${site.origin}/account`, server_timeout_ms: 1000 }).expect(
      200,
    );
    expect(settings.body).toMatchObject({
      message: 'Settings updated successfully.',
      data: { server_url: `${site.origin}/account`, server_timeout_ms: 1000 },
    });
    const accountSecret = settings.body.data.server_secret;
    expect(accountSecret).toMatch(/^whsec_/);
    expect((await http().get('/api/user/settings').set(owner.auth).expect(200)).body.data.server_secret).toBe(
      accountSecret,
    );
    const numberHook = await hookAt(null);
    expect(numberHook.server_url).toBeNull();

    const byAccount = (await session(newCallId()).expect(201)).body.data;
    expect(byAccount.assistant.variables.tier).toBe('from the account');
    const [accountRequest] = received('/account');
    expect(verifiesWebhook(accountSecret, accountRequest.headers, accountRequest.body)).toBe(true);
    expect(verifiesWebhook(numberHook.server_secret, accountRequest.headers, accountRequest.body)).toBe(false);

    const own = await hookAt('/number');
    const byNumber = (await session(newCallId()).expect(201)).body.data;
    expect(byNumber.assistant.variables.tier).toBe('from the number');
    const [numberRequest] = received('/number');
    expect(verifiesWebhook(own.server_secret, numberRequest.headers, numberRequest.body)).toBe(true);
    expect(received('/account')).toHaveLength(1);

    // A rotated secret signs from then on; the old one no longer verifies.
    const rotated = (await post(`phone-numbers/server-secret/${frontDesk.numberId}`, {}).expect(200)).body.data;
    expect(rotated.server_secret).not.toBe(own.server_secret);
    await session(newCallId()).expect(201);
    const latest = received('/number').at(-1)!;
    expect(verifiesWebhook(rotated.server_secret, latest.headers, latest.body)).toBe(true);
    expect(verifiesWebhook(own.server_secret, latest.headers, latest.body)).toBe(false);
    const rotatedAccount = (await post('settings/server-secret', {}).expect(200)).body.data;
    expect(rotatedAccount).toMatchObject({ server_url: `${site.origin}/account` });
    expect(rotatedAccount.server_secret).not.toBe(accountSecret);

    // Another account sees its own settings (none), never this one's.
    expect((await http().get('/api/user/settings').set(other.auth).expect(200)).body.data).toEqual({
      server_url: null,
      server_timeout_ms: 2000,
      server_secret: null,
    });
    await put('settings', { server_url: null }).expect(200);
  });

  it('applies the outbound safety rules to server_url: a private address is never called', async () => {
    await put(`phone-numbers/${frontDesk.numberId}`, { server_url: 'http://10.0.0.7/hook' }).expect(200);
    const opened = (await session(newCallId()).expect(201)).body.data;
    expect(opened.assistant.id).toBe(frontDesk.id);
    expect(opened.call.assistant_request).toEqual({
      status: 'fallback',
      reason: 'Refused to connect to 10.0.0.7: not a public address.',
    });
  });

  it('settles a call whose asking session died before recording an answer: the number’s assistant takes it', async () => {
    await hookAt('/answer');
    const externalId = newCallId();
    const opened = (await session(externalId).expect(201)).body.data;
    // As a session that died after writing the call would have left it, a while ago.
    await stack.dataSource.query(
      `UPDATE calls SET assistant_request = '{"status": "pending", "reason": "asking"}', assistant_id = $2,
              assistant_name = 'Front desk', variables = '{}', created_at = now() - interval '1 minute'
        WHERE id = $1`,
      [opened.call.id, frontDesk.id],
    );
    const asked = received('/answer').length;
    const again = (await session(externalId).expect(200)).body.data;
    expect(again.assistant.id).toBe(frontDesk.id);
    expect(again.call.assistant_request).toEqual({
      status: 'fallback',
      reason: 'The session that asked the server ended before recording its answer.',
    });
    expect(received('/answer')).toHaveLength(asked);
  });

  it('a number without a hook records none, and keeps its assistant', async () => {
    await hookAt(null);
    const opened = (await session(newCallId()).expect(201)).body.data;
    expect(opened.call.assistant_request).toBeNull();
    expect(opened.assistant.id).toBe(frontDesk.id);
  });

  it('refuses hostile input on the hook’s fields (422 naming the field), and another account’s number (404)', async () => {
    const invalid: [object, Record<string, string[]>][] = [
      [
        { server_url: 'ftp://crm.example.com/hook', server_timeout_ms: 5001 },
        {
          server_url: ['The server url field must be a valid URL.'],
          server_timeout_ms: ['The server timeout ms field must be between 100 and 5000.'],
        },
      ],
      [{ server_url: 'javascript:alert(1)' }, { server_url: ['The server url field must be a valid URL.'] }],
      [
        { server_url: `https://crm.example.com/${'a'.repeat(2048)}` },
        { server_url: ['The server url field must not be greater than 2048 characters.'] },
      ],
      [{ server_url: { $gt: '' } }, { server_url: ['The server url field must be a string.'] }],
      [
        { server_timeout_ms: '2000; DROP TABLE calls' },
        { server_timeout_ms: ['The server timeout ms field must be an integer.'] },
      ],
      [{ server_timeout_ms: null }, { server_timeout_ms: ['The server timeout ms field must be an integer.'] }],
      [{ server_timeout_ms: 99 }, { server_timeout_ms: ['The server timeout ms field must be between 100 and 5000.'] }],
    ];
    for (const [body, errors] of invalid) {
      for (const path of [`phone-numbers/${frontDesk.numberId}`, 'settings']) {
        const answer = await put(path, body).expect(422);
        expect({ path, body, errors: answer.body.errors }).toEqual({ path, body, errors });
      }
    }
    const notFound = { error: 'Phone number not found.' };
    expect(
      (await put(`phone-numbers/${frontDesk.numberId}`, { server_url: null }, other.auth).expect(404)).body,
    ).toEqual(notFound);
    expect((await post(`phone-numbers/server-secret/${frontDesk.numberId}`, {}, other.auth).expect(404)).body).toEqual(
      notFound,
    );
    expect((await put('phone-numbers/0x1', { server_url: null }).expect(404)).body).toEqual(notFound);
  });
});
