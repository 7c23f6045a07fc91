import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { everyRoute, servedDocuments } from './support/api-documents';
import { bearer, createAccount, type TestAccount } from './support/factories';
import { AppProcess } from './support/app-process';
import { type Stack, startStack, testConfig } from './support/stack';
import { waitFor } from './support/wait-for';

/** The spec's three error shapes; anything else reaching a client is a defect. */
function isSpecErrorShape(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const keys = Object.keys(body).sort().join(',');
  const record = body as Record<string, unknown>;
  if (keys === 'message') return typeof record.message === 'string';
  if (keys === 'error') return typeof record.error === 'string';
  if (keys === 'errors,message') return typeof record.message === 'string' && typeof record.errors === 'object';
  return false;
}

const RUNTIME_TOKEN = 'runtime-token-for-hardening-0123456789';
const runtime = { Authorization: `Bearer ${RUNTIME_TOKEN}` };

const deepJson = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('Hostile input', () => {
  let stack: Stack;
  let account: TestAccount;
  let knowledgebaseId: number;
  /** Every route of both OpenAPI documents, the public one and the voice runtime's. */
  const documentOfEveryRoute = async () => everyRoute(await servedDocuments(stack.http));
  /** A request of the method the OpenAPI document names, for routes walked from it. */
  const requestOf = (method: string, path: string) =>
    (stack.http as unknown as Record<string, (path: string) => import('supertest').Test>)[method](path);

  beforeAll(async () => {
    stack = await startStack({ worker: false, env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    account = await createAccount(stack);
    knowledgebaseId = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Target' }).expect(201)
    ).body.data.id;
  });
  afterAll(() => stack.close());

  describe('path ids', () => {
    it.each(['0x1', '+1', '1.0', '1e0', ' 1', '01a', '-1', '0', '99999999999', '%2B1'])(
      'treats %p as a missing knowledgebase, never as a real one',
      async (odd) => {
        const id = odd.replace(/1/g, String(knowledgebaseId)).replace(/^ /, '%20');
        const read = await stack.http.get(`/api/user/knowledgebases/${id}`).set(account.auth);
        expect({ id, status: read.status, body: read.body }).toEqual({
          id,
          status: 404,
          body: { error: 'Knowledgebase not found.' },
        });
      },
    );

    it('does not delete a knowledgebase addressed as +<id>', async () => {
      await stack.http.delete(`/api/user/knowledgebases/+${knowledgebaseId}`).set(account.auth).expect(404);
      await stack.http.get(`/api/user/knowledgebases/${knowledgebaseId}`).set(account.auth).expect(200);
    });

    it('still reads a plain decimal id', async () => {
      await stack.http.get(`/api/user/knowledgebases/${knowledgebaseId}`).set(account.auth).expect(200);
    });
  });

  describe('bodies', () => {
    it('refuses JSON nested thousands of levels deep quickly, with 400', async () => {
      const started = Date.now();
      const response = await stack.http
        .post('/api/user/knowledgebases')
        .set(account.auth)
        .set('Content-Type', 'application/json')
        .send(deepJson(5000));
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ message: 'The request body is nested too deeply.' });
      const huge = await stack.http
        .post('/api/auth/login')
        .set('Content-Type', 'application/json')
        .send(deepJson(150_000));
      expect(huge.status).toBe(400);
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it('accepts brackets inside strings, however many', async () => {
      const name = '['.repeat(100);
      const response = await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name });
      expect(response.status).toBe(201);
      expect(response.body.data.name).toBe(name);
    });

    it.each([
      [
        'register',
        '/api/auth/register',
        { name: 'a\u0000b', email: 'x@example.com', password: 'long enough password' },
        'name',
      ],
      ['login', '/api/auth/login', { email: 'a\u0000@example.com', password: 'x' }, 'email'],
      ['api key', '/api/user/api-keys', { name: 'ke\u0000y' }, 'name'],
      ['knowledgebase', '/api/user/knowledgebases', { name: 'ok', description: 'bad\u0000' }, 'description'],
    ])('answers a NUL character in the %s body with 422 on that field', async (_what, path, body, field) => {
      const response = await stack.http.post(path).set(account.auth).send(body);
      expect(response.status).toBe(422);
      expect(response.body.errors[field]).toEqual([`The ${field} field contains invalid characters.`]);
    });

    it('answers a NUL character in a document field and in a search query with 422', async () => {
      const document = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .send({ name: 'Site', type: 'website', links: [{ link: 'http://example.com/\u0000' }] });
      expect(document.status).toBe(422);
      expect(document.body.errors['links.0.link']).toEqual(['The links.0.link field contains invalid characters.']);
      const search = await stack.http
        .get(`/api/user/knowledgebases/${knowledgebaseId}/search`)
        .query({ query: 'open\u0000hours' })
        .set(account.auth);
      expect(search.status).toBe(422);
      expect(search.body.errors.query).toEqual(['The query field contains invalid characters.']);
    });

    it('answers a lone UTF-16 surrogate with 422, without credentials too', async () => {
      const response = await stack.http
        .post('/api/auth/register')
        .set('Content-Type', 'application/json')
        .send('{"name":"Ada","email":"ada\\ud800@example.com","password":"long enough password"}');
      expect(response.status).toBe(422);
      expect(response.body.errors.email).toEqual(['The email field contains invalid characters.']);
    });

    it('ignores __proto__ keys', async () => {
      const response = await stack.http
        .post('/api/user/knowledgebases')
        .set(account.auth)
        .set('Content-Type', 'application/json')
        .send('{"name":"Proto","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
      expect(response.status).toBe(201);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('refuses a form body with more than 1,000 parameters with 413, without credentials', async () => {
      const form = Array.from({ length: 1_500 }, (_, index) => `p${index}=1`).join('&');
      const response = await stack.http
        .post('/api/auth/login')
        .set('Content-Type', 'application/x-www-form-urlencoded')
        .send(form);
      expect(response.status).toBe(413);
      expect(response.body).toEqual({ message: 'The request body has too many parameters.' });
    });

    it.each(['gzip', 'deflate', 'br'])(
      'refuses a %s body that is not valid compressed data with 400',
      async (encoding) => {
        const response = await stack.http
          .post('/api/auth/login')
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .send('{"email":"not compressed"}');
        expect(response.status).toBe(400);
        expect(response.body).toEqual({ message: 'The request body could not be read (check its encoding).' });
      },
    );

    it('still accepts a valid gzip body', async () => {
      const response = await stack.http
        .post('/api/user/knowledgebases')
        .set(account.auth)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        // Sent as the bytes given: without this the client would serialise the Buffer as JSON.
        .serialize((body: Buffer) => body as unknown as string)
        .send(gzipSync(JSON.stringify({ name: 'Zipped' })));
      expect(response.status).toBe(201);
      expect(response.body.data.name).toBe('Zipped');
    });
  });

  describe('empty strings are null, as in Laravel', () => {
    it('stores an empty multipart description as null', async () => {
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .field('name', 'Hours')
        .field('type', 'txt')
        .field('description', '')
        .attach('file', Buffer.from('Open nine to five.'), 'hours.txt');
      expect(response.status).toBe(201);
      expect(response.body.data.description).toBeNull();
    });

    it('ignores an empty relative_links_limit, and any relative_links_limit, on a file upload', async () => {
      for (const value of ['', 'abc']) {
        const response = await stack.http
          .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
          .set(account.auth)
          .field('name', 'Hours')
          .field('type', 'txt')
          .field('relative_links_limit', value)
          .attach('file', Buffer.from('Open nine to five.'), 'hours.txt');
        expect({ value, status: response.status }).toEqual({ value, status: 201 });
      }
    });

    it('treats an empty required name as missing', async () => {
      const response = await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: '' });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual({ name: ['The name field is required.'] });
    });
  });

  describe('uploads', () => {
    it('answers a file under another field name with the validation shape on file', async () => {
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .field('name', 'Hours')
        .field('type', 'txt')
        .attach('attachment', Buffer.from('Open.'), 'hours.txt');
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        message: 'The file field is required.',
        errors: { file: ['The file field is required.'] },
      });
    });

    it('answers two files with the validation shape on file', async () => {
      const response = await stack.http
        .post(`/api/user/knowledgebases/${knowledgebaseId}/documents`)
        .set(account.auth)
        .field('name', 'Hours')
        .field('type', 'txt')
        .attach('file', Buffer.from('One.'), 'one.txt')
        .attach('file', Buffer.from('Two.'), 'two.txt');
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual({ file: ['The file field must be a file.'] });
    });
  });

  describe('requests Node cannot parse', () => {
    it('answers them in the message shape instead of a bare 400', async () => {
      const server = stack.api.getHttpServer();
      if (!server.listening) {
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
      }
      const { port } = server.address() as AddressInfo;
      const socket = connect(port, '127.0.0.1');
      socket.end('NOT A REQUEST LINE\r\n\r\n');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      await once(socket, 'close');
      const answer = Buffer.concat(chunks).toString('utf8');
      expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(answer.split('\r\n\r\n')[1]).toBe('{"message":"The request is malformed."}');
    });
  });

  describe('methods', () => {
    it('answers a wrong method on a known path with 405 and Allow', async () => {
      const response = await stack.http.patch(`/api/user/knowledgebases/${knowledgebaseId}`).set(account.auth);
      expect(response.status).toBe(405);
      expect(response.headers.allow).toBe('DELETE, GET, HEAD, PUT');
      expect(response.body).toEqual({ message: 'The method is not supported for this route.' });
    });

    it('still answers an unknown path with 404', async () => {
      const response = await stack.http.get('/api/user/nothing-here').set(account.auth);
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ message: 'Not found.' });
    });
  });

  describe('fuzz over every documented route', () => {
    const hostileValues: unknown[] = [
      '\u0000',
      'x'.repeat(70_000),
      '\ud800',
      -1,
      1e308,
      99999999999,
      [99999999999],
      3.5,
      true,
      [],
      [[[[[]]]]],
      {},
      { __proto__: { x: 1 } },
      null,
    ];
    const oddIds = ['0x1', '+1', '1.0', '1e0', '-1', '99999999999', 'abc', '%00'];

    it('never answers 5xx, and always in one of the spec shapes', async () => {
      const document = await documentOfEveryRoute();
      const failures: string[] = [];
      let requests = 0;
      for (const [template, operations] of Object.entries<Record<string, { requestBody?: unknown }>>(document.paths)) {
        for (const method of Object.keys(operations)) {
          const properties = requestProperties(document, operations[method]);
          for (const id of oddIds) {
            const path = template.replace(/\{[^}]+\}/g, id);
            const payloads: unknown[] = properties.length
              ? hostileValues.map((value) => Object.fromEntries(properties.map((name) => [name, value])))
              : [{}];
            for (const payload of payloads.slice(0, id === '0x1' ? undefined : 1)) {
              const call = requestOf(method, path)
                .set(account.auth)
                .query({ page: '\u0000', per_page: 'x'.repeat(300), query: '\ud800' });
              const response =
                method === 'get' || method === 'delete' ? await call : await call.send(payload as object);
              requests++;
              if (response.status >= 500 || (response.status >= 400 && !isSpecErrorShape(response.body))) {
                failures.push(`${method.toUpperCase()} ${path} -> ${response.status} ${JSON.stringify(response.body)}`);
              }
            }
          }
        }
      }
      expect(requests).toBeGreaterThan(100);
      expect(failures).toEqual([]);
    }, 180_000);
  });
  describe('integers and ids', () => {
    let english: number;
    let assistantId: number;
    let campaignId: number;
    let callId: number;
    // Its own account: the fuzz above logs the first one out.
    let owner: TestAccount;
    let ownKnowledgebaseId: number;
    const call = (method: string, path: string) =>
      requestOf(method, path).set(path.startsWith('/api/internal/') ? runtime : owner.auth);

    beforeAll(async () => {
      owner = await createAccount(stack);
      ownKnowledgebaseId = (await call('post', '/api/user/knowledgebases').send({ name: 'Integers' }).expect(201)).body
        .data.id;
      const languages = (await call('get', '/api/user/assistants/languages').expect(200)).body;
      english = languages.find((language: { iso_2: string }) => language.iso_2 === 'en').id;
      assistantId = (
        await call('post', '/api/user/assistant')
          .send({ name: 'Caller', type: 'outbound', language_id: english })
          .expect(201)
      ).body.data.id;
      campaignId = (
        await call('post', '/api/user/campaign').send({ name: 'Renewals', assistant_id: assistantId }).expect(201)
      ).body.data.id;
      callId = (
        await call('put', `/api/internal/calls/fuzz-call-${owner.id}`)
          .send({
            assistant_id: assistantId,
            type: 'outbound',
            status: 'in-progress',
            client_phone_number: '+14155550100',
            assistant_phone_number: '+14155550101',
          })
          .expect(201)
      ).body.data.id;
    });

    /** A real resource for each path parameter, so that a request reaches its body and query checks. */
    const pathFor = (template: string) =>
      template
        .replace(
          /\/(assistant|campaign)\/\{id\}/,
          (_, kind: string) => `/${kind}/${kind === 'assistant' ? assistantId : campaignId}`,
        )
        .replace(/\/knowledgebases\/\{(id|knowledgebaseId)\}/, `/knowledgebases/${ownKnowledgebaseId}`)
        .replace(/\/calls\/\{id\}/, `/calls/${callId}`)
        .replace(/\{externalId\}/, `fuzz-call-${owner.id}`)
        .replace(/\{[^}]+\}/g, '1');
    /** Fields a body needs before its integer fields are looked at (`relative_links_limit` is a website's). */
    const baseBodies: Record<string, object> = {
      'post /api/user/knowledgebases/{knowledgebaseId}/documents': {
        name: 'Site',
        type: 'website',
        url: 'http://127.0.0.1:9/',
      },
    };
    const oddQueryIntegers = ['0x1', '+1', ' 1', '1.0', '1e0', '1 ', '-1', '0', '99999999999', 'abc', '١'];
    const oddBodyIntegers: unknown[] = [99999999999, 2147483648, -1, 1.5, 1e308, 'abc', true, [1]];
    const oddBodyIdLists: unknown[] = [[99999999999], [2147483648], [-1], [0], [1.5], ['1'], [1e308], 99999999999];

    it('answers every odd integer in a query string with 422 on that parameter (page is taken as 1)', async () => {
      const document = await documentOfEveryRoute();
      const failures: string[] = [];
      let checked = 0;
      for (const [template, operations] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          const parameters = (operation.parameters ?? []).filter(
            (parameter: any) => parameter.in === 'query' && parameter.schema?.type === 'integer',
          );
          const base = (operation.parameters ?? []).some((parameter: any) => parameter.name === 'query')
            ? { query: 'hours' }
            : {};
          for (const { name } of parameters) {
            for (const value of oddQueryIntegers) {
              const response = await call(method, pathFor(template)).query({ ...base, [name]: value });
              checked++;
              const expected =
                name === 'page'
                  ? response.status === 200
                  : response.status === 422 && response.body.errors?.[name]?.length === 1;
              if (!expected || !isSpecErrorShape(response.status === 200 ? { message: '' } : response.body)) {
                failures.push(
                  `${method} ${template}?${name}=${JSON.stringify(value)} -> ${response.status} ${JSON.stringify(response.body)}`,
                );
              }
            }
          }
        }
      }
      expect(checked).toBeGreaterThan(100);
      expect(failures).toEqual([]);
    }, 120_000);

    it('answers every odd integer or id in a JSON body with 422 on that field', async () => {
      const document = await documentOfEveryRoute();
      const failures: string[] = [];
      let checked = 0;
      for (const [template, operations] of Object.entries<Record<string, any>>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          if (method === 'delete') continue;
          const schema = requestSchema(document, operation);
          for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
            const list = property.type === 'array' && property.items?.type === 'integer';
            if (property.type !== 'integer' && !list) continue;
            for (const value of list ? oddBodyIdLists : oddBodyIntegers) {
              const body = { ...baseBodies[`${method} ${template}`], [name]: value };
              const response = await call(method, pathFor(template)).send(body);
              checked++;
              const fields = Object.keys(response.body.errors ?? {});
              if (response.status !== 422 || !fields.some((field) => field === name || field.startsWith(`${name}.`))) {
                failures.push(
                  `${method} ${template} ${JSON.stringify(body)} -> ${response.status} ${JSON.stringify(response.body)}`,
                );
              }
            }
          }
        }
      }
      expect(checked).toBeGreaterThan(150);
      expect(failures).toEqual([]);
    }, 120_000);

    it('documents every integer list as an array of integers', async () => {
      const schemas = (await documentOfEveryRoute()).components.schemas;
      const lists = Object.entries<any>(schemas).flatMap(([schema, { properties = {} }]) =>
        Object.entries<any>(properties)
          .filter(([name]) => name.endsWith('_ids'))
          .map(([name, property]) => ({ at: `${schema}.${name}`, type: property.type, items: property.items })),
      );
      expect(lists.length).toBeGreaterThan(5);
      for (const list of lists) expect(list).toEqual({ at: list.at, type: 'array', items: { type: 'integer' } });
    });

    it.each([
      ['language_id', 99999999999],
      ['knowledgebase_id', 99999999999],
      ['phone_number_id', 2147483648],
      ['folder_id', -1],
      ['label_ids', [1, 99999999999]],
      ['tool_ids', [99999999999]],
      ['secondary_language_ids', [0]],
    ])('refuses an assistant whose %s is %p in Laravel’s words', async (field, value) => {
      const response = await call('post', '/api/user/assistant').send({
        name: 'Out of range',
        type: 'outbound',
        language_id: english,
        [field]: value,
      });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual({ [field]: [`The selected ${field.replace(/_/g, ' ')} is invalid.`] });
    });

    it('refuses ids no row can have where campaigns, leads and calls reference them', async () => {
      const cases: [string, string, object, string][] = [
        ['post', '/api/user/campaign', { name: 'X', assistant_id: 99999999999 }, 'assistant_id'],
        [
          'post',
          '/api/user/campaign',
          { name: 'X', assistant_id: assistantId, phone_number_ids: [99999999999] },
          'phone_number_ids',
        ],
        ['put', `/api/user/campaign/${campaignId}`, { assistant_id: -1 }, 'assistant_id'],
        ['post', '/api/user/campaigns/update-status', { campaign_id: 99999999999, action: 'start' }, 'campaign_id'],
        ['post', '/api/user/lead', { phone_number: '+14155550100', campaign_id: 99999999999 }, 'campaign_id'],
      ];
      const ingested = {
        assistant_id: assistantId,
        type: 'outbound',
        status: 'initiated',
        client_phone_number: '+14155550100',
        assistant_phone_number: '+14155550199',
      };
      for (const field of ['assistant_id', 'campaign_id', 'lead_id']) {
        cases.push(['put', '/api/internal/calls/out-of-range', { ...ingested, [field]: 99999999999 }, field]);
      }
      for (const [method, path, body, field] of cases) {
        const response = await call(method, path).send(body);
        expect({ path, status: response.status, errors: response.body.errors }).toEqual({
          path,
          status: 422,
          errors: { [field]: [`The selected ${field.replace(/_/g, ' ')} is invalid.`] },
        });
      }
      const exponent = await call('post', '/api/user/campaign')
        .set('Content-Type', 'application/json')
        .send(`{"name":"X","assistant_id":1e9}`);
      expect(exponent.status).toBe(422);
      expect(exponent.body.errors).toEqual({ assistant_id: ['The selected assistant id is invalid.'] });
      const text = await call('post', '/api/user/campaign').send({ name: 'X', assistant_id: String(assistantId) });
      expect(text.status).toBe(422);
      expect(text.body.errors).toEqual({ assistant_id: ['The assistant id field must be an integer.'] });
    });

    it('answers an item of an object list that is not an object with 422 on that item, in every body', async () => {
      const document = await documentOfEveryRoute();
      const objectLists: string[] = [];
      for (const [template, operations] of Object.entries<any>(document.paths)) {
        for (const [method, operation] of Object.entries<any>(operations)) {
          if (!['post', 'put', 'patch'].includes(method)) continue;
          const schema = requestSchema(document, operation);
          for (const [field, property] of Object.entries<any>(schema?.properties ?? {})) {
            if (property.type !== 'array' || !property.items?.$ref) continue;
            objectLists.push(`${method} ${template} ${field}`);
            for (const item of [[], 'x', 7, null, [{ name: 'x' }]]) {
              const key = `${method} ${template} ${field} ${JSON.stringify(item)}`;
              const response = await call(method, pathFor(template)).send({
                ...(baseBodies[`${method} ${template}`] ?? {}),
                [field]: [item],
              });
              expect({ key, status: response.status, errors: response.body.errors?.[`${field}.0`] }).toEqual({
                key,
                status: 422,
                errors: [`The ${field.replace(/_/g, ' ')}.0 field must be an object.`],
              });
            }
          }
        }
      }
      // The lists named in the defect report are among them.
      for (const listed of [
        'post /api/user/lead secondary_contacts',
        'post /api/user/tools headers',
        'post /api/user/tools static_fields',
        'post /api/user/tools schema',
        'post /api/user/assistant post_call_schema',
        'post /api/user/knowledgebases/{knowledgebaseId}/documents links',
      ])
        expect(objectLists).toContain(listed);
    }, 60_000);

    it('refuses two post-call fields with the same name, on the later one', async () => {
      const field = { type: 'string', description: 'What the caller wants' };
      const response = await call('put', `/api/user/assistant/${assistantId}`).send({
        post_call_schema: [
          { name: 'intent', ...field },
          { name: 'budget', ...field },
          { name: 'intent', ...field },
        ],
      });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        message: 'The post call schema.2.name field has a duplicate value.',
        errors: { 'post_call_schema.2.name': ['The post call schema.2.name field has a duplicate value.'] },
      });
      const read = await call('get', `/api/user/assistant/${assistantId}`).expect(200);
      expect(read.body.data.post_call_schema).toEqual([]);
    });
  });
});

