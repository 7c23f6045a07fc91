import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { startLocalSite, type LocalSite } from '../../../libs/outbound-http/test/local-site';
import { type Stack, startStack } from '../../../test/support/stack';
import { waitFor } from '../../../test/support/wait-for';
import {
  createClient,
  idempotencyKey,
  items,
  pages,
  unwrap,
  verifyWebhook,
  type VoiceAssistantClient,
  WebhookVerificationError,
} from '../src/index.js';

const run = promisify(execFile);
const RUNTIME_TOKEN = 'runtime-token-for-the-sdk-tests-0123456789';
const SDK_DIRECTORY = join(__dirname, '..');
const ROOT = join(SDK_DIRECTORY, '..', '..');
const SESSION_DIRECTORY = join(SDK_DIRECTORY, 'test', 'readme-session');

/** The README's SDK session, as a reader copies it: the TypeScript block after its marker. */
async function readmeSdkSession(): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /<!-- sdk-first-session -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error('README has no SDK session');
  return block[1];
}

/** The README's commands that pack the SDK and install it in an integration: the bash block before the session. */
async function readmeSdkInstall(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /```bash\n([^`]*npm pack[^`]*)```\s*<!-- sdk-first-session -->/.exec(readme);
  if (!block) throw new Error('README has no SDK install before its session');
  return block[1].trim().split('\n');
}

