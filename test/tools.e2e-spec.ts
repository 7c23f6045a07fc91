import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LocalSite, startLocalSite } from '../libs/outbound-http/test/local-site';
import { restrictSocketsToLoopback } from '../libs/outbound-http/test/loopback-only-sockets';
import { SELF_SIGNED } from '../libs/outbound-http/test/self-signed-certificate';
import { createAccount, type TestAccount } from './support/factories';
import { type Stack, startStack } from './support/stack';

const echo = (request: import('node:http').IncomingMessage, response: import('node:http').ServerResponse) =>
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, path: request.url }));

describe('Mid-call tools', () => {
  let stack: Stack;
  let account: TestAccount;
  let other: TestAccount;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startLocalSite({
      '*': echo,
      '/never': () => undefined, // never answers
      '/large': (_request, response) =>
        response.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000)),
      '/text': (_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('plain words'),
      '/private-redirect': (_request, response) =>
        response.writeHead(302, { location: 'http://10.0.0.1/internal' }).end(),
    });
    stack = await startStack({ worker: false });
    account = await createAccount(stack);
    other = await createAccount(stack);
  });
  afterAll(async () => {
    await stack.close();
    await site.close();
  });

  const valid = (overrides: Record<string, unknown> = {}) => ({
    name: 'lookup_order',
    description: 'Finds an order by its number',
    endpoint: `${site.origin}/orders/{order_id}`,
    method: 'GET',
    ...overrides,
  });
  /** An `array` parameter's keywords, lists of lists `levels` deep below the argument, strings at the bottom. */
  const nestedLists = (levels: number): { type: string; items?: object } =>
    levels === 0 ? { type: 'string' } : { type: 'array', items: nestedLists(levels - 1) };
  const create = (body: object, owner = account) => stack.http.post('/api/user/tools').set(owner.auth).send(body);
  const lastRequest = () => site.requests[site.requests.length - 1];

  describe('CRUD', () => {
    it('creates with defaults and answers every field of the resource', async () => {
      const response = await create(valid({ name: 'defaults_tool', id: 99, user_id: 1 })).expect(201);
      expect(response.body).toEqual({
        message: 'Tool created successfully.',
        data: {
          id: expect.any(Number),
          name: 'defaults_tool',
          description: 'Finds an order by its number',
          type: 'http',
          endpoint: `${site.origin}/orders/{order_id}`,
          method: 'GET',
          body_format: 'json',
          timeout: 10,
          headers: [],
          static_fields: [],
          schema: [],
          automation_flow_id: null,
          created_at: expect.stringMatching(/Z$/),
          updated_at: expect.stringMatching(/Z$/),
        },
      });
      expect(response.body.data.id).not.toBe(99);
    });

    it('lists as a bare array, reads, updates partially and deletes', async () => {
      const created = (
        await create(
          valid({
            name: 'crud_tool',
            headers: [{ name: 'X-Api-Key', value: 'secret-1' }],
            static_fields: [{ key: 'source', value: 'phone' }],
            schema: [{ name: 'order_id', type: 'string', description: 'The order', required: true }],
          }),
        ).expect(201)
      ).body.data;
      const list = await stack.http.get('/api/user/tools').set(account.auth).expect(200);
      expect(Array.isArray(list.body)).toBe(true);
      expect(list.body.map((tool: { name: string }) => tool.name)).toContain('crud_tool');

      const read = await stack.http.get(`/api/user/tools/${created.id}`).set(account.auth).expect(200);
      expect(read.body.data.headers).toEqual([{ name: 'X-Api-Key', value: 'secret-1' }]);

      const updated = await stack.http
        .put(`/api/user/tools/${created.id}`)
        .set(account.auth)
        .send({ timeout: 5, schema: [{ name: 'email', type: 'string', description: 'Email' }] })
        .expect(200);
      expect(updated.body.message).toBe('Tool updated successfully.');
      expect(updated.body.data).toMatchObject({
        name: 'crud_tool',
        timeout: 5,
        headers: [{ name: 'X-Api-Key', value: 'secret-1' }],
        static_fields: [{ key: 'source', value: 'phone' }],
        schema: [{ name: 'email', type: 'string', description: 'Email', required: false }],
      });
      const cleared = await stack.http
        .put(`/api/user/tools/${created.id}`)
        .set(account.auth)
        .send({ headers: [], static_fields: [] })
        .expect(200);
      expect(cleared.body.data).toMatchObject({ headers: [], static_fields: [], schema: [{ name: 'email' }] });

      await stack.http
        .delete(`/api/user/tools/${created.id}`)
        .set(account.auth)
        .expect(200, { message: 'Tool deleted successfully.' });
      await stack.http
        .get(`/api/user/tools/${created.id}`)
        .set(account.auth)
        .expect(404, { message: 'Tool not found' });
    });

    it('lists newest first, as every list does', async () => {
      const fresh = await createAccount(stack);
      const ids: number[] = [];
      for (const name of ['first_tool', 'second_tool', 'third_tool'])
        ids.push((await create(valid({ name }), fresh).expect(201)).body.data.id);
      const list = await stack.http.get('/api/user/tools').set(fresh.auth).expect(200);
      expect(list.body.map((tool: { id: number }) => tool.id)).toEqual([...ids].reverse());
    });

    it('ignores endpoint, method and body_format on update of a tool linked to an automation flow', async () => {
      const created = (await create(valid({ name: 'flow_tool', automation_flow_id: 'flow-123' })).expect(201)).body
        .data;
      const updated = await stack.http
        .put(`/api/user/tools/${created.id}`)
        .set(account.auth)
        .send({ endpoint: 'https://elsewhere.example.com/x', method: 'POST', body_format: 'form', description: 'New' })
        .expect(200);
      expect(updated.body.data).toMatchObject({
        endpoint: created.endpoint,
        method: 'GET',
        body_format: 'json',
        description: 'New',
        automation_flow_id: 'flow-123',
      });
    });

    it('accepts and ignores endpoint, method and body_format that would be invalid, for a linked tool only', async () => {
      const linked = (await create(valid({ name: 'flow_tool_2', automation_flow_id: 'flow-9' })).expect(201)).body.data;
      const updated = await stack.http
        .put(`/api/user/tools/${linked.id}`)
        .set(account.auth)
        .send({ endpoint: 'not a url', method: 'BREW', body_format: 7, timeout: 9 })
        .expect(200);
      expect(updated.body.data).toMatchObject({
        endpoint: linked.endpoint,
        method: linked.method,
        body_format: linked.body_format,
        timeout: 9,
      });
      const unlinked = (await create(valid({ name: 'plain_tool_2' })).expect(201)).body.data;
      const refused = await stack.http
        .put(`/api/user/tools/${unlinked.id}`)
        .set(account.auth)
        .send({ endpoint: 'not a url' })
        .expect(422);
      expect(refused.body.errors).toHaveProperty('endpoint');
      // To another account the linked tool is a missing one: its body is checked as for any missing tool.
      const foreign = await stack.http
        .put(`/api/user/tools/${linked.id}`)
        .set(other.auth)
        .send({ endpoint: 'not a url' });
      const missing = await stack.http
        .put('/api/user/tools/2147483000')
        .set(other.auth)
        .send({ endpoint: 'not a url' });
      expect([foreign.status, foreign.body]).toEqual([missing.status, missing.body]);
    });

    it('stores header values encrypted, never readable in the row', async () => {
      const created = (
        await create(
          valid({ name: 'secret_tool', headers: [{ name: 'Authorization', value: 'Bearer sk_live_TOPSECRET' }] }),
        ).expect(201)
      ).body.data;
      const [row] = await stack.dataSource.query('SELECT headers::text AS headers FROM tools WHERE id = $1', [
        created.id,
      ]);
      expect(row.headers).not.toContain('TOPSECRET');
      expect(row.headers).toContain('Authorization');
      // Moved onto another tool's row, the sealed value does not open.
      const twin = (await create(valid({ name: 'twin_tool' })).expect(201)).body.data;
      await stack.dataSource.query(
        'UPDATE tools SET headers = (SELECT headers FROM tools WHERE id = $1) WHERE id = $2',
        [created.id, twin.id],
      );
      const read = await stack.http.get(`/api/user/tools/${twin.id}`).set(account.auth);
      expect(read.status).toBe(500);
      expect(read.body).toEqual({ message: 'Server Error.' });
      await stack.http.delete(`/api/user/tools/${twin.id}`).set(account.auth).expect(200);
    });
  });

  describe('validation', () => {
    const expectInvalid = async (
      body: object,
      field: string,
      message: string,
      path = '/api/user/tools',
      method: 'post' | 'put' = 'post',
    ) => {
      const response = await stack.http[method](path).set(account.auth).send(body);
      expect({ status: response.status, summary: response.body.message, field: response.body.errors?.[field] }).toEqual(
        {
          status: 422,
          summary: 'Validation failed',
          field: [message],
        },
      );
    };

    it.each([
      [{ name: undefined }, 'name', 'The name field is required.'],
      [{ name: '1starts_with_digit' }, 'name', 'The name field format is invalid.'],
      [{ name: 'has-dash' }, 'name', 'The name field format is invalid.'],
      [{ name: 'a'.repeat(65) }, 'name', 'The name field must not be greater than 64 characters.'],
      [{ description: undefined }, 'description', 'The description field is required.'],
      [
        { description: 'd'.repeat(256) },
        'description',
        'The description field must not be greater than 255 characters.',
      ],
      [{ endpoint: undefined }, 'endpoint', 'The endpoint field is required.'],
      [{ endpoint: 'ftp://example.com/x' }, 'endpoint', 'The endpoint field must be a valid URL.'],
      [{ endpoint: 'not a url' }, 'endpoint', 'The endpoint field must be a valid URL.'],
      [
        { endpoint: `https://example.com/${'a'.repeat(2040)}` },
        'endpoint',
        'The endpoint field must not be greater than 2048 characters.',
      ],
      [{ method: undefined }, 'method', 'The method field is required.'],
      [{ method: 'TRACE' }, 'method', 'The selected method is invalid.'],
      [{ body_format: 'xml' }, 'body_format', 'The selected body format is invalid.'],
      [{ timeout: 0 }, 'timeout', 'The timeout field must be between 1 and 30.'],
      [{ timeout: 31 }, 'timeout', 'The timeout field must be between 1 and 30.'],
      [{ timeout: 2.5 }, 'timeout', 'The timeout field must be an integer.'],
      [
        { headers: [{ name: 'Bad Header', value: 'x' }] },
        'headers.0.name',
        'The headers.0.name field format is invalid.',
      ],
      [
        { headers: [{ name: 'X-Ok', value: 'a\r\nInjected: yes' }] },
        'headers.0.value',
        'The headers.0.value field must not contain line breaks.',
      ],
      [{ static_fields: [{ value: 'x' }] }, 'static_fields.0.key', 'The static fields.0.key field is required.'],
      [
        { schema: [{ name: 'a', type: 'date', description: 'd' }] },
        'schema.0.type',
        'The selected schema.0.type is invalid.',
      ],
      [
        { schema: [{ name: '9x', type: 'string', description: 'd' }] },
        'schema.0.name',
        'The schema.0.name field format is invalid.',
      ],
      [
        // A name no argument can carry: request input drops it.
        { schema: [{ name: 'constructor', type: 'string', description: 'd' }] },
        'schema.0.name',
        'The selected schema.0.name is invalid.',
      ],
      [
        { schema: [{ name: 'a', type: 'string', description: 'd', required: 'yes' }] },
        'schema.0.required',
        'The schema.0.required field must be true or false.',
      ],
      [
        {
          schema: [
            { name: 'a', type: 'string', description: 'd' },
            { name: 'a', type: 'integer', description: 'd' },
          ],
        },
        'schema.1.name',
        'The schema.1.name field has a duplicate value.',
      ],
      [
        { schema: [{ name: 'a', type: 'boolean', description: 'd', enum: [true] }] },
        'schema.0.enum',
        "The schema.0.enum field must list 1 to 100 distinct values of a string, number or integer parameter's type.",
      ],
      [
        { schema: [{ name: 'a', type: 'integer', description: 'd', enum: [1, 1.5] }] },
        'schema.0.enum',
        "The schema.0.enum field must list 1 to 100 distinct values of a string, number or integer parameter's type.",
      ],
      [
        { schema: [{ name: 'a', type: 'array', description: 'd' }] },
        'schema.0.items',
        'The schema.0.items field is required when type is array.',
      ],
      [
        { schema: [{ name: 'a', type: 'string', description: 'd', items: { type: 'string' } }] },
        'schema.0.items',
        'The schema.0.items field is prohibited unless type is in array.',
      ],
      [
        { schema: [{ name: 'a', type: 'object', description: 'd' }] },
        'schema.0.properties',
        'The schema.0.properties field is required when type is object.',
      ],
      [
        { schema: [{ name: 'a', type: 'array', description: 'd', items: { type: 'date' } }] },
        'schema.0.items.type',
        'The selected schema.0.items.type is invalid.',
      ],
      [
        {
          schema: [
            {
              name: 'a',
              type: 'object',
              description: 'd',
              properties: [
                { name: 'b', type: 'string', description: 'd' },
                { name: 'b', type: 'string', description: 'd' },
              ],
            },
          ],
        },
        'schema.0.properties.1.name',
        'The schema.0.properties.1.name field has a duplicate value.',
      ],
      [
        { schema: [{ name: 'a', description: 'd', ...nestedLists(6) }] },
        'schema',
        'The schema field must not nest more than 5 levels of items and properties, nor describe more than 200 values in all.',
      ],
      [
        {
          schema: Array.from({ length: 3 }, (_, index) => ({
            name: `p${index}`,
            type: 'object',
            description: 'd',
            properties: Array.from({ length: 70 }, (_, inner) => ({
              name: `q${inner}`,
              type: 'string',
              description: 'd',
            })),
          })),
        },
        'schema',
        'The schema field must not nest more than 5 levels of items and properties, nor describe more than 200 values in all.',
      ],
    ])('refuses %j on %s', async (overrides, field, message) => {
      await expectInvalid(valid({ name: `v_${Math.random().toString(36).slice(2, 8)}`, ...overrides }), field, message);
    });

    it('keeps enums, lists and nested objects as sent, `required` said at every level', async () => {
      const schema = [
        { name: 'speed', type: 'string', description: 'Delivery', enum: ['standard', 'express'], required: true },
        {
          name: 'lines',
          type: 'array',
          description: 'What to order',
          items: {
            type: 'object',
            properties: [
              { name: 'sku', type: 'string', description: 'Article', required: true },
              { name: 'quantity', type: 'integer', description: 'How many', enum: [1, 2, 3] },
            ],
          },
        },
        { name: 'ratio', type: 'number', description: 'Share', enum: [0.5, 1] },
        { name: 'nested', description: 'Deepest allowed', ...nestedLists(5) },
      ];
      const created = (await create(valid({ name: 'rich_schema', schema })).expect(201)).body.data;
      expect(created.schema).toEqual([
        schema[0],
        {
          ...schema[1],
          required: false,
          items: {
            type: 'object',
            properties: [
              { name: 'sku', type: 'string', description: 'Article', required: true },
              { name: 'quantity', type: 'integer', description: 'How many', enum: [1, 2, 3], required: false },
            ],
          },
        },
        { ...schema[2], required: false },
        { ...schema[3], required: false },
      ]);
      const read = await stack.http.get(`/api/user/tools/${created.id}`).set(account.auth).expect(200);
      expect(read.body.data.schema).toEqual(created.schema);
    });

    it('accepts placeholders and templates in the endpoint', async () => {
      await create(
        valid({ name: 'templated', endpoint: 'https://{{tenant}}.example.com/orders/{order_id}?x={{y}}' }),
      ).expect(201);
    });

    it('keeps names unique per account, and lets another account use the same name', async () => {
      await create(valid({ name: 'unique_name' })).expect(201);
      await expectInvalid(valid({ name: 'unique_name' }), 'name', 'The name has already been taken.');
      await create(valid({ name: 'unique_name' }), other).expect(201);
    });

    it('answers update validation with the same shape, and a rejected update changes nothing', async () => {
      const tool = (await create(valid({ name: 'stable_tool', timeout: 7 })).expect(201)).body.data;
      await create(valid({ name: 'taken_name' })).expect(201);
      await expectInvalid(
        { timeout: 99, description: 'changed' },
        'timeout',
        'The timeout field must be between 1 and 30.',
        `/api/user/tools/${tool.id}`,
        'put',
      );
      await expectInvalid(
        { name: 'taken_name', description: 'changed' },
        'name',
        'The name has already been taken.',
        `/api/user/tools/${tool.id}`,
        'put',
      );
      const read = await stack.http.get(`/api/user/tools/${tool.id}`).set(account.auth).expect(200);
      expect(read.body.data).toMatchObject({ name: 'stable_tool', timeout: 7, description: tool.description });
    });
  });

  describe('privacy', () => {
    it('treats another account’s tool exactly like a missing one on every route', async () => {
      const theirs = (await create(valid({ name: 'their_tool' }), other).expect(201)).body.data;
      const notFound = { message: 'Tool not found' };
      await stack.http.get(`/api/user/tools/${theirs.id}`).set(account.auth).expect(404, notFound);
      await stack.http.put(`/api/user/tools/${theirs.id}`).set(account.auth).send({ timeout: 3 }).expect(404, notFound);
      await stack.http.post(`/api/user/tools/${theirs.id}/test`).set(account.auth).send({}).expect(404, notFound);
      await stack.http.delete(`/api/user/tools/${theirs.id}`).set(account.auth).expect(404, notFound);
      await stack.http.get('/api/user/tools/999999999').set(account.auth).expect(404, notFound);
      const mine = await stack.http.get('/api/user/tools').set(account.auth).expect(200);
      expect(mine.body.map((tool: { id: number }) => tool.id)).not.toContain(theirs.id);
      const still = await stack.http.get(`/api/user/tools/${theirs.id}`).set(other.auth).expect(200);
      expect(still.body.data.timeout).toBe(10);
    });
  });

  describe('test calls', () => {
    const toolWith = async (overrides: Record<string, unknown>) =>
      (await create(valid({ name: `t_${Math.random().toString(36).slice(2, 10)}`, ...overrides })).expect(201)).body
        .data.id;
    const callTool = (id: number, body: object = {}) =>
      stack.http.post(`/api/user/tools/${id}/test`).set(account.auth).send(body);

    it('fills placeholders (URL-encoded) and sends the rest in the query string for GET', async () => {
      const id = await toolWith({
        method: 'GET',
        endpoint: `${site.origin}/orders/{order_id}`,
        static_fields: [{ key: 'channel', value: 'voice' }],
        headers: [{ name: 'X-Api-Key', value: 'k-123' }],
        schema: [
          { name: 'order_id', type: 'string', description: 'Order' },
          { name: 'verbose', type: 'boolean', description: 'More' },
        ],
      });
      const response = await callTool(id, { arguments: { order_id: 'A 1/2', verbose: true } }).expect(200);
      const sent = lastRequest();
      expect(sent.method).toBe('GET');
      expect(sent.path).toBe('/orders/A%201%2F2?verbose=true&channel=voice');
      expect(sent.headers['x-api-key']).toBe('k-123');
      expect(response.body.data).toMatchObject({
        request: { method: 'GET', url: `${site.origin}/orders/A%201%2F2?verbose=true&channel=voice`, body: null },
        response: {
          status: 200,
          body: { ok: true, path: '/orders/A%201%2F2?verbose=true&channel=voice' },
          body_truncated: false,
        },
        duration_ms: expect.any(Number),
        error: null,
      });
    });

    it.each(['POST', 'PUT', 'PATCH'])('sends a JSON body with static fields merged for %s', async (method) => {
      const id = await toolWith({
        method,
        endpoint: `${site.origin}/items`,
        static_fields: [{ key: 'source', value: 'assistant' }],
        schema: [
          { name: 'quantity', type: 'integer', description: 'How many' },
          { name: 'note', type: 'string', description: 'Note' },
        ],
      });
      await callTool(id, { arguments: { quantity: 2, note: 'hi' } }).expect(200);
      expect(lastRequest()).toMatchObject({ method, path: '/items' });
      expect(lastRequest().headers['content-type']).toBe('application/json');
      expect(JSON.parse(lastRequest().body)).toEqual({ quantity: 2, note: 'hi', source: 'assistant' });
    });

    it('sends a form body for body_format form', async () => {
      const id = await toolWith({
        method: 'POST',
        body_format: 'form',
        endpoint: `${site.origin}/form`,
        schema: [
          { name: 'name', type: 'string', description: 'Name' },
          { name: 'age', type: 'integer', description: 'Age' },
        ],
      });
      await callTool(id, { arguments: { name: 'Ada Lovelace', age: 36 } }).expect(200);
      expect(lastRequest().headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(lastRequest().body).toBe('name=Ada+Lovelace&age=36');
    });

    it('sends DELETE arguments in the query string', async () => {
      const id = await toolWith({
        method: 'DELETE',
        endpoint: `${site.origin}/bookings/{booking}`,
        schema: [
          { name: 'booking', type: 'integer', description: 'Booking' },
          { name: 'reason', type: 'string', description: 'Why' },
        ],
      });
      await callTool(id, { arguments: { booking: 7, reason: 'moved' } }).expect(200);
      expect(lastRequest()).toMatchObject({ method: 'DELETE', path: '/bookings/7?reason=moved', body: '' });
    });

    it('fills {{variable}} templates in the endpoint, header values and static values', async () => {
      const id = await toolWith({
        method: 'POST',
        endpoint: `${site.origin}/accounts/{{account}}/notes`,
        headers: [{ name: 'Authorization', value: 'Bearer {{token}}' }],
        static_fields: [{ key: 'caller', value: '{{caller_name}}' }],
      });
      await callTool(id, {
        arguments: {},
        variables: { account: 'acme co', token: 'tok-9', caller_name: 'Grace' },
      }).expect(200);
      expect(lastRequest().path).toBe('/accounts/acme%20co/notes');
      expect(lastRequest().headers.authorization).toBe('Bearer tok-9');
      expect(JSON.parse(lastRequest().body)).toEqual({ caller: 'Grace' });
    });

    it('validates arguments against the schema before calling', async () => {
      const id = await toolWith({
        schema: [
          { name: 'order_id', type: 'string', description: 'Order', required: true },
          { name: 'count', type: 'integer', description: 'Count' },
          { name: 'price', type: 'float', description: 'Price' },
          { name: 'gift', type: 'boolean', description: 'Gift' },
        ],
      });
      const before = site.requests.length;
      const response = await callTool(id, { arguments: { count: 1.5, price: 'cheap', gift: 'yes' } });
      expect(response.status).toBe(422);
      expect(response.body.errors).toEqual({
        'arguments.order_id': ['The arguments.order_id field is required.'],
        'arguments.count': ['The arguments.count field must be an integer.'],
        'arguments.price': ['The arguments.price field must be a number.'],
        'arguments.gift': ['The arguments.gift field must be true or false.'],
      });
      expect(site.requests.length).toBe(before);
    });

    it('validates lists, enums and nested objects by path, then sends them as JSON', async () => {
      const id = await toolWith({
        method: 'POST',
        schema: [
          { name: 'speed', type: 'string', description: 'Delivery', enum: ['standard', 'express'], required: true },
          {
            name: 'lines',
            type: 'array',
            description: 'Lines',
            items: {
              type: 'object',
              properties: [{ name: 'sku', type: 'string', description: 'SKU', required: true }],
            },
          },
        ],
      });
      const before = site.requests.length;
      const refused = await callTool(id, { arguments: { speed: 'overnight', lines: [{ sku: 'A' }, { qty: 1 }] } });
      expect(refused.status).toBe(422);
      expect(refused.body.errors).toEqual({
        'arguments.speed': ['The selected arguments.speed is invalid.'],
        'arguments.lines.1.sku': ['The arguments.lines.1.sku field is required.'],
        'arguments.lines.1.qty': ['The arguments.lines.1.qty field is not a parameter of this tool.'],
      });
      expect(site.requests.length).toBe(before);
      await callTool(id, { arguments: { speed: 'express', lines: [{ sku: 'A' }, { sku: 'B' }] } }).expect(200);
      expect(JSON.parse(lastRequest().body)).toEqual({ speed: 'express', lines: [{ sku: 'A' }, { sku: 'B' }] });
    });

    it('refuses arguments the schema does not name, naming each, and sends nothing', async () => {
      const id = await toolWith({
        method: 'POST',
        schema: [{ name: 'order_id', type: 'string', description: 'Order', required: true }],
      });
      const before = site.requests.length;
      const response = await callTool(id, { arguments: { order_id: 'A-1', amount: 5, is_admin: true } });
      expect(response.status).toBe(422);
      expect(response.body).toEqual({
        message: 'The arguments.amount field is not a parameter of this tool. (and 1 more error)',
        errors: {
          'arguments.amount': ['The arguments.amount field is not a parameter of this tool.'],
          'arguments.is_admin': ['The arguments.is_admin field is not a parameter of this tool.'],
        },
      });
      expect(site.requests.length).toBe(before);
    });

    it('refuses hostile argument names with a bounded 422, never a 5xx', async () => {
      const id = await toolWith({ schema: [{ name: 'order_id', type: 'string', description: 'Order' }] });
      const before = site.requests.length;
      const long = 'k'.repeat(10_000);
      const many = Object.fromEntries(Array.from({ length: 5_000 }, (_, index) => [`extra_${index}`, index]));
      for (const [body, firstKey] of [
        ['{"arguments":{"__proto__":{"polluted":true}}}', 'arguments.__proto__'],
        ['{"arguments":{"constructor":{"prototype":{"polluted":true}}}}', 'arguments.constructor'],
        ['{"arguments":{"prototype":1}}', 'arguments.prototype'],
        [JSON.stringify({ arguments: { [long]: 1 } }), `arguments.${'k'.repeat(64)}...`],
        [JSON.stringify({ arguments: many }), 'arguments.extra_0'],
      ] as const) {
        const response = await stack.http
          .post(`/api/user/tools/${id}/test`)
          .set(account.auth)
          .set('Content-Type', 'application/json')
          .send(body);
        expect([response.status, Object.keys(response.body.errors ?? {})[0]]).toEqual([422, firstKey]);
        expect(Object.keys(response.body.errors).length).toBeLessThanOrEqual(10);
        expect(JSON.stringify(response.body).length).toBeLessThan(4_000);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(site.requests.length).toBe(before);
    });

    it('honours the timeout against an endpoint that never answers, naming its host and nothing more', async () => {
      const id = await toolWith({
        endpoint: `${site.origin}/never?account={{account}}`,
        timeout: 1,
        static_fields: [{ key: 'token', value: 'STATICSECRET' }],
        schema: [{ name: 'q', type: 'string', description: 'Query' }],
      });
      const started = Date.now();
      const response = await callTool(id, {
        arguments: { q: 'ARGSECRET' },
        variables: { account: 'VARSECRET' },
      }).expect(200);
      expect(Date.now() - started).toBeLessThan(4_000);
      expect(response.body.data).toMatchObject({
        // The owner sees the request as sent, their own URL.
        request: { url: `${site.origin}/never?account=VARSECRET&q=ARGSECRET&token=STATICSECRET` },
        response: null,
        error: `No answer from 127.0.0.1:${site.port} within 1000 ms`,
        error_code: 'timeout',
      });
    });

    it('truncates a large answer at 64 KB and says so, and returns text as text', async () => {
      const large = await callTool(await toolWith({ endpoint: `${site.origin}/large` })).expect(200);
      expect(large.body.data.response.body).toHaveLength(64 * 1024);
      expect(large.body.data.response.body_truncated).toBe(true);
      const text = await callTool(await toolWith({ endpoint: `${site.origin}/text` })).expect(200);
      expect(text.body.data.response).toMatchObject({ status: 200, body: 'plain words', body_truncated: false });
    });

    it('reports a refused connection in the result, not as an error of ours', async () => {
      const id = await toolWith({ endpoint: 'http://127.0.0.1:1/closed?key=STATICSECRET' });
      const response = await callTool(id).expect(200);
      expect(response.body.data).toMatchObject({
        response: null,
        error: 'Could not reach 127.0.0.1:1: connection refused (ECONNREFUSED)',
        error_code: 'network',
      });
    });

    it('refuses a redirect to a private address', async () => {
      const response = await callTool(await toolWith({ endpoint: `${site.origin}/private-redirect` })).expect(200);
      expect(response.body.data).toMatchObject({
        response: null,
        error: expect.stringMatching(/10\.0\.0\.1.*not a public address/),
      });
    });
  });
});

