import { MAX_ARGUMENT_ERRORS, MAX_UNKNOWN_ARGUMENTS_LISTED, validateToolArguments } from './tool-arguments';
import { buildToolRequest } from './tool-request.builder';
import type { ToolDefinition } from './tool-call.types';

const tool = (overrides: Partial<ToolDefinition> = {}): ToolDefinition => ({
  method: 'GET',
  endpoint: 'https://api.example.com/orders/{order_id}',
  bodyFormat: 'json',
  timeoutSeconds: 10,
  headers: [],
  staticFields: [],
  schema: [],
  ...overrides,
});

describe('buildToolRequest', () => {
  it('fills placeholders URL-encoded and moves the other arguments to the query string', () => {
    const request = buildToolRequest(tool(), { order_id: 'A 1/2', include: ['lines'], n: 3 });
    expect(request).toEqual({
      method: 'GET',
      url: 'https://api.example.com/orders/A%201%2F2?include=%5B%22lines%22%5D&n=3',
      headers: {},
      body: null,
    });
  });

  it('merges static fields over the arguments in a JSON body', () => {
    const request = buildToolRequest(
      tool({ method: 'post', endpoint: 'https://x.example/y', staticFields: [{ key: 'source', value: 'voice' }] }),
      { source: 'caller says', amount: 5 },
    );
    expect(request.method).toBe('POST');
    expect(JSON.parse(request.body!)).toEqual({ source: 'voice', amount: 5 });
    expect(request.headers['Content-Type']).toBe('application/json');
  });

  it('encodes a form body', () => {
    const request = buildToolRequest(tool({ method: 'PUT', bodyFormat: 'form', endpoint: 'https://x.example/' }), {
      name: 'Ada L',
      ok: true,
    });
    expect(request.body).toBe('name=Ada+L&ok=true');
    expect(request.headers['Content-Type']).toBe('application/x-www-form-urlencoded');
  });

  it('fills {{variables}} everywhere, unknown ones as empty, and keeps header values on one line', () => {
    const request = buildToolRequest(
      tool({
        method: 'POST',
        endpoint: 'https://x.example/{{tenant}}/items',
        headers: [
          { name: 'Authorization', value: 'Bearer {{ token }}' },
          { name: 'X-Missing', value: '[{{nothing}}]' },
        ],
        staticFields: [{ key: 'caller', value: '{{caller}}' }],
      }),
      {},
      { tenant: 'a b', token: 'abc\r\nX-Evil: 1', caller: 'Grace' },
    );
    expect(request.url).toBe('https://x.example/a%20b/items');
    expect(request.headers).toMatchObject({ Authorization: 'Bearer abc X-Evil: 1', 'X-Missing': '[]' });
    expect(JSON.parse(request.body!)).toEqual({ caller: 'Grace' });
  });

  it('fills a placeholder or template named like an object’s internals only from what was given', () => {
    const request = buildToolRequest(
      tool({
        endpoint: 'https://x.example/{constructor}/{{toString}}',
        staticFields: [{ key: '__proto__', value: 'v' }],
      }),
      {},
    );
    expect(request.url).toBe('https://x.example//?__proto__=v');
  });

  it('turns any control character a variable brings into a header value into a space, tabs aside', () => {
    const request = buildToolRequest(
      tool({ headers: [{ name: 'X-Caller', value: '{{name}}' }] }),
      {},
      { name: 'Ada\u0000\u0001\u007fLove\tlace\u001b' },
    );
    expect(request.headers['X-Caller']).toBe('Ada Love\tlace ');
  });
});

