/**
 * Malformed-input run: at least 10,000 hostile requests over every route of the served OpenAPI document (wrong
 * types, huge strings, deep nesting, NUL and lone surrogates, broken JSON, gzip that is not gzip, broken
 * multipart, odd ids and query parameters, forged tokens), against the real API and worker in this process.
 * Fails (exit 1) on any 5xx, on an answer outside the spec's three error shapes, or when memory keeps growing.
 *
 *   node --expose-gc -r ts-node/register/transpile-only -r tsconfig-paths/register bench/faults/malformed-input.ts [requests]
 *
 * With ANSWERS_FILE=<path>, each answer is appended to that file as one line (request number, method, path, status,
 * the body's start): the requests are the same on every run, so two builds' files can be compared line by line.
 */
import { appendFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { ApiClient, startBenchStack } from '../support/stack';
import { MIB, fixed, printTable } from '../support/report';

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

/** One hostile request for an operation; `round` picks which kind. */
function hostileRequest(operation: Operation, round: number, token: string) {
  const id = ODD_IDS[round % ODD_IDS.length];
  const path = operation.template.replace(/\{[^}]+\}/g, id) + HOSTILE_QUERIES[round % HOSTILE_QUERIES.length];
  const auth = round % 7 === 0 ? `Bearer vak_${'A'.repeat(40)}` : `Bearer ${token}`;
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

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 10_000);
  const stack = await startBenchStack();
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
    await client.request('POST', '/api/user/knowledgebases', { name: 'Target' }, 201);
    const document = await client.request('GET', '/api/docs-json');
    const operations = operationsOf(document);
    const token = (client as unknown as { token: string }).token;
    const base = new URL(stack.baseUrl);
    const started = performance.now();
    let sent = 0;
    // Warm up once through every operation so the memory baseline includes compiled code and caches.
    for (let round = 0; round < 2 * operations.length; round++) {
      const operation = operations[round % operations.length];
      const { path, headers, body } = hostileRequest(operation, round, token);
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

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