describe('Mid-call tool test calls without the loopback switch', () => {
  let stack: Stack;
  let account: TestAccount;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startLocalSite({ '*': echo });
    stack = await startStack({ worker: false, env: { OUTBOUND_ALLOW_LOOPBACK: 'false' } });
    account = await createAccount(stack);
  });
  afterAll(async () => {
    await stack.close();
    await site.close();
  });

  it.each([
    ['loopback', (port: number) => `http://127.0.0.1:${port}/x`],
    ['localhost', (port: number) => `http://localhost:${port}/x`],
    ['hex', (port: number) => `http://0x7f000001:${port}/x`],
    ['IPv6 loopback', (port: number) => `http://[::1]:${port}/x`],
    ['IPv4-mapped IPv6', (port: number) => `http://[::ffff:127.0.0.1]:${port}/x`],
    ['metadata', () => 'http://169.254.169.254/latest/meta-data/'],
    ['private', () => 'http://10.0.0.1/x'],
    ['CGNAT', () => 'http://100.64.0.1/x'],
  ])('refuses %s addresses with nothing sent', async (_case, endpoint) => {
    const tool = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({
        name: `ssrf_${Math.random().toString(36).slice(2, 8)}`,
        description: 'x',
        endpoint: endpoint(site.port),
        method: 'GET',
      })
      .expect(201);
    const response = await stack.http
      .post(`/api/user/tools/${tool.body.data.id}/test`)
      .set(account.auth)
      .send({})
      .expect(200);
    expect(response.body.data).toMatchObject({
      response: null,
      error: expect.stringMatching(/not a public address|Refused/),
    });
    expect(site.requests).toHaveLength(0);
  });

  it.each([
    ['decimal', (port: number) => `http://2130706433:${port}/x`],
    ['octal', (port: number) => `http://0177.0.0.1:${port}/x`],
  ])('refuses %s IPv4 forms already as an invalid URL', async (_case, endpoint) => {
    const response = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({ name: 'numeric_host', description: 'x', endpoint: endpoint(site.port), method: 'GET' });
    expect(response.status).toBe(422);
    expect(response.body.errors).toEqual({ endpoint: ['The endpoint field must be a valid URL.'] });
  });
});

