/**
 * Malformed-input run: at least 10,000 hostile requests over every route of the served OpenAPI documents (wrong
 * types, huge strings, deep nesting, NUL and lone surrogates, list items of every wrong type, broken JSON, gzip
 * that is not gzip, broken multipart, odd ids and query parameters, forged tokens), against the real API and
 * worker in this process. Requests carry a valid API key (every seventh a forged one), and every other one
 * addresses the account's own resources (a knowledgebase, document, tool, assistant, folder, label, campaign, lead,
 * import, SIP trunk and call), so hostile bodies reach real rows; DELETEs only ever get odd ids.
 * Fails (exit 1) on any 5xx, on an answer outside the spec's three error shapes, or when memory keeps growing.
 *
 *   node --expose-gc -r ts-node/register/transpile-only -r tsconfig-paths/register bench/faults/malformed-input.ts [requests]
 *
 * With ANSWERS_FILE=<path>, each answer is appended to that file as one line (request number, method, path, status,
 * the body's start): the requests are the same on every run, so two builds' files can be compared line by line.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { ApiClient, startBenchStack } from '../support/stack';
import { fixed, MIB, printTable, runMain } from '../support/report';

const ANSWERS_FILE = process.env.ANSWERS_FILE;

type Operation = { method: string; template: string; properties: string[]; multipart: boolean };

const ODD_IDS = ['0x1', '+1', '1.0', '1e3', '-1', '0', '99999999999', 'abc', '%00', '%F0%28%8C%BC', '1;DROP', '..%2F'];
const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  -1,
  1e308,
  0.5,
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x'.repeat(70_000),
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  [],
  [null],
  ['x'.repeat(1000)],
  {},
  { $gt: '' },
  { __proto__: { admin: true } },
  [[[[[[[[[]]]]]]]]],
  // Items of every wrong type where a list of objects is expected.
  [[]],
  [1],
  [true],
  ['x', {}],
  [{}, []],
];
const HOSTILE_QUERIES = [
  '',
  '?page=-1&per_page=0',
  '?page=abc&per_page=101',
  '?per_page=1e2',
  '?page[]=1&per_page[a]=2',
  '?query=%00&limit=-5',
  '?query=%ud800',
  `?query=${'a'.repeat(5000)}`,
  '?status=%27%3B--&campaign_id=0x1&date_from=2026-13-45',
];

interface Answer {
  status: number;
  body: string;
}

function send(base: URL, method: string, path: string, headers: Record<string, string>, body?: Buffer | string) {
  const length = body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) };
  return new Promise<Answer>((resolve, reject) => {
    const request = httpRequest(
      { host: base.hostname, port: base.port, method, path, headers: { ...headers, ...length }, timeout: 30_000 },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

function isSpecShape(text: string): boolean {
  try {
    const body = JSON.parse(text);
    const keys = Object.keys(body).sort().join(',');
    return keys === 'message' || keys === 'error' || keys === 'errors,message';
  } catch {
    return false;
  }
}

function operationsOf(document: any): Operation[] {
  return Object.entries<Record<string, any>>(document.paths).flatMap(([template, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const content = operation.requestBody?.content ?? {};
      const schema = (content['application/json'] ?? content['multipart/form-data'])?.schema;
      const resolved = schema?.$ref ? document.components.schemas[schema.$ref.split('/').pop()] : schema;
      return {
        method: method.toUpperCase(),
        template,
        properties: Object.keys(resolved?.properties ?? {}),
        multipart: Boolean(content['multipart/form-data']),
      };
    }),
  );
}

/** Real resources of the account, by the path segment that names them, so hostile bodies reach real rows too. */
type RealIds = Record<string, string>;

/**
 * A path for the template: on every other round an odd id, else the account's own resource for each parameter
 * (named by the segment before it) where there is one. A DELETE always gets odd ids, so the resources stay.
 */
