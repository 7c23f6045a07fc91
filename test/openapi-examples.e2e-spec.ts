import { dropDatabase, ensureDatabase, runMigrations } from '@app/database';
import { type LocalSite, sendHtml, startLocalSite } from '../libs/outbound-http/test/local-site';
import { servedDocuments } from './support/api-documents';
import { type Stack, startStack } from './support/stack';

type Schema = Record<string, any>;

const RUNTIME_TOKEN = 'runtime-token-of-the-examples-run-0123456789';
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** What an uploaded file's field holds in "Try it out": the file a user would choose, by operation. */
const FILES: Record<string, { content: string; name: string }> = {
  importLeads: { content: 'phone_number,first_name\n+14155550199,Grace\n', name: 'leads.csv' },
  createDocument: { content: 'We are open Monday to Friday, nine to five.', name: 'hours.txt' },
};

/**
 * What a newcomer meets pressing "Try it out" on every operation that takes a body, in the order the documents list
 * them, on a fresh install: each documented example is sent as it is, ids included (a fresh database hands out 1
 * first, and every path parameter's example is 1), with the session token the register example answered (the
 * voice runtime's routes with the deployment's runtime token), and must be answered with a success status the
 * document lists. Only the example domain is mapped to a server of the test's own (no test reaches the internet),
 * and an event's instant to the walk's own (a runtime sends when the event happened; the document's fixed instant
 * is before any call the walk places, and the service refuses events outside their call's life).
 */
describe('The OpenAPI documents’ request examples', () => {
  const url = new URL(process.env.TEST_DATABASE_URL!);
  url.pathname = `${url.pathname}_examples`;
  let stack: Stack;
  let site: LocalSite;

  beforeAll(async () => {
    site = await startLocalSite({
      '*': sendHtml('<h1>Opening hours</h1><p>We are open Monday to Friday, nine to five.</p>'),
    });
    await ensureDatabase(url.toString());
    await runMigrations(url.toString());
    stack = await startStack({
      env: {
        DATABASE_URL: url.toString(),
        // Queues of its own: the ids of this database's rows are the ones other files' jobs name.
        QUEUE_PREFIX: `${process.env.TEST_QUEUE_PREFIX}:examples`,
        RUNTIME_API_TOKEN: RUNTIME_TOKEN,
        CRAWL_DELAY_MS: '0',
      },
    });
    // A database migrated from nothing, the search's related words included: over a minute on a busy machine.
  }, 180_000);
  afterAll(async () => {
    await stack?.close();
    await site?.close();
    await dropDatabase(url.toString());
  });

  it('answers every documented request example with a documented success', async () => {
    const documents = await servedDocuments(stack.http);
    const sent: string[] = [];
    const failures: object[] = [];
    let token: string | undefined;
    for (const [name, document] of Object.entries(documents)) {
      const internal = name === 'internal';
      for (const [path, operations] of Object.entries<Schema>(document.paths)) {
        for (const method of HTTP_METHODS) {
          const operation = operations[method];
          if (!operation?.requestBody) continue;
          for (const [mediaType, content] of Object.entries<Schema>(operation.requestBody.content)) {
            const route = `${method.toUpperCase()} ${path} (${mediaType})`;
            const example = exampleOf(document, content);
            if (example === undefined) {
              failures.push({ route, problem: 'no example' });
              continue;
            }
            const target = pathWithExamples(path, operation.parameters ?? []);
            if (typeof target !== 'string') {
              failures.push({ route, problem: `no example for the path parameter ${target.missing}` });
              continue;
            }
            let request = stack.http[method](target);
            const bearer = internal ? RUNTIME_TOKEN : token;
            if (bearer) request = request.set('Authorization', `Bearer ${bearer}`);
            const body = happeningNow(onTheTestsSite(example, site.origin));
            if (mediaType === 'multipart/form-data') {
              for (const [field, value] of Object.entries<unknown>(body)) request = request.field(field, String(value));
              const file = FILES[operation.operationId];
              if (!file) throw new Error(`${route}: which file does a user choose here?`);
              request = request.attach('file', Buffer.from(file.content), file.name);
            } else request = request.send(body);
            const response = await request;
            sent.push(route);
            const successes = Object.keys(operation.responses).filter((status) => /^2\d\d$/.test(status));
            if (!successes.includes(String(response.status)))
              failures.push({ route, example, status: response.status, answer: response.body });
            if (operation.operationId === 'register' && response.body?.token) token = response.body.token;
          }
        }
      }
    }
    expect(failures).toEqual([]);
    // The walk reached both documents, every create among them.
    expect(sent).toEqual(expect.arrayContaining(['POST /api/auth/register (application/json)']));
    expect(sent.some((route) => route.startsWith('PUT /api/internal/'))).toBe(true);
  }, 120_000);
});

/**
 * The example "Try it out" fills in: the media type's own, or its schema's; a form with a file field by field, from
 * the fields' examples (the file is the user's to choose).
 */
function exampleOf(document: Schema, content: Schema): Schema | undefined {
  if (content.example !== undefined) return content.example;
  const schema = content.schema?.$ref
    ? document.components.schemas[String(content.schema.$ref).split('/').pop()!]
    : content.schema;
  const properties = Object.entries<Schema>(schema?.properties ?? {});
  if (!properties.some(([, property]) => property.format === 'binary')) return schema?.example;
  return Object.fromEntries(
    properties
      .filter(([, property]) => property.example !== undefined)
      .map(([name, property]) => [name, property.example]),
  );
}

/** The path with every parameter's example in its place, or the parameter that has none. */
function pathWithExamples(path: string, parameters: Schema[]): string | { missing: string } {
  let filled = path;
  for (const parameter of parameters.filter((each) => each.in === 'path')) {
    const example = parameter.example ?? parameter.schema?.example;
    if (example === undefined) return { missing: parameter.name };
    filled = filled.replace(`{${parameter.name}}`, encodeURIComponent(String(example)));
  }
  return filled;
}

/** Links to the example domain (RFC 2606: never a real site) pointed at the test's own server instead. */
function onTheTestsSite(example: Schema, origin: string): Schema {
  return JSON.parse(
    JSON.stringify(example).replace(/https?:\/\/(?:[a-z0-9-]+\.)*example\.com(?=[/"?])/g, origin),
  ) as Schema;
}

/** Every event instant (`at`) of the example set to now, as a runtime reporting what just happened sends it. */
function happeningNow(example: Schema): Schema {
  const now = new Date().toISOString();
  return JSON.parse(JSON.stringify(example), (key, value: unknown) =>
    key === 'at' && typeof value === 'string' ? now : value,
  ) as Schema;
}