describe('The TypeScript SDK as the README packs it', () => {
  it('writes its tarball where the integration installs it from, leaving the checkout as it was', async () => {
    const home = await mkdtemp(join(tmpdir(), 'sdk-pack-'));
    const status = async () =>
      (await run('git', ['status', '--porcelain', '--untracked-files=all'], { cwd: ROOT })).stdout;
    const tarballs = async () => (await readdir(ROOT)).filter((name) => name.endsWith('.tgz'));
    const [before, tarballsBefore] = [await status(), await tarballs()];
    try {
      const [pack, install] = await readmeSdkInstall();
      // As a reader runs it in the checkout, `~` their own home.
      await run('bash', ['-c', pack], {
        cwd: ROOT,
        env: { ...process.env, HOME: home, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
        timeout: 120_000,
      });
      expect({ status: await status(), tarballs: await tarballs() }).toEqual({
        status: before,
        tarballs: tarballsBefore,
      });
      // The install names the tarball the pack wrote, from the folder it changes to.
      const [, folder, tarball] = /^cd (\S+) && npm install (\S+)$/.exec(install)!;
      const written = join(folder.replace(/^~/, home), tarball);
      const { stdout } = await run('tar', ['-tzf', written]);
      expect(stdout.split('\n')).toEqual(expect.arrayContaining(['package/package.json', 'package/dist/index.js']));
    } finally {
      await rm(home, { recursive: true, force: true });
      for (const name of await tarballs()) if (!tarballsBefore.includes(name)) await rm(join(ROOT, name));
    }
  }, 150_000);
});

describe('The TypeScript SDK (sdk/typescript) against the running API and worker', () => {
  let stack: Stack;
  let baseUrl: string;
  let site: LocalSite;
  /** A fresh account's API key, and a client sending it. */
  let apiKey: string;
  let api: VoiceAssistantClient;

  beforeAll(async () => {
    site = await startLocalSite({
      '/hours': (_request, response) =>
        response
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><body><main><p>Our shop in Rome opens at eight on Saturdays.</p></main></body></html>'),
      '/hook': (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
    });
    stack = await startStack({ env: { RUNTIME_API_TOKEN: RUNTIME_TOKEN } });
    await new Promise<void>((resolve) => stack.api.getHttpServer().listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(stack.api.getHttpServer().address() as AddressInfo).port}`;
    const email = `sdk-${Date.now()}@example.com`;
    const { token } = unwrap(
      await createClient({ baseUrl }).POST('/api/auth/register', {
        body: { name: 'Sdk', email, password: 'a long password' },
      }),
    );
    const key = unwrap(await createClient({ baseUrl, token }).POST('/api/user/api-keys', { body: { name: 'SDK' } }));
    apiKey = key.api_key.token;
    api = createClient({ baseUrl, token: apiKey });
  });
  afterAll(async () => {
    await stack?.close();
    await site?.close();
    await rm(SESSION_DIRECTORY, { recursive: true, force: true });
  });

  it('is generated from the document the API serves, and current with the code', async () => {
    const served = (await stack.http.get('/api/docs-json').expect(200)).body;
    const committed = JSON.parse(await readFile(join(SDK_DIRECTORY, 'openapi.json'), 'utf8'));
    expect(committed).toEqual(served);
    // The document made without a server, and the types generated from it, are what is committed: what
    // `npm run sdk:generate -- --check` says, run as a developer runs it.
    const check = await run(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'scripts/generate-sdk.ts', '--check'],
      { cwd: ROOT, timeout: 180_000 },
    ).catch((error: { stdout: string; stderr: string }) => error);
    expect({ stdout: check.stdout, stderr: check.stderr }).toEqual({
      stdout: 'The SDK is current with the OpenAPI document.\n',
      stderr: '',
    });
  }, 240_000);

  it('runs the README’s session, type-checked against the built package', async () => {
    await run(process.execPath, [join(SDK_DIRECTORY, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', SDK_DIRECTORY]);
    await mkdir(SESSION_DIRECTORY, { recursive: true });
    const source = (await readmeSdkSession()).replace("'http://localhost:3000'", `'${baseUrl}'`);
    const file = join(SESSION_DIRECTORY, 'session.mts');
    await writeFile(file, source);

    // As a consumer's compiler sees it: the package by its name (its `exports`, the built declarations).
    const program = ts.createProgram([file], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    expect(problems).toEqual([]);

    // As Node 24 runs it: the types stripped.
    const javascript = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await writeFile(join(SESSION_DIRECTORY, 'session.mjs'), javascript);
    const { stdout, stderr } = await run(process.execPath, [join(SESSION_DIRECTORY, 'session.mjs')], {
      cwd: SESSION_DIRECTORY,
      timeout: 90_000,
    });
    const [documentLine, searchLine] = stdout.trim().split('\n');
    expect({ documentLine, stderr }).toEqual({
      documentLine: expect.stringMatching(/^document \d+: active$/),
      stderr: '',
    });
    expect(JSON.parse(searchLine).data.map((passage: { content: string }) => passage.content)).toEqual([
      'We are open Monday to Friday, nine to five.',
    ]);
  }, 150_000);

  it('creates documents from JSON and from a file on the one route, and imports leads from a CSV file', async () => {
    const knowledgebaseId = unwrap(await api.POST('/api/user/knowledgebases', { body: { name: 'Shops' } })).data.id;
    const path = { knowledgebaseId };
    const website = unwrap(
      await api.POST('/api/user/knowledgebases/{knowledgebaseId}/documents', {
        params: { path },
        body: { name: 'Rome', type: 'website', url: `${site.origin}/hours`, relative_links_limit: 1 },
      }),
    ).data;
    const file = unwrap(
      await api.POST('/api/user/knowledgebases/{knowledgebaseId}/documents', {
        params: { path },
        body: {
          name: 'Returns',
          description: null,
          type: 'txt',
          file: new Blob(['Returns are free within thirty days.'], { type: 'text/plain' }),
        },
      }),
    ).data;
    const settled = async (documentId: number) =>
      waitFor(async () => {
        const { data } = unwrap(
          await api.GET('/api/user/knowledgebases/{knowledgebaseId}/documents/{documentId}', {
            params: { path: { knowledgebaseId, documentId } },
          }),
        );
        return data.status === 'processing' ? undefined : data;
      }, 60_000);
    expect((await settled(website.id)).status).toBe('active');
    expect((await settled(file.id)).status).toBe('active');
    const found = unwrap(
      await api.GET('/api/user/knowledgebases/{id}/search', {
        params: { path: { id: knowledgebaseId }, query: { query: 'saturdays returns' } },
      }),
    );
    expect(found.data.map((passage) => passage.content).sort()).toEqual([
      'Our shop in Rome opens at eight on Saturdays.',
      'Returns are free within thirty days.',
    ]);

    const campaignId = unwrap(
      await api.POST('/api/user/campaign', { body: { name: 'Imported', assistant_id: await assistantId() } }),
    ).data.id;
    const started = unwrap(
      await api.POST('/api/user/campaign/{id}/leads/import', {
        params: { path: { id: campaignId } },
        body: { file: new File(['phone_number,city\n+14155550161,Rome\n'], 'leads.csv', { type: 'text/csv' }) },
      }),
    ).data;
    const imported = await waitFor(async () => {
      const { data } = unwrap(
        await api.GET('/api/user/campaign/{id}/leads/imports/{importId}', {
          params: { path: { id: campaignId, importId: started.id } },
        }),
      );
      return ['completed', 'failed'].includes(data.status) ? data : undefined;
    }, 30_000);
    expect(imported).toMatchObject({ status: 'completed', rows_imported: 1, rows_failed: 0 });
  }, 120_000);

  it('sends a create again with its Idempotency-Key when the answer is lost, and it is created once', async () => {
    let lost = 0;
    const losing = createClient({
      baseUrl,
      token: apiKey,
      // The API answers, the answer never arrives.
      fetch: async (request) => {
        const response = await fetch(request);
        if (lost++ > 0) return response;
        await response.body?.cancel();
        throw new TypeError('fetch failed');
      },
    });
    const created = await losing.POST('/api/user/knowledgebases', {
      body: { name: 'Created once' },
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
    });
    expect({ status: created.response.status, replayed: created.response.headers.get('Idempotent-Replayed') }).toEqual({
      status: 201,
      replayed: 'true',
    });
    const all = unwrap(await api.GET('/api/user/knowledgebases')).data;
    expect(all.filter((knowledgebase) => knowledgebase.name === 'Created once')).toEqual([
      expect.objectContaining({ id: unwrap(created).data.id }),
    ]);
  });

  it('walks every page of a length-aware list and of a slim one', async () => {
    const before = unwrap(await api.GET('/api/user/folders')).total;
    for (let index = 0; index < 7; index++) await api.POST('/api/user/folder', { body: { name: `Folder ${index}` } });
    const folderPages = [];
    for await (const page of pages((page) =>
      api.GET('/api/user/folders', { params: { query: { page, per_page: 3 } } }),
    ))
      folderPages.push(page.data.length);
    expect(folderPages.reduce((sum, count) => sum + count, 0)).toBe(before + 7);
    expect(folderPages).toHaveLength(Math.ceil((before + 7) / 3));

    for (let index = 0; index < 5; index++) await assistantId(`Walker ${index}`);
    const names: string[] = [];
    for await (const assistant of items((page) =>
      api.GET('/api/user/assistants/get', { params: { query: { page, per_page: 2 } } }),
    ))
      names.push(assistant.name);
    const { total } = unwrap(await api.GET('/api/user/assistants/get'));
    expect(names).toHaveLength(total);
    expect(names).toEqual(expect.arrayContaining(['Walker 0', 'Walker 4']));
  });

  it('verifies the webhooks the worker signs, and refuses one changed on the way', async () => {
    const assistant = unwrap(
      await api.POST('/api/user/assistant', {
        body: {
          name: 'Hooked',
          type: 'outbound',
          language_id: await englishId(),
          webhook_url: `${site.origin}/hook`,
          is_webhook_active: true,
        },
      }),
    ).data;
    await stack.http
      .put('/api/internal/calls/sdk-hook-1')
      .set({ Authorization: `Bearer ${RUNTIME_TOKEN}` })
      .send({
        assistant_id: assistant.id,
        type: 'outbound',
        status: 'completed',
        client_phone_number: '+14155550123',
        assistant_phone_number: '+14155550999',
        transcript: 'Thanks!',
      })
      .expect(201);
    const delivery = await waitFor(async () =>
      site.requests.find((request) => request.path === '/hook' && request.body.includes('sdk-hook-1')),
    );
    const event = verifyWebhook(assistant.webhook_secret!, delivery.headers, delivery.body);
    expect(event.event).toBe('call.ended');
    if (event.event === 'call.ended')
      expect(event.call).toMatchObject({ external_id: 'sdk-hook-1', transcript: 'Thanks!', lead: null, turns: [] });
    expect(() =>
      verifyWebhook(assistant.webhook_secret!, delivery.headers, delivery.body.replace('Thanks!', 'Thanks?')),
    ).toThrow(WebhookVerificationError);
  }, 60_000);

  async function englishId(): Promise<number> {
    const languages = unwrap(await api.GET('/api/user/assistants/languages'));
    return languages.find((language) => language.iso_2 === 'en')!.id;
  }

  async function assistantId(name = 'Caller'): Promise<number> {
    const body = { name, type: 'outbound' as const, language_id: await englishId() };
    return unwrap(await api.POST('/api/user/assistant', { body })).data.id;
  }
});