/** An operation's JSON (or multipart) request body schema, resolved through `$ref`. */
function requestSchema(document: any, operation: { requestBody?: any }): any {
  const content = operation.requestBody?.content ?? {};
  const schema = (content['application/json'] ?? content['multipart/form-data'])?.schema;
  if (!schema) return undefined;
  return schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema;
}

/** Property names of an operation's JSON request body, resolved through `$ref`. */
function requestProperties(document: any, operation: { requestBody?: any }): string[] {
  return Object.keys(requestSchema(document, operation)?.properties ?? {});
}

describe('Deletes racing the requests that use what they delete', () => {
  let stack: Stack;
  let account: TestAccount;
  let english: number;
  const post = (path: string, body: object) => stack.http.post(`/api/user/${path}`).set(account.auth).send(body);
  const remove = (path: string) => stack.http.delete(`/api/user/${path}`).set(account.auth);
  /**
   * Sends the requests at once and returns those answered otherwise than allowed (a response the OpenAPI document
   * does not describe shows as the error the conformance check throws).
   */
  const unexpected = async (requests: Record<string, [PromiseLike<{ status: number }>, number[]]>) => {
    const entries = Object.entries(requests);
    const results = await Promise.allSettled(entries.map(([, [request]]) => request));
    return results.flatMap((result, index) => {
      const [name, [, allowed]] = entries[index];
      const answer = result.status === 'fulfilled' ? result.value.status : String(result.reason);
      return typeof answer === 'number' && allowed.includes(answer) ? [] : [`${name}: ${answer}`];
    });
  };

  beforeAll(async () => {
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    account = await createAccount(stack);
    const languages = (await stack.http.get('/api/user/assistants/languages').set(account.auth).expect(200)).body;
    english = languages.find((language: { iso_2: string }) => language.iso_2 === 'en').id;
  });
  afterAll(() => stack.close());

  it('answers 4xx, never 5xx, when an assistant, its folder and label go while it is assigned them and used', async () => {
    for (let round = 0; round < 8; round++) {
      const folder = (await post('folder', { name: `Folder ${round}` }).expect(201)).body.data.id;
      const label = (await post('label', { name: `Label ${round}` }).expect(201)).body.data.id;
      const assistant = (
        await post('assistant', {
          name: `Caller ${round}`,
          type: 'outbound',
          language_id: english,
          folder_id: folder,
          label_ids: [label],
        }).expect(201)
      ).body.data.id;
      const assign = () =>
        stack.http
          .put(`/api/user/assistant/${assistant}`)
          .set(account.auth)
          .send({ folder_id: folder, label_ids: [label], secondary_language_ids: [english] });
      const answers = await unexpected({
        assign: [assign(), [200, 404, 422]],
        deleteLabel: [remove(`label/${label}`), [200]],
        assignAgain: [assign(), [200, 404, 422]],
        deleteFolder: [remove(`folder/${folder}`), [200]],
        campaign: [post('campaign', { name: `Campaign ${round}`, assistant_id: assistant }), [201, 422]],
        call: [
          stack.http.put(`/api/internal/calls/race-${round}`).set(runtime).send({
            assistant_id: assistant,
            type: 'outbound',
            status: 'initiated',
            client_phone_number: '+14155550100',
            assistant_phone_number: '+14155550199',
          }),
          [201, 422],
        ],
        deleteAssistant: [remove(`assistant/${assistant}`), [200]],
      });
      expect({ round, answers }).toEqual({ round, answers: [] });
      await stack.http.get(`/api/user/assistant/${assistant}`).set(account.auth).expect(404);
    }
  }, 120_000);

  it('answers a document added to a knowledgebase being deleted with 201 or the knowledgebase’s 404', async () => {
    for (let round = 0; round < 5; round++) {
      const knowledgebase = (await post('knowledgebases', { name: `Racing ${round}` }).expect(201)).body.data.id;
      const answers = await unexpected({
        document: [
          stack.http
            .post(`/api/user/knowledgebases/${knowledgebase}/documents`)
            .set(account.auth)
            .field('name', 'Hours')
            .field('type', 'txt')
            .attach('file', Buffer.from('Open nine to five.'), 'hours.txt'),
          [201, 404],
        ],
        deleteKnowledgebase: [remove(`knowledgebases/${knowledgebase}`), [200]],
      });
      expect({ round, answers }).toEqual({ round, answers: [] });
    }
  }, 60_000);

  it('deletes a campaign while its leads are being imported and created, without a deadlock', async () => {
    const assistant = (
      await post('assistant', { name: 'Importer', type: 'outbound', language_id: english }).expect(201)
    ).body.data.id;
    const rows = Array.from({ length: 2_500 }, (_, index) => `+1415${String(5_000_000 + index)}`).join('\n');
    for (let round = 0; round < 3; round++) {
      const campaign = (await post('campaign', { name: `Import ${round}`, assistant_id: assistant }).expect(201)).body
        .data.id;
      const upload = () =>
        stack.http
          .post(`/api/user/campaign/${campaign}/leads/import`)
          .set(account.auth)
          .attach('file', Buffer.from(`phone_number\n${rows}\n`), 'leads.csv');
      const first = (await upload().expect(202)).body.data.id;
      const earlier = (await post('lead', { phone_number: '+14155550102', campaign_id: campaign }).expect(201)).body
        .data.id;
      // Waits until the worker is writing the import, so the delete lands in the middle of it.
      await waitFor(
        async () => {
          const progress = await stack.http
            .get(`/api/user/campaign/${campaign}/leads/imports/${first}`)
            .set(account.auth)
            .expect(200);
          return progress.body.data.rows_imported > 0 || progress.body.data.status !== 'processing' ? true : undefined;
        },
        30_000,
        20,
      );
      const answers = await unexpected({
        upload: [upload(), [202, 404]],
        lead: [post('lead', { phone_number: '+14155550100', campaign_id: campaign }), [201, 422]],
        blacklist: [
          stack.http.patch(`/api/user/leads/${earlier}`).set(account.auth).send({ status: 'blacklisted' }),
          [200, 404],
        ],
        deleteCampaign: [remove(`campaign/${campaign}`), [200]],
        leadAfter: [post('lead', { phone_number: '+14155550101', campaign_id: campaign }), [201, 422]],
      });
      expect({ round, answers }).toEqual({ round, answers: [] });
      await stack.http.get(`/api/user/campaign/${campaign}/leads/imports/${first}`).set(account.auth).expect(404);
      const leads = await stack.http.get('/api/user/leads').query({ campaign_id: campaign }).set(account.auth);
      expect(leads.body.total).toBe(0);
    }
  }, 180_000);
});

