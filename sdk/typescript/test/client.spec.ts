import { createClient, idempotencyKey, serializeBody } from '../src/index.js';

const created = { message: 'Knowledgebase created successfully', data: { id: 1, name: 'FAQ' } };
const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

/** A fetch answering from a script, recording what it was sent. */
function scripted(...answers: (Response | Error)[]) {
  const sent: { method: string; url: string; headers: Headers; body: string }[] = [];
  const fetch = async (request: Request) => {
    sent.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    if (next instanceof Error) throw next;
    return next;
  };
  return { sent, fetch };
}

describe('The SDK client', () => {
  it('sends JSON, or multipart when a field holds a file', async () => {
    expect(serializeBody({ name: 'FAQ' })).toBe('{"name":"FAQ"}');
    const form = serializeBody({
      name: 'Hours',
      type: 'txt',
      description: null,
      file: new File(['open'], 'hours.txt', { type: 'text/plain' }),
    });
    expect(form).toBeInstanceOf(FormData);
    const fields = [...(form as FormData).entries()].map(([name, value]) => [
      name,
      value instanceof File ? `${value.name} ${value.type}` : value,
    ]);
    expect(fields).toEqual([
      ['name', 'Hours'],
      ['type', 'txt'],
      ['file', 'hours.txt text/plain'],
    ]);
  });

  it('sends the token, and the same Idempotency-Key again after a lost answer or a 503', async () => {
    const { sent, fetch } = scripted(
      new TypeError('fetch failed'),
      json(503, { message: 'Service Unavailable' }, { 'retry-after': '0' }),
      json(201, created, { 'idempotent-replayed': 'true' }),
    );
    const api = createClient({ baseUrl: 'http://api.test/', token: 'vak_secret', fetch });
    const key = idempotencyKey();
    const { data, response } = await api.POST('/api/user/knowledgebases', {
      body: { name: 'FAQ' },
      params: { header: { 'Idempotency-Key': key } },
    });
    expect({ data, replayed: response.headers.get('idempotent-replayed') }).toEqual({
      data: created,
      replayed: 'true',
    });
    expect(sent.map((request) => [request.url, request.headers.get('idempotency-key'), request.body])).toEqual(
      Array(3).fill(['http://api.test/api/user/knowledgebases', key, '{"name":"FAQ"}']),
    );
    expect(sent[0].headers.get('authorization')).toBe('Bearer vak_secret');
  });

  it('sends a request without a key once, and gives up after its retries', async () => {
    const once = scripted(new TypeError('fetch failed'));
    await expect(
      createClient({ baseUrl: 'http://api.test', fetch: once.fetch }).POST('/api/user/knowledgebases', {
        body: { name: 'FAQ' },
      }),
    ).rejects.toThrow('fetch failed');
    expect(once.sent).toHaveLength(1);

    const busy = () => json(409, { message: 'A request with this Idempotency-Key is still being processed.' });
    const twice = scripted(busy(), busy());
    const answer = await createClient({ baseUrl: 'http://api.test', fetch: twice.fetch, retries: 1 }).POST(
      '/api/user/knowledgebases',
      { body: { name: 'FAQ' }, params: { header: { 'Idempotency-Key': idempotencyKey() } } },
    );
    expect({ status: answer.response.status, sent: twice.sent.length }).toEqual({ status: 409, sent: 2 });
  });
});