function pathOf(operation: Operation, round: number, real: RealIds): string {
  const odd = ODD_IDS[round % ODD_IDS.length];
  const useReal = round % 2 === 1 && operation.method !== 'DELETE';
  const path = operation.template.replace(/\/([^/]+)\/\{([^}]+)\}/g, (_, segment: string, parameter: string) => {
    const id = useReal ? (real[`${segment}/${parameter}`] ?? real[segment]) : undefined;
    return `/${segment}/${id ?? odd}`;
  });
  return path + HOSTILE_QUERIES[round % HOSTILE_QUERIES.length];
}

/** One hostile request for an operation; `round` picks which kind. */
function hostileRequest(operation: Operation, round: number, token: string, real: RealIds, runtimeToken: string) {
  const path = pathOf(operation, round, real);
  const credential = operation.template.startsWith('/api/internal/') ? runtimeToken : token;
  const auth = round % 7 === 0 ? `Bearer vak_${'A'.repeat(40)}` : `Bearer ${credential}`;
  const headers: Record<string, string> = { authorization: auth };
  const kind = round % 6;
  if (kind === 0) {
    headers['content-type'] = 'application/json';
    return { path, headers, body: '{"a":'.repeat(3000) + '1' + '}'.repeat(3000) };
  }
  if (kind === 1) {
    headers['content-type'] = 'application/json';
    return { path, headers, body: '{"name": "unterminated' };
  }
  if (kind === 2) {
    headers['content-type'] = 'application/json';
    headers['content-encoding'] = ['gzip', 'deflate', 'br'][round % 3];
    return { path, headers, body: 'not compressed at all' };
  }
  if (kind === 3) {
    headers['content-type'] = 'multipart/form-data; boundary=XYZ';
    return {
      path,
      headers,
      body: '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhalf',
    };
  }
  const value = HOSTILE_VALUES[round % HOSTILE_VALUES.length];
  const fields = operation.properties.length > 0 ? operation.properties : ['name'];
  headers['content-type'] = 'application/json';
  const body = JSON.stringify(Object.fromEntries(fields.map((field) => [field, value])));
  return { path, headers, body: kind === 4 ? body : `[${body}]` };
}