describe('Uploads held at once', () => {
  let stack: Stack;
  let account: TestAccount;
  let knowledgebaseId: number;

  beforeAll(async () => {
    // The smallest budget: one whole upload at a time.
    stack = await startStack({ worker: false, env: { UPLOAD_BUDGET_MB: '21' } });
    account = await createAccount(stack);
    knowledgebaseId = (
      await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Uploads' }).expect(201)
    ).body.data.id;
  });
  afterAll(() => stack.close());

  it('answers 503 with Retry-After past the budget, before reading the body, and takes the upload once one is done', async () => {
    const server = stack.api.getHttpServer() as import('node:http').Server;
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const boundary = 'x-boundary';
    const path = `/api/user/knowledgebases/${knowledgebaseId}/documents`;
    const file = Buffer.alloc(15 * 1024 * 1024, 'a');
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nBig\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\ntxt\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.txt"\r\n` +
        'Content-Type: text/plain\r\n\r\n',
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const length = head.length + file.length + tail.length;
    // The first upload sends its headers and half its file, then waits. Once the kernel has taken the half (a
    // `drain`), the server is reading the body: the upload was admitted and holds its share of the budget.
    const first = connect(port, '127.0.0.1');
    await once(first, 'connect');
    let firstAnswer = '';
    first.on('data', (chunk: Buffer) => (firstAnswer += chunk.toString()));
    const half = file.length / 2;
    const written = first.write(
      Buffer.concat([
        Buffer.from(
          `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: ${account.auth.Authorization}\r\n` +
            `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n`,
        ),
        head,
        file.subarray(0, half),
      ]),
    );
    if (!written) await once(first, 'drain');
    // Another upload meanwhile: refused at once, before its body is read.
    const second = await stack.http
      .post(path)
      .set(account.auth)
      .field('name', 'Second')
      .field('type', 'txt')
      .attach('file', file, 'second.txt')
      .expect(503);
    expect(second.body).toEqual({ message: 'Too many uploads are in progress. Please try again shortly.' });
    expect(second.headers['retry-after']).toBe('2');
    // A client that sends its whole body before it reads (Node's fetch does) meets the same 503, not a reset.
    const form = new FormData();
    form.set('name', 'Third');
    form.set('type', 'txt');
    form.set('file', new Blob([file]), 'third.txt');
    const third = await fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: account.auth,
      body: form,
    });
    expect([third.status, third.headers.get('retry-after')]).toEqual([503, '2']);
    // The first completes and is taken.
    first.write(Buffer.concat([file.subarray(half), tail]));
    await waitFor(async () => (firstAnswer.includes('\r\n\r\n') ? true : undefined));
    expect(firstAnswer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    first.destroy();
    // Its share given back, the retried upload is taken too.
    await waitFor(async () => {
      const response = await stack.http
        .post(path)
        .set(account.auth)
        .field('name', 'Second')
        .field('type', 'txt')
        .attach('file', file, 'second.txt');
      return response.status === 201 ? response : undefined;
    });
  }, 60_000);
});