describe('Mid-call tools: detaching, failures reported, and the address policy with the loopback switch on', () => {
  let stack: Stack;
  let account: TestAccount;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startLocalSite({ '*': echo });
    stack = await startStack({ worker: false });
    account = await createAccount(stack);
  });
  afterAll(async () => {
    await stack.close();
    await site.close();
  });

  const createTool = async (overrides: Record<string, unknown>) =>
    (
      await stack.http
        .post('/api/user/tools')
        .set(account.auth)
        .send({
          name: `g_${Math.random().toString(36).slice(2, 10)}`,
          description: 'x',
          endpoint: `${site.origin}/x`,
          method: 'GET',
          ...overrides,
        })
        .expect(201)
    ).body.data.id as number;
  const callTool = (id: number, body: object = {}) =>
    stack.http.post(`/api/user/tools/${id}/test`).set(account.auth).send(body).expect(200);

  it('deleting a tool detaches it from every assistant that uses it, and from nothing else', async () => {
    const doomed = await createTool({});
    const kept = await createTool({});
    const [language] = await stack.dataSource.query(`SELECT id FROM languages WHERE iso_2 = 'en'`);
    const assistant = async (toolIds: number[]) =>
      (
        await stack.http
          .post('/api/user/assistant')
          .set(account.auth)
          .send({ name: 'Uses tools', type: 'inbound', language_id: language.id, tool_ids: toolIds })
          .expect(201)
      ).body.data.id as number;
    const first = await assistant([doomed, kept]);
    const second = await assistant([doomed]);
    await stack.http.delete(`/api/user/tools/${doomed}`).set(account.auth).expect(200);
    const read = async (id: number) =>
      (await stack.http.get(`/api/user/assistant/${id}`).set(account.auth).expect(200)).body.data.tool_ids;
    expect(await read(first)).toEqual([kept]);
    expect(await read(second)).toEqual([]);
  });

  it('reports a TLS failure in the result as its own kind, not as an error of ours', async () => {
    // The echo server speaks plain HTTP: a TLS handshake with it fails.
    const plain = await callTool(await createTool({ endpoint: `https://127.0.0.1:${site.port}/tls?key=SECRET` }));
    expect(plain.body.data).toMatchObject({ response: null, error_code: 'tls' });
    expect(plain.body.data.error).toMatch(
      new RegExp(`^TLS with 127\\.0\\.0\\.1:${site.port} failed: handshake failed`),
    );
    // A certificate nobody vouches for.
    const secure = await startLocalSite({ '*': echo }, { tls: SELF_SIGNED });
    try {
      const refused = await callTool(await createTool({ endpoint: `${secure.origin}/tls?key=SECRET` }));
      expect(refused.body.data).toMatchObject({
        response: null,
        error: `TLS with 127.0.0.1:${secure.port} failed: its certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)`,
        error_code: 'tls',
      });
      expect(secure.requests).toEqual([]);
    } finally {
      await secure.close();
    }
  });

  describe('a redirect to another origin', () => {
    let elsewhere: LocalSite;
    let origin: LocalSite;
    beforeAll(async () => {
      elsewhere = await startLocalSite({ '*': echo });
      origin = await startLocalSite({
        '/to-elsewhere': (_request, response) =>
          response.writeHead(302, { location: `${elsewhere.origin}/landing` }).end(),
        '/keep-body': (_request, response) =>
          response.writeHead(307, { location: `${elsewhere.origin}/landing` }).end(),
      });
    });
    afterAll(async () => {
      await origin.close();
      await elsewhere.close();
    });
    const owned = {
      headers: [
        { name: 'X-Api-Key', value: 'KEYSECRET' },
        { name: 'Authorization', value: 'Bearer AUTHSECRET' },
      ],
      static_fields: [{ key: 'token', value: 'STATICSECRET' }],
      schema: [{ name: 'note', type: 'string', description: 'Note' }],
    };

    it.each(['GET', 'POST'])('gets none of the headers or static fields the owner set (%s, 302)', async (method) => {
      const before = elsewhere.requests.length;
      const id = await createTool({ ...owned, method, endpoint: `${origin.origin}/to-elsewhere` });
      const response = await callTool(id, { arguments: { note: 'hi' } });
      expect(response.body.data).toMatchObject({ response: { status: 200 }, error: null });
      const landed = elsewhere.requests.slice(before);
      expect(landed.map(({ method: sent, path, body }) => ({ sent, path, body }))).toEqual([
        { sent: 'GET', path: '/landing', body: '' },
      ]);
      expect(Object.keys(landed[0].headers).sort()).toEqual(['connection', 'host', 'user-agent']);
      expect(JSON.stringify(landed[0])).not.toMatch(/SECRET/);
    });

    it('is refused when it would carry the body there (307), with nothing sent', async () => {
      const before = elsewhere.requests.length;
      const id = await createTool({ ...owned, method: 'POST', endpoint: `${origin.origin}/keep-body` });
      const response = await callTool(id, { arguments: { note: 'hi' } });
      expect(response.body.data).toMatchObject({
        response: null,
        error: `Refused to follow the redirect from 127.0.0.1:${origin.port} to 127.0.0.1:${elsewhere.port}: it would carry the request body to another origin`,
        error_code: 'redirect_refused',
      });
      expect(elsewhere.requests.length).toBe(before);
    });
  });

  it('follows at most 5 redirects', async () => {
    const hops = await startLocalSite({
      '*': (request, response) => {
        const hop = Number(request.url?.split('/')[2]);
        if (hop >= 6) return response.writeHead(200, { 'content-type': 'text/plain' }).end(`arrived after hop ${hop}`);
        response.writeHead(302, { location: `/hop/${hop + 1}` }).end();
      },
    });
    try {
      const five = await callTool(await createTool({ endpoint: `${hops.origin}/hop/1` }));
      expect(five.body.data).toMatchObject({ response: { status: 200, body: 'arrived after hop 6' }, error: null });
      const six = await callTool(await createTool({ endpoint: `${hops.origin}/hop/0` }));
      expect(six.body.data).toMatchObject({
        response: null,
        error: expect.stringMatching(/Stopped after 5 redirects/),
      });
    } finally {
      await hops.close();
    }
  });

  it('reports a header a variable fills with control characters, without sending it broken', async () => {
    const id = await createTool({ headers: [{ name: 'X-Caller', value: 'caller {{name}}' }] });
    await callTool(id, { variables: { name: 'Ada\u0001\u0007Lovelace' } });
    expect(site.requests[site.requests.length - 1].headers['x-caller']).toBe('caller Ada Lovelace');
  });

  it.each([
    ['Transfer-Encoding', 'chunked'],
    ['Content-Length', '5'],
    ['Host', 'internal.example'],
    ['Connection', 'close'],
  ])('refuses %s as a tool header: the client sets it from the request itself', async (name, value) => {
    const response = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({
        name: 'reserved_header',
        description: 'x',
        endpoint: `${site.origin}/x`,
        method: 'GET',
        headers: [{ name, value }],
      })
      .expect(422);
    expect(response.body).toEqual({
      message: 'Validation failed',
      errors: { 'headers.0.name': ['The selected headers.0.name is invalid.'] },
    });
  });

  it('refuses header values with control characters other than line breaks', async () => {
    const response = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({
        name: 'control_value',
        description: 'x',
        endpoint: `${site.origin}/x`,
        method: 'GET',
        headers: [{ name: 'X-A', value: 'a\u0001b' }],
      })
      .expect(422);
    expect(response.body.errors).toEqual({ 'headers.0.value': ['The headers.0.value field format is invalid.'] });
  });

  // OUTBOUND_ALLOW_LOOPBACK=true (this stack) admits 127.0.0.0/8 and ::1, nothing else.
  describe('with loopback allowed, every other special-purpose address stays refused', () => {
    let net: ReturnType<typeof restrictSocketsToLoopback>;
    beforeEach(() => {
      net = restrictSocketsToLoopback();
    });
    afterEach(() => net.restore());

    it.each([
      ['private 10/8', 'http://10.0.0.1/x'],
      ['private 10/8 as one hex number', 'http://0x0a000001/x'],
      ['private 172.16/12', 'http://172.16.0.1/x'],
      ['private 192.168/16', 'http://192.168.1.1/x'],
      ['CGNAT', 'http://100.64.0.1/x'],
      ['metadata', 'http://169.254.169.254/latest/meta-data/'],
      ['metadata in dotted hex', 'http://0xa9.0xfe.0xa9.0xfe/latest/meta-data/'],
      ['metadata as one hex number', 'http://0xa9fea9fe/latest/meta-data/'],
      ['metadata IPv4-mapped', 'http://[::ffff:169.254.169.254]/latest/meta-data/'],
      ['metadata IPv6 (AWS)', 'http://[fd00:ec2::254]/latest/meta-data/'],
      ['multicast', 'http://224.0.0.1/x'],
      ['unspecified', 'http://0.0.0.0/x'],
      ['IPv6 unspecified', 'http://[::]/x'],
      ['IPv6 unique local', 'http://[fd00::1]/x'],
      ['IPv6 link-local', 'http://[fe80::1]/x'],
      ['IPv6 multicast', 'http://[ff02::1]/x'],
      ['NAT64 of loopback', 'http://[64:ff9b::7f00:1]/x'],
    ])('refuses %s with no connection attempted', async (_case, endpoint) => {
      const id = await createTool({ endpoint });
      const before = site.requests.length;
      const response = await callTool(id);
      expect(response.body.data).toMatchObject({
        response: null,
        error: expect.stringMatching(/not a public address/),
      });
      expect(net.destinations.filter((host) => !/^(127\.|::1$|::ffff:127\.|localhost$)/.test(host))).toEqual([]);
      expect(site.requests.length).toBe(before);
    });

    it('admits the rest of 127.0.0.0/8', async () => {
      const server = createServer((_request, response) => response.end('from 127.0.0.2'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', resolve));
      try {
        const { port } = server.address() as AddressInfo;
        const id = await createTool({ endpoint: `http://127.0.0.2:${port}/loopback` });
        const response = await callTool(id);
        expect(response.body.data).toMatchObject({ response: { status: 200, body: 'from 127.0.0.2' }, error: null });
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });
  });
});

describe('Mid-call tool test calls without the loopback switch: encodings filled in at call time', () => {
  let stack: Stack;
  let account: TestAccount;
  let site: LocalSite;
  let net: ReturnType<typeof restrictSocketsToLoopback>;

  beforeAll(async () => {
    site = await startLocalSite({ '*': echo });
    stack = await startStack({ worker: false, env: { OUTBOUND_ALLOW_LOOPBACK: 'false' } });
    account = await createAccount(stack);
  });
  afterAll(async () => {
    await stack.close();
    await site.close();
  });
  beforeEach(() => {
    net = restrictSocketsToLoopback();
  });
  afterEach(() => net.restore());

  // Forms the endpoint validation would refuse can still arrive through a `{{variable}}` in the host.
  it.each([
    ['in decimal', '2130706433'],
    ['in octal', '0177.0.0.1'],
    ['short', '127.1'],
    ['in dotted hex', '0x7f.0.0.1'],
    ['in short hex', '0x7f.1'],
    ['as another 127/8 address', '127.42.0.9'],
    ['as 0', '0'],
  ])('refuses loopback written %s, filled in from a variable, with nothing sent', async (_case, host) => {
    const created = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({
        name: `enc_${Math.random().toString(36).slice(2, 8)}`,
        description: 'x',
        endpoint: `http://{{host}}:${site.port}/x`,
        method: 'GET',
      })
      .expect(201);
    const response = await stack.http
      .post(`/api/user/tools/${created.body.data.id}/test`)
      .set(account.auth)
      .send({ variables: { host } })
      .expect(200);
    expect(response.body.data).toMatchObject({ response: null, error: expect.stringMatching(/not a public address/) });
    expect(
      net.destinations.filter((destination) => destination !== '127.0.0.1' && destination !== 'localhost'),
    ).toEqual([]);
    expect(site.requests).toHaveLength(0);
  });

  it.each([
    ['unspecified (reaches local servers on Linux)', (port: number) => `http://0.0.0.0:${port}/x`],
    ['IPv4-mapped in hex', (port: number) => `http://[::ffff:7f00:1]:${port}/x`],
    ['IPv4-mapped long form', (port: number) => `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/x`],
    ['IPv6 loopback long form', (port: number) => `http://[0:0:0:0:0:0:0:1]:${port}/x`],
  ])('refuses the %s address with nothing sent', async (_case, endpoint) => {
    const created = await stack.http
      .post('/api/user/tools')
      .set(account.auth)
      .send({
        name: `lit_${Math.random().toString(36).slice(2, 8)}`,
        description: 'x',
        endpoint: endpoint(site.port),
        method: 'GET',
      })
      .expect(201);
    const response = await stack.http
      .post(`/api/user/tools/${created.body.data.id}/test`)
      .set(account.auth)
      .send({})
      .expect(200);
    expect(response.body.data).toMatchObject({ response: null, error: expect.stringMatching(/not a public address/) });
    expect(site.requests).toHaveLength(0);
  });
});