/** One resource of each kind the routes address, owned by the client's account. */
async function realResources(client: ApiClient, runtimeToken: string): Promise<RealIds> {
  const created = async (path: string, body: unknown, expected = 201) =>
    String((await client.request('POST', path, body, expected)).data.id);
  const knowledgebase = await created('/api/user/knowledgebases', { name: 'Target' });
  const file = new FormData();
  file.append('name', 'Hours');
  file.append('type', 'txt');
  file.append('file', new Blob(['We are open Monday to Friday.']), 'hours.txt');
  const language = (await client.request('GET', '/api/user/assistants/languages'))[0].id;
  const assistant = await created('/api/user/assistant', { name: 'Fuzz', type: 'outbound', language_id: language });
  const campaign = await created('/api/user/campaign', { name: 'Fuzz', assistant_id: Number(assistant) });
  const csv = new FormData();
  csv.append('file', new Blob(['phone_number\n+14155550100\nnot a number\n']), 'leads.csv');
  const trunk = await created('/api/user/phone-numbers/sip-trunks', {
    sip_trunk_type: 'number',
    phone_number: '+14155550199',
    sip_username: 'fuzz',
    sip_password: 'fuzz-password',
    sip_address: 'sip.example.com',
  });
  const call = await fetch(`${client.baseUrl}/api/internal/calls/fuzz-call`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${runtimeToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      assistant_id: Number(assistant),
      type: 'outbound',
      status: 'completed',
      client_phone_number: '+14155550123',
      assistant_phone_number: '+14155550199',
    }),
  });
  if (call.status !== 201) throw new Error(`the fuzz call answered ${call.status}`);
  return {
    knowledgebases: knowledgebase,
    documents: await created(`/api/user/knowledgebases/${knowledgebase}/documents`, file),
    tools: await created('/api/user/tools', {
      name: 'fuzz_tool',
      description: 'A tool',
      endpoint: 'http://127.0.0.1:9/tool',
      method: 'POST',
    }),
    assistant,
    folder: await created('/api/user/folder', { name: 'Fuzz' }),
    label: await created('/api/user/label', { name: 'Fuzz' }),
    campaign,
    leads: await created('/api/user/lead', { phone_number: '+14155550101', campaign_id: Number(campaign) }),
    imports: String((await client.request('POST', `/api/user/campaign/${campaign}/leads/import`, csv, 202)).data.id),
    'sip-trunks': trunk,
    'phone-numbers': trunk,
    calls: String(((await call.json()) as { data: { id: number } }).data.id),
    'calls/externalId': 'fuzz-call',
    'api-keys': String((await client.request('GET', '/api/user/api-keys')).api_keys[0].id),
  };
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 10_000);
  const runtimeToken = randomBytes(24).toString('hex');
  const stack = await startBenchStack({ RUNTIME_API_TOKEN: runtimeToken });
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  const memory: { requests: number; heapMiB: number; rssMiB: number }[] = [];
  const sampleMemory = (requests: number) => {
    global.gc?.();
    const usage = process.memoryUsage();
    memory.push({ requests, heapMiB: usage.heapUsed / MIB, rssMiB: usage.rss / MIB });
  };
  try {
    const client = await ApiClient.register(stack.baseUrl);
    // Both served documents: the public one and the voice runtime's (every /api/internal/ route).
    const operations = [
      ...operationsOf(await client.request('GET', '/api/docs-json')),
      ...operationsOf(await client.request('GET', '/api/internal/docs-json')),
    ];
    // An API key rather than the session: the run's own logout must not sign it out.
    const token = (await client.request('POST', '/api/user/api-keys', { name: 'Fuzz' }, 201)).api_key.token as string;
    const real = await realResources(client, runtimeToken);
    const base = new URL(stack.baseUrl);
    const started = performance.now();
    let sent = 0;
    // Warm up once through every operation so the memory baseline includes compiled code and caches.
    for (let round = 0; round < 2 * operations.length; round++) {
      const operation = operations[round % operations.length];
      const { path, headers, body } = hostileRequest(operation, round, token, real, runtimeToken);
      await send(base, operation.method, path, headers, body).catch(() => undefined);
    }
    sampleMemory(0);
    const concurrency = 8;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        for (let round = lane; round < total; round += concurrency) {
          const operation = operations[round % operations.length];
          const { path, headers, body } = hostileRequest(
            operation,
            Math.floor(round / operations.length) + round,
            token,
            real,
            runtimeToken,
          );
          const answer = await send(base, operation.method, path, headers, body).catch((error: Error) => ({
            status: 0,
            body: `no answer: ${error.message}`,
          }));
          sent++;
          if (ANSWERS_FILE) {
            const line = `${round} ${operation.method} ${path.slice(0, 150)} ${answer.status} ${answer.body.slice(0, 150)}`;
            appendFileSync(ANSWERS_FILE, `${line.replace(/\n/g, ' ')}\n`);
          }
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          const shapeless = answer.status >= 400 && !isSpecShape(answer.body);
          if (answer.status === 0 || answer.status >= 500 || shapeless) {
            failures.push(`${operation.method} ${path.slice(0, 120)} -> ${answer.status} ${answer.body.slice(0, 200)}`);
          }
          if (lane === 0 && sent % 2000 < concurrency) sampleMemory(sent);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    sampleMemory(sent);
    printTable(
      `Malformed input: ${sent} requests over ${operations.length} operations in ${fixed(seconds)} s`,
      ['status', 'answers'],
      [...statuses.entries()].sort(([a], [b]) => a - b).map(([status, count]) => [status, count]),
    );
    printTable(
      'Memory of the process serving them (after GC)',
      ['after requests', 'heap MiB', 'RSS MiB'],
      memory.map((sample) => [sample.requests, fixed(sample.heapMiB), fixed(sample.rssMiB)]),
    );
    const growth = memory[memory.length - 1].heapMiB - memory[0].heapMiB;
    console.log(`\nheap growth over the run: ${fixed(growth)} MiB; 5xx or shapeless answers: ${failures.length}`);
    for (const failure of failures.slice(0, 20)) console.log(`  ${failure}`);
    if (failures.length > 0 || growth > 64) process.exitCode = 1;
  } finally {
    await stack.close();
  }
}

runMain(main);