/** An answer as Node's fetch (undici) reads it, or how the request failed when it could not be read. */
interface FetchOutcome {
  status?: number;
  retryAfter?: string | null;
  connection?: string | null;
  body?: unknown;
  failed?: string;
}

/** A request through Node's fetch, which writes the whole body before it reads: a reset shows as `failed`. */
async function fetchOutcome(url: string, init: RequestInit): Promise<FetchOutcome> {
  try {
    const response = await fetch(url, init);
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      connection: response.headers.get('connection'),
      body: JSON.parse(text),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { failed: cause?.code ?? cause?.message ?? String(error) };
  }
}

/** A multipart upload of a TXT file of `bytes` bytes, as a client builds it. */
function uploadForm(bytes: number, name = 'Refused'): FormData {
  const form = new FormData();
  form.set('name', name);
  form.set('type', 'txt');
  form.set('file', new Blob([Buffer.alloc(bytes, 'a')]), 'refused.txt');
  return form;
}

const MIB = 1024 * 1024;

/**
 * The API in a process of its own, as deployed: its memory is its own, and its answers cross a real connection
 * between processes (within one process the client reads them before the server's close is noticed, and a reset
 * rarely shows).
 */
describe('Refusals sent before the body is read, as ordinary clients see them', () => {
  const RATE_LIMIT = 200;
  let api: AppProcess;
  let port: number;
  let token: { Authorization: string };
  let documents: string;
  const json = { 'Content-Type': 'application/json' };

  const register = async (name: string) => {
    const registered = await fetch(`${api.baseUrl}/auth/register`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ name, email: `${name}-${Date.now()}@example.com`, password: 'a long password' }),
    });
    return bearer(((await registered.json()) as { token: string }).token);
  };
  const knowledgebaseOf = async (owner: { Authorization: string }) => {
    const created = await fetch(`${api.baseUrl}/user/knowledgebases`, {
      method: 'POST',
      headers: { ...json, ...owner },
      body: JSON.stringify({ name: 'Uploads' }),
    });
    return `${api.baseUrl}/user/knowledgebases/${((await created.json()) as { data: { id: number } }).data.id}/documents`;
  };
  /** `count` requests at once: none may fail to read its answer, and each must read `expected`. */
  const allRead = async (count: number, request: (index: number) => Promise<FetchOutcome>, expected: FetchOutcome) => {
    const outcomes = await Promise.all(Array.from({ length: count }, (_, index) => request(index)));
    expect(outcomes.filter((outcome) => outcome.failed)).toEqual([]);
    for (const outcome of outcomes) expect(outcome).toEqual(expected);
  };

  beforeAll(async () => {
    // The smallest budget, and rate windows of its own: the suites before it spent 127.0.0.1's budget in the run's.
    api = await AppProcess.start({
      UPLOAD_BUDGET_MB: '21',
      RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
      QUEUE_PREFIX: `${testConfig().queuePrefix}:refusals`,
    });
    port = Number(new URL(api.baseUrl).port);
    token = await register('uploader');
    documents = await knowledgebaseOf(token);
  }, 120_000);
  afterAll(() => api?.stop());

  it('answers every Node fetch past the upload budget a readable 503 with Retry-After, and holds none of their bodies', async () => {
    // One upload holds most of the budget: its headers and half its 15 MiB file are sent, the rest waits.
    const holder = connect(port, '127.0.0.1');
    await once(holder, 'connect');
    let holderAnswer = '';
    holder.on('data', (chunk: Buffer) => (holderAnswer += chunk.toString()));
    const boundary = 'x-holder';
    const file = Buffer.alloc(15 * MIB, 'h');
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nHolder\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="type"\r\n\r\ntxt\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="holder.txt"\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const request = Buffer.from(
      `POST ${new URL(documents).pathname} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
        `Authorization: ${token.Authorization}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
        `Content-Length: ${head.length + file.length + tail.length}\r\n\r\n`,
    );
    if (!holder.write(Buffer.concat([request, head, file.subarray(0, file.length / 2)]))) await once(holder, 'drain');

    const rss = () =>
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${api.child.pid}/status`, 'utf8'))![1]) * 1024;
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20);
    const uploads = 48;
    const size = 8 * MIB;
    try {
      await allRead(
        uploads,
        (index) =>
          fetchOutcome(documents, { method: 'POST', headers: token, body: uploadForm(size, `Refused ${index}`) }),
        {
          status: 503,
          retryAfter: '2',
          connection: 'close',
          body: { message: 'Too many uploads are in progress. Please try again shortly.' },
        },
      );
    } finally {
      clearInterval(sampler);
    }
    // Read and thrown away, never held: the process grew by a small part of the 384 MiB sent to it (43-44 MiB
    // measured: the requests' own work and the read buffers not yet collected).
    expect(peak - before).toBeLessThan((uploads * size) / 4);

    // The held upload is still taken.
    holder.write(Buffer.concat([file.subarray(file.length / 2), tail]));
    await waitFor(async () => (holderAnswer.includes('\r\n\r\n') ? true : undefined));
    expect(holderAnswer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    holder.destroy();
  }, 120_000);

  it('lets Node’s fetch read a 401 on a multi-MiB upload', async () => {
    await allRead(16, () => fetchOutcome(documents, { method: 'POST', body: uploadForm(6 * MIB) }), {
      status: 401,
      retryAfter: null,
      connection: 'close',
      body: { message: 'Unauthenticated.' },
    });
  }, 60_000);

  it('lets Node’s fetch read a 413 on a JSON body over 1 MB, refused by its Content-Length', async () => {
    const body = JSON.stringify({ name: 'x'.repeat(6 * MIB) });
    await allRead(
      16,
      () =>
        fetchOutcome(`${api.baseUrl}/user/knowledgebases`, {
          method: 'POST',
          headers: { ...token, ...json },
          body,
        }),
      { status: 413, retryAfter: null, connection: 'close', body: { message: 'The request body is too large.' } },
    );
  }, 60_000);

  it('lets Node’s fetch read a 422 on a file over 20 MB', async () => {
    const message = 'The file field must not be greater than 20480 kilobytes.';
    // One after the other: each takes the whole budget until its answer.
    for (let attempt = 0; attempt < 3; attempt++)
      await allRead(1, () => fetchOutcome(documents, { method: 'POST', headers: token, body: uploadForm(24 * MIB) }), {
        status: 422,
        retryAfter: null,
        // Closed, unless the rest of the file was read before the answer (multer reads past the limit).
        connection: expect.stringMatching(/^(close|keep-alive)$/),
        body: { message, errors: { file: [message] } },
      });
  }, 60_000);

  it('lets Node’s fetch read a 429 on an upload past the rate limit', async () => {
    const limited = await register('limited');
    const limitedDocuments = await knowledgebaseOf(limited);
    // The rest of its minute's budget spent on cheap reads.
    for (let spent = 1; spent < RATE_LIMIT; spent += 20)
      await Promise.all(
        Array.from({ length: Math.min(20, RATE_LIMIT - spent) }, () =>
          fetch(`${api.baseUrl}/user/me`, { headers: limited }).then((response) => response.arrayBuffer()),
        ),
      );
    await allRead(
      16,
      () => fetchOutcome(limitedDocuments, { method: 'POST', headers: limited, body: uploadForm(6 * MIB) }),
      {
        status: 429,
        retryAfter: expect.stringMatching(/^\d+$/),
        connection: 'close',
        body: { message: 'Too Many Attempts.' },
      },
    );
  }, 60_000);

  it('lets curl read the refusal of an upload', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'refused-upload-'));
    try {
      const file = join(directory, 'big.txt');
      await writeFile(file, Buffer.alloc(8 * MIB, 'a'));
      const curl = () =>
        promisify(execFile)(
          'curl',
          ['-s', '-w', '\n%{http_code}', '-F', 'name=Curl', '-F', 'type=txt', '-F', `file=@${file}`, documents],
          { encoding: 'utf8', timeout: 30_000 },
        ).catch((error: { stdout: string; code: number }) => ({ stdout: `${error.stdout} (curl exit ${error.code})` }));
      const answers = await Promise.all(Array.from({ length: 8 }, curl));
      expect(answers.map((answer) => answer.stdout)).toEqual(Array(8).fill('{"message":"Unauthenticated."}\n401'));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
