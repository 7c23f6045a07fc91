/**
 * Peak memory of the built worker processing a ~20 MiB text-dense PDF (the largest upload the API accepts).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/worker-rss.ts [label=root ...]
 *
 * For each build (a checkout root holding `dist/`; without arguments this repository, built first with
 * `npm run build`) and each engine, a fresh database and Redis prefix, the built API and the built worker in their
 * own processes with production settings, as deployed. The PDF is uploaded through the API and polled until the
 * document is active; meanwhile the worker's RSS is sampled every 50 ms from /proc, and its VmHWM (the kernel's
 * high-water mark of the whole process, extraction threads included) is read before it is stopped.
 *   pdfium     the worker's PATH holds only a link to node: pdftotext cannot be found, PDFium (WebAssembly) is used
 *   pdftotext  only when PDFTOTEXT names a pdftotext executable: its directory is added to the worker's PATH
 * The builds run interleaved (round by round) so they see the same machine; BENCH_ROUNDS sets the rounds (1).
 * BENCH_AT_ONCE=N uploads the PDF N times at once (1): the worker takes them up to WORKER_CONCURRENCY (4) at a time.
 * The passages' count and a digest of their text in order, read from the database, show that every build and
 * engine stored the same passages. BENCH_TRACE=1 prints every RSS sample (MiB) on stderr, to see which phase
 * peaks. The PDF is generated once with pdf-lib and cached in bench/.cache/.
 * BENCH_EMBEDDINGS=1 configures search by meaning (the stand-in of OpenAI in this process, answering at once,
 * `text-embedding-3-small` at 512 dimensions): the run then lasts until every passage has its vector, and the
 * figures are those of parsing and embedding.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { FakeOpenAi } from '../test/support/openai.fake';
import { buildRootsFromArguments } from './support/compiled-extraction';
import { cachedPdfOfSize } from './support/pdf-fixtures';
import { processMemoryBytes } from './support/http-load';
import { freePort, productionEnv, ROOT, startServer, waitForHttp, type ServerProcess } from './support/processes';
import { fixed, MIB, nowMs, printTable, runMain } from './support/report';
import { ApiClient, createBenchEnvironment } from './support/stack';

const TARGET_BYTES = 20 * MIB - 4096;
const SAMPLE_INTERVAL_MS = 50;
const DOCUMENT_DEADLINE_MS = 300_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const AT_ONCE = Number(process.env.BENCH_AT_ONCE ?? 1);
const EMBEDDINGS = process.env.BENCH_EMBEDDINGS === '1';

interface Build {
  label: string;
  root: string;
}

interface RunReport {
  idleRssMb: number;
  peakSampledRssMb: number;
  vmHwmMb: number;
  activeAfterMs: number;
  /** Upload to every passage embedded (BENCH_EMBEDDINGS), else null. */
  embeddedAfterMs: number | null;
  contentLength: number;
  passages: number;
  digest: string;
}

function buildsFromArguments(): Build[] {
  const given = buildRootsFromArguments();
  if (given.length > 0) return given;
  const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  return [{ label: 'this checkout', root: ROOT }];
}