describe('validateToolArguments', () => {
  const schema = [
    { name: 'id', type: 'string', required: true },
    { name: 'count', type: 'integer' },
    { name: 'price', type: 'number' },
    { name: 'ratio', type: 'float' },
    { name: 'gift', type: 'boolean' },
  ];

  it('accepts arguments of the declared types', () => {
    expect(validateToolArguments(schema, { id: 'x', count: 2, price: 1.5, ratio: 0, gift: false })).toEqual({});
  });

  it('refuses each argument the schema does not name', () => {
    expect(validateToolArguments(schema, { id: 'x', extra: {}, is_admin: true })).toEqual({
      'arguments.extra': ['The arguments.extra field is not a parameter of this tool.'],
      'arguments.is_admin': ['The arguments.is_admin field is not a parameter of this tool.'],
    });
  });

  it('lists a bounded number of unknown arguments, long names cut', () => {
    const many = Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`x${index}`, index]));
    expect(Object.keys(validateToolArguments(schema, { id: 'x', ...many }))).toHaveLength(MAX_UNKNOWN_ARGUMENTS_LISTED);
    expect(validateToolArguments(schema, { id: 'x', ['n'.repeat(10_000)]: 1 })).toEqual({
      [`arguments.${'n'.repeat(64)}...`]: [`The arguments.${'n'.repeat(64)}... field is not a parameter of this tool.`],
    });
  });

  it('reads only the arguments given, never what every object inherits', () => {
    expect(validateToolArguments([{ name: 'constructor', type: 'string', required: true }], {})).toEqual({
      'arguments.constructor': ['The arguments.constructor field is required.'],
    });
  });

  it('reports each missing or mistyped argument in Laravel words', () => {
    expect(validateToolArguments(schema, { id: null, count: 2.5, price: 'NaN', ratio: Infinity, gift: 1 })).toEqual({
      'arguments.id': ['The arguments.id field is required.'],
      'arguments.count': ['The arguments.count field must be an integer.'],
      'arguments.price': ['The arguments.price field must be a number.'],
      'arguments.ratio': ['The arguments.ratio field must be a number.'],
      'arguments.gift': ['The arguments.gift field must be true or false.'],
    });
  });

  describe('with enums, lists and nested objects', () => {
    const order = [
      { name: 'speed', type: 'string', enum: ['standard', 'express'], required: true },
      {
        name: 'lines',
        type: 'array',
        items: {
          type: 'object',
          properties: [
            { name: 'sku', type: 'string', required: true },
            { name: 'quantity', type: 'integer', enum: [1, 2, 3] },
          ],
        },
      },
      { name: 'address', type: 'object', properties: [{ name: 'city', type: 'string', required: true }] },
      { name: 'tags', type: 'array', items: { type: 'string' } },
    ];

    it('accepts arguments that follow the schema at every level', () => {
      expect(
        validateToolArguments(order, {
          speed: 'express',
          lines: [{ sku: 'A-1', quantity: 2 }, { sku: 'B-2' }],
          address: { city: 'Berlin' },
          tags: [],
        }),
      ).toEqual({});
    });

    it('names each wrong value by its path: a value outside the enum, an item, a property, an unknown name', () => {
      expect(
        validateToolArguments(order, {
          speed: 'overnight',
          lines: [{ sku: 'A-1', quantity: 4 }, { quantity: 1, price: 0 }, 'C-3', null],
          address: ['Berlin'],
          tags: 'vip',
        }),
      ).toEqual({
        'arguments.speed': ['The selected arguments.speed is invalid.'],
        'arguments.lines.0.quantity': ['The selected arguments.lines.0.quantity is invalid.'],
        'arguments.lines.1.sku': ['The arguments.lines.1.sku field is required.'],
        'arguments.lines.1.price': ['The arguments.lines.1.price field is not a parameter of this tool.'],
        'arguments.lines.2': ['The arguments.lines.2 field must be an object.'],
        'arguments.lines.3': ['The arguments.lines.3 field is required.'],
        'arguments.address': ['The arguments.address field must be an object.'],
        'arguments.tags': ['The arguments.tags field must be an array.'],
      });
    });

    it('answers a list of thousands of wrong items in a bounded number of messages', () => {
      const errors = validateToolArguments(order, { speed: 'express', tags: Array.from({ length: 10_000 }, () => 1) });
      expect(Object.keys(errors)).toHaveLength(MAX_ARGUMENT_ERRORS);
    });
  });
});
