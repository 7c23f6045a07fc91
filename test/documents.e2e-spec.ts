import {
  buildSampleDocx,
  buildSamplePdf,
  buildTextlessPdf,
  DOCX_HEADING,
  DOCX_TABLE_CELLS,
  PDF_HEADER_LINE,
  PNG_BYTES,
  samplePdfBody,
} from '../libs/extraction/test/document-fixtures';
import { JobQueue, Jobs } from '@app/jobs';
import { createWorkerApp } from '../apps/worker/src/worker.app';
import { createAccount, type TestAccount } from './support/factories';
import { type LocalSite, type RouteHandler, sendPage, startLocalSite } from '../libs/outbound-http/test/local-site';
import { type Stack, startStack } from './support/stack';
import { HeldPage } from './support/held-page';
import { waitFor, waitForDocument } from './support/wait-for';

describe('Documents', () => {
  let stack: Stack;
  let account: TestAccount;
  let site: LocalSite;
  /** The site's routes; tests add to them as they go. */
  const routes: Record<string, RouteHandler> = {};
  const url = (path: string) => `${site.origin}${path}`;

  beforeAll(async () => {
    stack = await startStack({ env: { CRAWL_DELAY_MS: '0', JOB_RETRY_DELAY_MS: '50' } });
    account = await createAccount(stack);
    site = await startLocalSite(routes);
  });
  afterAll(async () => {
    await site.close();
    await stack.close();
  });

  const newKnowledgebase = async () =>
    (await stack.http.post('/api/user/knowledgebases').set(account.auth).send({ name: 'Docs' }).expect(201)).body.data
      .id;
  const documentsPath = (knowledgebaseId: number) => `/api/user/knowledgebases/${knowledgebaseId}/documents`;

  const upload = (knowledgebaseId: number, type: string, content: Buffer, fileName: string) =>
    stack.http
      .post(documentsPath(knowledgebaseId))
      .set(account.auth)
      .field('name', fileName)
      .field('type', type)
      .attach('file', content, fileName);

  async function processed(knowledgebaseId: number, type: string, content: Buffer, fileName: string) {
    const created = await upload(knowledgebaseId, type, content, fileName).expect(201);
    return waitForDocument(stack, account, knowledgebaseId, created.body.data.id);
  }

  async function passagesOf(documentId: number): Promise<string> {
    const rows: { content: string }[] = await stack.dataSource.query(
      'SELECT content FROM passages WHERE document_id = $1 ORDER BY position',
      [documentId],
    );
    return rows.map((row) => row.content).join('\n');
  }

  describe('files', () => {
    it('extracts a PDF without its repeated header and footer', async () => {
      const knowledgebase = await newKnowledgebase();
      const document = await processed(knowledgebase, 'pdf', await buildSamplePdf(4), 'handbook.pdf');
      expect(document).toMatchObject({ status: 'active', type: 'pdf', type_label: 'PDF', error_message: null });
      expect(document.content_length).toBeGreaterThan(100);
      const text = await passagesOf(document.id);
      expect(text).toContain(samplePdfBody(3)[0]);
      expect(text).not.toContain(PDF_HEADER_LINE);
    });

    it('fails a scanned PDF with a message saying so', async () => {
      const knowledgebase = await newKnowledgebase();
      const document = await processed(knowledgebase, 'pdf', await buildTextlessPdf(), 'scan.pdf');
      expect(document).toMatchObject({ status: 'failed', status_label: 'Failed', content_length: 0 });
      expect(document.error_message).toMatch(/no extractable text \(scanned PDF\?\)/i);
      const kb = await stack.http.get(`/api/user/knowledgebases/${knowledgebase}`).set(account.auth).expect(200);
      expect(kb.body.data.status).toBe('failed');
    });

    it('extracts a Word document, tables included', async () => {
      const knowledgebase = await newKnowledgebase();
      const document = await processed(knowledgebase, 'docx', await buildSampleDocx(), 'guide.docx');
      expect(document).toMatchObject({ status: 'active', type_label: 'Word document' });
      const text = await passagesOf(document.id);
      expect(text).toContain(DOCX_HEADING);
      for (const cell of DOCX_TABLE_CELLS) expect(text).toContain(cell);
    });

    it.each([
      ['UTF-8', Buffer.from('Crème brûlée costs €5.', 'utf8')],
      ['UTF-16 with BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Crème brûlée costs €5.', 'utf16le')])],
      ['Latin-1', Buffer.from('Crème brûlée costs 5 euros.', 'latin1')],
    ])('reads TXT in %s', async (_encoding, bytes) => {
      const knowledgebase = await newKnowledgebase();
      const document = await processed(knowledgebase, 'txt', bytes, 'menu.txt');
      expect(document.status).toBe('active');
      expect(await passagesOf(document.id)).toMatch(/^Crème brûlée costs/);
      const search = await stack.http
        .get(`/api/user/knowledgebases/${knowledgebase}/search?query=creme brulee`)
        .set(account.auth)
        .expect(200);
      expect(search.body.data.map((hit: { content: string }) => hit.content)).toEqual([
        expect.stringMatching(/^Crème brûlée/),
      ]);
    });

    it.each([
      ['a PNG declared as PDF', 'pdf', PNG_BYTES],
      ['a PDF declared as DOCX', 'docx', null],
      ['a PNG declared as TXT', 'txt', PNG_BYTES],
      ['random bytes declared as PDF', 'pdf', Buffer.from('%PDF-1.7 this is not really a pdf')],
    ])('fails %s with a clear message', async (_case, type, bytes) => {
      const knowledgebase = await newKnowledgebase();
      const content = bytes ?? (await buildSamplePdf(1));
      const document = await processed(knowledgebase, type as string, content as Buffer, 'file.bin');
      expect(document.status).toBe('failed');
      expect(document.error_message).toEqual(expect.any(String));
      expect(document.error_message.length).toBeGreaterThan(10);
      expect(await passagesOf(document.id)).toBe('');
    });

    it('requires a file for file types, in the validation shape', async () => {
      const knowledgebase = await newKnowledgebase();
      const response = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'No file', type: 'pdf', file: 'not a file' })
        .expect(422);
      expect(response.body).toEqual({
        message: 'The file field is required.',
        errors: { file: ['The file field is required.'] },
      });
    });

    it('refuses a file over 20 MB while streaming, with the validation shape on file', async () => {
      const knowledgebase = await newKnowledgebase();
      const response = await upload(knowledgebase, 'txt', Buffer.alloc(20 * 1024 * 1024 + 1, 'a'), 'big.txt').expect(
        422,
      );
      expect(response.body).toEqual({
        message: 'The file field must not be greater than 20480 kilobytes.',
        errors: { file: ['The file field must not be greater than 20480 kilobytes.'] },
      });
      const list = await stack.http.get(documentsPath(knowledgebase)).set(account.auth).expect(200);
      expect(list.body).toEqual({ data: [] });
    });

    it('answers 404 {error} for a document of another knowledgebase or another account', async () => {
      const first = await newKnowledgebase();
      const second = await newKnowledgebase();
      const document = await processed(first, 'txt', Buffer.from('Belongs to the first.'), 'first.txt');
      const intruder = await createAccount(stack);
      const notFound = { error: 'Document not found.' };
      for (const response of [
        await stack.http.get(`${documentsPath(second)}/${document.id}`).set(account.auth),
        await stack.http.delete(`${documentsPath(second)}/${document.id}`).set(account.auth),
        await stack.http.get(`${documentsPath(first)}/abc`).set(account.auth),
      ]) {
        expect([response.status, response.body]).toEqual([404, notFound]);
      }
      const foreign = await stack.http.delete(`${documentsPath(first)}/${document.id}`).set(intruder.auth);
      expect([foreign.status, foreign.body]).toEqual([404, { error: 'Knowledgebase not found.' }]);
      await stack.http
        .get(`${documentsPath(first)}/${document.id}`)
        .set(account.auth)
        .expect(200);
      const deleted = await stack.http
        .delete(`${documentsPath(first)}/${document.id}`)
        .set(account.auth)
        .expect(200);
      expect(deleted.body).toEqual({ message: 'Document deleted successfully.' });
      await stack.http
        .get(`${documentsPath(first)}/${document.id}`)
        .set(account.auth)
        .expect(404, notFound);
    });

    it('answers an unknown knowledgebase with 404 {error}', async () => {
      const response = await upload(2147483000, 'txt', Buffer.from('hello'), 'a.txt').expect(404);
      expect(response.body).toEqual({ error: 'Knowledgebase not found.' });
    });
  });

  describe('websites', () => {
    beforeAll(() => {
      Object.assign(routes, {
        '/': sendPage(
          'Home',
          '<nav>Menu Home Pricing</nav><main><h1>Welcome</h1><p>We repair bicycles.</p>' +
            '<a href="/pricing">Pricing</a> <a href="docs/intro#top">Intro</a> ' +
            '<a href="https://example.invalid/">Elsewhere</a> <a href="/private/secret">Secret</a></main>' +
            '<footer>Copyright footer</footer>',
        ),
        '/pricing': sendPage('Pricing', '<main><p>A tune-up costs forty dollars.</p></main>'),
        '/docs/intro': sendPage(
          'Intro',
          '<main><p>Bring your bicycle any weekday.</p><a href="../pricing">Back</a></main>',
        ),
        '/private/secret': sendPage('Secret', '<p>Never crawl this.</p>'),
        '/robots.txt': (_request, response) =>
          response.writeHead(200, { 'Content-Type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n'),
      } satisfies Record<string, RouteHandler>);
    });

    it('crawls the start page and same-site links breadth first, and reports each page', async () => {
      const knowledgebase = await newKnowledgebase();
      const created = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'Site', type: 'website', url: url('/'), relative_links_limit: 5 })
        .expect(201);
      expect(created.body.data).toMatchObject({ type: 'website', type_label: 'Website', status: 'processing' });
      const document = await waitForDocument(stack, account, knowledgebase, created.body.data.id);
      expect(document.status).toBe('active');
      const byUrl = Object.fromEntries(document.pages.map((page: { url: string }) => [page.url, page]));
      expect(byUrl[url('/')]).toMatchObject({ status: 'fetched', title: 'Home' });
      expect(byUrl[url('/pricing')]).toMatchObject({ status: 'fetched', title: 'Pricing' });
      expect(byUrl[url('/docs/intro')]).toMatchObject({ status: 'fetched' });
      expect(byUrl[url('/private/secret')]).toMatchObject({
        status: 'skipped',
        error: expect.stringMatching(/robots/i),
      });
      expect(site.requests.map((request) => request.path)).not.toContain('/private/secret');
      expect(Object.keys(byUrl).some((url) => url.includes('example.invalid'))).toBe(false);

      const text = await passagesOf(document.id);
      expect(text).toContain('We repair bicycles.');
      expect(text).not.toContain('Copyright footer');

      const search = await stack.http
        .get(`/api/user/knowledgebases/${knowledgebase}/search?query=tune-up`)
        .set(account.auth)
        .expect(200);
      expect(search.body.data[0]).toMatchObject({
        content: expect.stringContaining('forty dollars'),
        source_url: url('/pricing'),
      });
    });

    it('fetches exactly the given links', async () => {
      const knowledgebase = await newKnowledgebase();
      const created = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({
          name: 'Two pages',
          type: 'website',
          links: [{ link: url('/pricing') }, { link: url('/missing') }],
        })
        .expect(201);
      const document = await waitForDocument(stack, account, knowledgebase, created.body.data.id);
      expect(document.status).toBe('active');
      expect(document.pages).toEqual([
        expect.objectContaining({ url: url('/pricing'), status: 'fetched' }),
        expect.objectContaining({ url: url('/missing'), status: 'failed', error: 'HTTP 404' }),
      ]);
    });

    it('validates website fields', async () => {
      const knowledgebase = await newKnowledgebase();
      const neither = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'x', type: 'website' })
        .expect(422);
      expect(neither.body.errors).toEqual({
        url: ['The url field is required when links is not present.'],
        links: ['The links field is required when url is not present.'],
      });
      const bad = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'x'.repeat(256), type: 'website', links: [{ link: 'ftp://x' }, {}], relative_links_limit: 51 })
        .expect(422);
      expect(bad.body.errors).toEqual({
        name: ['The name field must not be greater than 255 characters.'],
        'links.0.link': ['The links.0.link field must be a valid URL.'],
        'links.1.link': ['The links.1.link field is required.'],
        relative_links_limit: ['The relative links limit field must be between 1 and 50.'],
      });
      const type = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'x', type: 'video' })
        .expect(422);
      expect(type.body.errors).toEqual({ type: ['The selected type is invalid.'] });
    });

    it('retries a site that answers 503, then succeeds', async () => {
      let calls = 0;
      routes['/flaky'] = (_request, response) => {
        calls++;
        if (calls <= 2) response.writeHead(503).end('busy');
        else response.writeHead(200, { 'Content-Type': 'text/html' }).end('<p>Finally up and running.</p>');
      };
      const knowledgebase = await newKnowledgebase();
      const created = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'Flaky', type: 'website', url: url('/flaky'), relative_links_limit: 1 })
        .expect(201);
      const document = await waitForDocument(stack, account, knowledgebase, created.body.data.id);
      expect(document.status).toBe('active');
      expect(calls).toBe(3);
    });
  });

  describe('knowledgebase status', () => {
    it('follows its documents: empty, processing, failed, active', async () => {
      const knowledgebase = await newKnowledgebase();
      const status = async () =>
        (await stack.http.get(`/api/user/knowledgebases/${knowledgebase}`).set(account.auth).expect(200)).body.data;
      expect(await status()).toMatchObject({ status: 'empty', documents_count: 0 });

      const slowPage = new HeldPage('<p>Slow but steady.</p>');
      routes['/slow'] = slowPage.handler;
      const slow = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'Slow', type: 'website', url: url('/slow'), relative_links_limit: 1 })
        .expect(201);
      const created = await Promise.all(
        ['one', 'two', 'three'].map((name) =>
          upload(knowledgebase, 'txt', Buffer.from(`Text of ${name}.`), `${name}.txt`).expect(201),
        ),
      );
      const broken = await upload(knowledgebase, 'pdf', PNG_BYTES, 'broken.pdf').expect(201);
      for (const response of [...created, broken])
        await waitForDocument(stack, account, knowledgebase, response.body.data.id);
      expect(await status()).toMatchObject({ status: 'processing', documents_count: 5 });

      slowPage.release();
      await waitForDocument(stack, account, knowledgebase, slow.body.data.id);
      expect(await status()).toMatchObject({ status: 'failed', status_label: 'Failed', documents_count: 5 });

      await stack.http
        .delete(`${documentsPath(knowledgebase)}/${broken.body.data.id}`)
        .set(account.auth)
        .expect(200);
      expect(await status()).toMatchObject({ status: 'active', documents_count: 4 });
    });
  });

  describe('reliability', () => {
    it('leaves nothing behind when a document is deleted while its job runs', async () => {
      const held = new HeldPage('<p>Too late to matter.</p>');
      routes['/held'] = held.handler;
      const knowledgebase = await newKnowledgebase();
      const created = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'Held', type: 'website', url: url('/held'), relative_links_limit: 1 })
        .expect(201);
      const id = created.body.data.id;
      await held.requested();
      await stack.http
        .delete(`${documentsPath(knowledgebase)}/${id}`)
        .set(account.auth)
        .expect(200);
      held.release();
      await waitFor(async () => {
        const job = await stack.api.get(JobQueue).queue(Jobs.processDocument.queue).getJob(`document-${id}`);
        return job && (await job.isCompleted()) ? true : undefined;
      });
      const [left] = await stack.dataSource.query(
        `SELECT (SELECT count(*) FROM passages WHERE document_id = $1)::int AS passages,
                (SELECT count(*) FROM document_pages WHERE document_id = $1)::int AS pages,
                (SELECT count(*) FROM documents WHERE id = $1)::int AS documents`,
        [id],
      );
      expect(left).toEqual({ passages: 0, pages: 0, documents: 0 });
    });

    it('leaves nothing behind when the knowledgebase is deleted while a job runs', async () => {
      const held = new HeldPage('<p>Nobody will read this.</p>');
      routes['/held-kb'] = held.handler;
      const knowledgebase = await newKnowledgebase();
      await upload(knowledgebase, 'txt', Buffer.from('Already processed text.'), 'done.txt').expect(201);
      const created = await stack.http
        .post(documentsPath(knowledgebase))
        .set(account.auth)
        .send({ name: 'Held', type: 'website', url: url('/held-kb'), relative_links_limit: 1 })
        .expect(201);
      await held.requested();
      await stack.http.delete(`/api/user/knowledgebases/${knowledgebase}`).set(account.auth).expect(200);
      held.release();
      await waitFor(async () => {
        const job = await stack.api
          .get(JobQueue)
          .queue(Jobs.processDocument.queue)
          .getJob(`document-${created.body.data.id}`);
        return job && (await job.isCompleted()) ? true : undefined;
      });
      const [left] = await stack.dataSource.query(
        `SELECT (SELECT count(*) FROM passages WHERE knowledgebase_id = $1)::int AS passages,
                (SELECT count(*) FROM documents WHERE knowledgebase_id = $1)::int AS documents,
                (SELECT count(*) FROM knowledgebases WHERE id = $1)::int AS knowledgebases`,
        [knowledgebase],
      );
      expect(left).toEqual({ passages: 0, documents: 0, knowledgebases: 0 });
    });

    it('finishes the job in hand when a worker shuts down', async () => {
      const extra = await createWorkerApp(stack.config);
      await extra.init();
      await stack.worker!.close(); // only the extra worker consumes now
      const held = new HeldPage('<p>Finished during shutdown.</p><a href="/drain-next">Next</a>');
      routes['/drain'] = held.handler;
      routes['/drain-next'] = sendPage('Next', '<p>Fetched after shutdown began.</p>');
      try {
        const knowledgebase = await newKnowledgebase();
        const created = await stack.http
          .post(documentsPath(knowledgebase))
          .set(account.auth)
          .send({ name: 'Drain', type: 'website', url: url('/drain'), relative_links_limit: 2 })
          .expect(201);
        await held.requested();
        const closing = extra.close();
        setTimeout(() => held.release(), 300);
        await closing;
        const response = await stack.http
          .get(`${documentsPath(knowledgebase)}/${created.body.data.id}`)
          .set(account.auth)
          .expect(200);
        expect(response.body.data.status).toBe('active');
        expect(response.body.data.pages.map((item: { status: string }) => item.status)).toEqual(['fetched', 'fetched']);
      } finally {
        held.release();
        stack.worker = await createWorkerApp(stack.config);
        await stack.worker.init();
      }
    });

    it('fails a document the sweeper has already rescued three times', async () => {
      const knowledgebase = await newKnowledgebase();
      const [row] = await stack.dataSource.query(
        `INSERT INTO documents (user_id, knowledgebase_id, name, type, status, sweep_count, updated_at)
         VALUES ($1, $2, 'Poison', 'txt', 'processing', 3, now() - interval '1 hour') RETURNING id`,
        [account.id, knowledgebase],
      );
      await stack.api.get(JobQueue).enqueue(Jobs.sweepStuckDocuments, {});
      const document = await waitForDocument(stack, account, knowledgebase, row.id);
      expect(document).toMatchObject({ status: 'failed', error_message: expect.stringMatching(/did not complete/) });
    });

    it('re-enqueues a document whose job was lost, through the sweeper', async () => {
      const knowledgebase = await newKnowledgebase();
      // A row written by an API that crashed before enqueueing: processing, old, no job.
      const [row] = await stack.dataSource.query(
        `INSERT INTO documents (user_id, knowledgebase_id, name, type, status, updated_at)
         VALUES ($1, $2, 'Orphan', 'txt', 'processing', now() - interval '1 hour') RETURNING id`,
        [account.id, knowledgebase],
      );
      await stack.dataSource.query('INSERT INTO document_files (document_id, content) VALUES ($1, $2)', [
        row.id,
        Buffer.from('Recovered by the sweeper.'),
      ]);
      await stack.api.get(JobQueue).enqueue(Jobs.sweepStuckDocuments, {});
      const document = await waitForDocument(stack, account, knowledgebase, row.id);
      expect(document.status).toBe('active');
      expect(await passagesOf(row.id)).toBe('Recovered by the sweeper.');
    });
  });
});