async function storedPassages(databaseUrl: string, documentId: number): Promise<{ count: number; digest: string }> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: number; digest: string }>(
      `SELECT count(*)::int AS count, md5(string_agg(content, E'\\x1e' ORDER BY position)) AS digest
         FROM passages WHERE document_id = $1`,
      [documentId],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

/** Passages of the documents still without a vector. */
async function unembedded(databaseUrl: string, documentIds: number[]): Promise<number> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM passages passage
        WHERE passage.document_id = ANY ($1)
          AND NOT EXISTS (SELECT 1 FROM passage_embeddings vector WHERE vector.passage_id = passage.id)`,
      [documentIds],
    );
    return rows[0].count;
  } finally {
    await client.end();
  }
}

async function runOnce(build: Build, workerPath: string, pdf: Buffer): Promise<RunReport> {
  const environment = await createBenchEnvironment();
  const servers: ServerProcess[] = [];
  const provider = EMBEDDINGS ? await FakeOpenAi.start() : undefined;
  try {
    const env = {
      ...productionEnv(environment),
      ...(provider && {
        LLM_BASE_URL: provider.baseUrl,
        LLM_API_KEY: provider.apiKey,
        LLM_MODEL: 'gpt-4o-mini',
        EMBEDDINGS_MODEL: 'text-embedding-3-small',
        EMBEDDINGS_DIMENSIONS: '512',
      }),
    };
    const apiPort = await freePort();
    const workerPort = await freePort();
    const api = startServer([join(build.root, 'dist', 'apps', 'api', 'src', 'main.js')], {
      ...env,
      PORT: String(apiPort),
      // The uploads at once are the worker's to bear here, not the API's budget's to refuse.
      UPLOAD_BUDGET_MB: '4096',
    });
    servers.push(api);
    const worker = startServer([join(build.root, 'dist', 'apps', 'worker', 'src', 'main.js')], {
      ...env,
      WORKER_PORT: String(workerPort),
      PATH: workerPath,
    });
    servers.push(worker);
    const baseUrl = `http://127.0.0.1:${apiPort}`;
    await waitForHttp(`${baseUrl}/api/health`, api.child);
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, worker.child);

    const client = await ApiClient.register(baseUrl);
    const knowledgebaseId = await client.createKnowledgebase('Manuals');
    const pid = worker.child.pid!;
    const idleRss = processMemoryBytes(pid, 'VmRSS') ?? 0;
    let peakRss = idleRss;
    const sampler = setInterval(() => {
      const now = processMemoryBytes(pid, 'VmRSS') ?? 0;
      if (process.env.BENCH_TRACE) process.stderr.write(`${Math.round(now / MIB)} `);
      peakRss = Math.max(peakRss, now);
    }, SAMPLE_INTERVAL_MS);

    try {
      const start = nowMs();
      const upload = async (copy: number) => {
        const form = new FormData();
        form.append('name', `Manual ${copy}`);
        form.append('type', 'pdf');
        form.append('file', new Blob([pdf], { type: 'application/pdf' }), `manual-${copy}.pdf`);
        const { data } = await client.request<{ data: { id: number } }>(
          'POST',
          `/api/user/knowledgebases/${knowledgebaseId}/documents`,
          form,
          201,
        );
        return data.id;
      };
      const ids = await Promise.all(Array.from({ length: AT_ONCE }, (_, copy) => upload(copy + 1)));
      const pending = new Set(ids);
      let contentLength = 0;
      while (pending.size > 0) {
        for (const id of pending) {
          const { data } = await client.request<{
            data: { status: string; error_message: string | null; content_length: number };
          }>('GET', `/api/user/knowledgebases/${knowledgebaseId}/documents/${id}`);
          if (data.status === 'processing') continue;
          if (data.status !== 'active')
            throw new Error(`${build.label}: document ${data.status}: ${data.error_message}`);
          contentLength = data.content_length;
          pending.delete(id);
        }
        if (pending.size === 0) break;
        if (nowMs() - start > DOCUMENT_DEADLINE_MS * AT_ONCE) {
          throw new Error(`${build.label}: ${pending.size} documents still processing`);
        }
        await sleep(250);
      }
      const activeAfterMs = nowMs() - start;
      let embeddedAfterMs: number | null = null;
      if (provider) {
        while ((await unembedded(environment.databaseUrl, ids)) > 0) {
          if (nowMs() - start > DOCUMENT_DEADLINE_MS * 2 * AT_ONCE) throw new Error(`${build.label}: not embedded`);
          await sleep(250);
        }
        embeddedAfterMs = nowMs() - start;
      }
      // Every copy gave the same passages.
      const stored = await Promise.all(ids.map((id) => storedPassages(environment.databaseUrl, id)));
      if (new Set(stored.map((one) => `${one.count}:${one.digest}`)).size !== 1) {
        throw new Error(`${build.label}: the copies were stored differently`);
      }
      return {
        idleRssMb: idleRss / MIB,
        peakSampledRssMb: Math.max(peakRss, processMemoryBytes(pid, 'VmRSS') ?? 0) / MIB,
        vmHwmMb: (processMemoryBytes(pid, 'VmHWM') ?? 0) / MIB,
        activeAfterMs,
        embeddedAfterMs,
        contentLength,
        passages: stored[0].count,
        digest: stored[0].digest,
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    for (const server of servers.reverse()) await server.stop();
    await provider?.close();
    await environment.clean();
  }
}

async function main(): Promise<void> {
  const builds = buildsFromArguments();
  const buildStart = nowMs();
  const pdf = await cachedPdfOfSize(TARGET_BYTES);
  const buildMs = nowMs() - buildStart;

  // A PATH whose only entry holds a link to node: pdftotext cannot be found there.
  const nodeOnly = mkdtempSync(join(tmpdir(), 'va-bench-path-'));
  symlinkSync(process.execPath, join(nodeOnly, 'node'));
  const engines: [string, string][] = [['pdfium', nodeOnly]];
  if (process.env.PDFTOTEXT) engines.push(['pdftotext', `${nodeOnly}:${dirname(resolve(process.env.PDFTOTEXT))}`]);

  const rows: (string | number)[][] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const [engine, path] of engines) {
        for (const build of builds) {
          const report = await runOnce(build, path, pdf.bytes);
          rows.push([
            build.label,
            engine,
            round,
            fixed(report.idleRssMb, 0),
            fixed(report.peakSampledRssMb, 0),
            fixed(report.vmHwmMb, 0),
            fixed((report.vmHwmMb * MIB) / 1e6, 0),
            fixed(report.activeAfterMs / 1000, 1),
            ...(EMBEDDINGS ? [fixed(report.embeddedAfterMs! / 1000, 1)] : []),
            report.contentLength,
            report.passages,
            report.digest.slice(0, 8),
          ]);
        }
      }
    }
  } finally {
    rmSync(nodeOnly, { recursive: true, force: true });
  }

  printTable(
    `Built worker's peak memory, ${AT_ONCE === 1 ? 'one' : `${AT_ONCE} at once of a`} ${fixed(pdf.bytes.length / MIB, 2)} MiB PDF of ${pdf.pages} text-dense pages`,
    [
      'build',
      'engine',
      'round',
      'idle RSS MiB',
      'peak RSS MiB',
      'VmHWM MiB',
      'VmHWM MB',
      AT_ONCE === 1 ? 'upload->active s' : 'uploads->all active s',
      ...(EMBEDDINGS ? ['upload->embedded s'] : []),
      'content_length',
      'passages',
      'digest',
    ],
    rows,
    [
      `idle RSS: the worker booted and waiting, before the upload. Peak RSS: sampled every 50 ms until ${EMBEDDINGS ? 'every passage was embedded (search by meaning on, the provider a stand-in answering at once)' : 'active'}.`,
      "VmHWM: the kernel's high-water mark of the worker process (threads included), read before it is stopped.",
      'digest: md5 of the stored passages in order (first 8 hex digits); equal digests = identical passages.',
      `PDF ${buildMs > 1000 ? `generated in ${fixed(buildMs / 1000, 1)} s` : 'read from bench/.cache/'}.`,
    ],
  );
}

runMain(main);
