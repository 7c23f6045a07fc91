/**
 * The API's peak memory under 64 parallel 19 MiB uploads, with uploads bounded by UPLOAD_BUDGET_MB (issue 43, item 2).
 *
 *   npm run bench:uploads                     # builds, then the runs below (about 20 minutes)
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/upload-memory.ts   # from the last build
 *
 * Each run: a fresh database and Redis prefix, the built API (support/processes.ts' startBuiltApi) and one built
 * worker in their own processes with production settings, as deployed; UPLOAD_BUDGET_MB set on the API. An account
 * and a knowledgebase are created, then 64 clients at once each upload their own 19 MiB TXT file
 * (`POST /api/user/knowledgebases/{id}/documents`, multipart: name, type=txt, file) and, answered 503, wait the
 * Retry-After it gives and send it again, until it is accepted (201). Any other answer fails the run. The clients
 * use node:http and read an answer that comes before their body is sent (see `post`). The API's VmRSS is read from
 * /proc every 50 ms from before the first upload to the end of the run, its VmHWM (the kernel's high-water mark of
 * the whole process since it started) at the end. Once all are accepted, the knowledgebase's list is polled until
 * no document is processing, each document is read (GET) and its passages counted in the database: every accepted
 * upload must be `active`, one document per client and no other, each with the same content_length and passages
 * as the others (the files differ only in their client's number) and no passage without its own client's number.
 *
 * The runs, in turn (BENCH_BUDGETS, comma-separated MiB; default "48,4096,48,4096,24,96"): the default budget and
 * 4096 MiB (no bound in practice: every upload is read at once, the reference) alternately, then 24 and 96 for the
 * trade-off between peak and time to accept. BENCH_UPLOADS (64) and BENCH_FILE_MIB (19) change the load;
 * BENCH_PROCESS=0 skips waiting for the documents to be processed (the worker still runs); BENCH_TRACE=1 prints
 * every RSS sample (MiB) on stderr. A run gives up after BENCH_RUN_DEADLINE_S (1800) s; the whole command after
 * that times the runs plus 60 s, stopping everything through the interrupt clean-ups (support/report.ts).
 */
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { busyBetween, machineTicks, processMemoryBytes } from './support/http-load';
import { freePort, productionEnv, startBuiltApi, startServer, waitForHttp, WORKER_ENTRY } from './support/processes';
import { fixed, MIB, nowMs, printTable, runMain } from './support/report';
import { ApiClient } from './support/stack';

const UPLOADS = Number(process.env.BENCH_UPLOADS ?? 64);
const FILE_BYTES = Number(process.env.BENCH_FILE_MIB ?? 19) * MIB;
const BUDGETS = (process.env.BENCH_BUDGETS ?? '48,4096,48,4096,24,96').split(',').map(Number);
const WAIT_FOR_PROCESSING = process.env.BENCH_PROCESS !== '0';
const RUN_DEADLINE_MS = Number(process.env.BENCH_RUN_DEADLINE_S ?? 1800) * 1000;
const SAMPLE_INTERVAL_MS = 50;
const REQUEST_TIMEOUT_MS = 300_000;
const LIST_POLL_MS = 1000;
/** How long a client waits after its connection was reset before any answer could be read (the 503's Retry-After). */
const RESET_RETRY_MS = 2000;

interface RunReport {
  budgetMib: number;
  baselineRssMib: number;
  peakUploadingRssMib: number;
  peakSampledRssMib: number;
  vmHwmMib: number;
  accepted: number;
  refused: number;
  resets: number;
  attemptsMax: number;
  acceptedAfterS: number;
  createP50S: number;
  createMaxS: number;
  activeAfterS: number | undefined;
  documents: number;
  active: number;
  passages: number | undefined;
  loadBefore: string;
  loadAfter: string;
  machineBusy: number;
}

function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Client `index`'s file: ~1 KB paragraphs of sentences naming it, repeated to FILE_BYTES; the same length for all. */
function fileOf(index: number): Buffer {
  const tag = String(index).padStart(2, '0');
  const sentence = `Client ${tag} uploads this sentence of plain words, number ${tag} of the run. `;
  const paragraph = `${sentence.repeat(14)}\n\n`;
  return Buffer.alloc(FILE_BYTES, paragraph, 'utf8');
}

interface ClientOutcome {
  id: number;
  attempts: number;
  acceptedAtMs: number;
  createMs: number;
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

const BOUNDARY = 'upload-memory-boundary';
const agent = new Agent({ keepAlive: true });

/** The multipart body around client `tag`'s file: its name and type fields, then the file part's head; the end. */
function multipartParts(tag: string): { head: Buffer; tail: Buffer } {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="name"\r\n\r\nupload-${tag}\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="type"\r\n\r\ntxt\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="upload-${tag}.txt"\r\n` +
      'Content-Type: text/plain\r\n\r\n',
  );
  return { head, tail: Buffer.from(`\r\n--${BOUNDARY}--\r\n`) };
}

/**
 * One multipart upload through node:http, its file written in 1 MiB slices; an answer that comes before the body is
 * all sent (a 503 refuses the upload before reading it) stops the writing and is read as any other, so a refused
 * client sends no more than it must. (Node's fetch reads that answer too, but only once it has sent its whole body.)
 */
function post(url: URL, token: string, tag: string, file: Buffer): Promise<Answer> {
  const { head, tail } = multipartParts(tag);
  return new Promise<Answer>((resolve, reject) => {
    let answered = false;
    const request = httpRequest(url, {
      method: 'POST',
      agent,
      timeout: REQUEST_TIMEOUT_MS,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': head.length + file.length + tail.length,
      },
    });
    request.on('timeout', () => request.destroy(new Error(`upload ${tag}: no answer within the timeout`)));
    // A write failing once the answer has come (the server ended the connection after it) is no news.
    request.on('error', (error) => answered || reject(error));
    request.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const retryAfter = response.headers['retry-after'];
        resolve({ status: response.statusCode ?? 0, retryAfter, body: Buffer.concat(chunks).toString() });
        if (!request.writableFinished) request.destroy();
      });
    });
    const slices: Buffer[] = [head];
    for (let offset = 0; offset < file.length; offset += MIB) slices.push(file.subarray(offset, offset + MIB));
    slices.push(tail);
    const writeOn = () => {
      while (!answered && !request.destroyed) {
        const slice = slices.shift();
        if (!slice) return void request.end();
        if (!request.write(slice)) return void request.once('drain', writeOn);
      }
    };
    writeOn();
  });
}

/** Uploads client `index`'s file until it is accepted; each 503 waits the Retry-After it gives. */
async function uploadUntilAccepted(
  client: ApiClient,
  knowledgebaseId: number,
  index: number,
  file: Buffer,
  start: number,
  deadline: number,
  tally: { refused: number; resets: number },
): Promise<ClientOutcome> {
  const tag = String(index).padStart(2, '0');
  const url = new URL(`${client.baseUrl}/api/user/knowledgebases/${knowledgebaseId}/documents`);
  for (let attempts = 1; ; attempts++) {
    const sent = nowMs();
    let answer: Answer;
    try {
      answer = await post(url, client.token, tag, file);
    } catch (error) {
      // The connection ended before an answer could be read: counted, and tried again as after a 503.
      if (!['EPIPE', 'ECONNRESET'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      tally.resets++;
      if (nowMs() + RESET_RETRY_MS > deadline)
        throw new Error(`upload ${tag} not accepted before the deadline`, { cause: error });
      await sleep(RESET_RETRY_MS);
      continue;
    }
    if (answer.status === 201) {
      const { data } = JSON.parse(answer.body) as { data: { id: number } };
      return { id: data.id, attempts, acceptedAtMs: nowMs() - start, createMs: nowMs() - sent };
    }
    if (answer.status !== 503) throw new Error(`upload ${tag} answered ${answer.status}: ${answer.body}`);
    tally.refused++;
    const retryAfter = Number(answer.retryAfter);
    if (!Number.isFinite(retryAfter) || retryAfter <= 0) throw new Error(`upload ${tag}: 503 without Retry-After`);
    if (nowMs() + retryAfter * 1000 > deadline) throw new Error(`upload ${tag} not accepted before the deadline`);
    await sleep(retryAfter * 1000);
  }
}

async function passagesByDocument(databaseUrl: string): Promise<Map<number, { passages: number; withoutTag: number }>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: number; passages: number; without_tag: number }>(
      `SELECT d.id, count(p.id)::int AS passages,
              count(p.id) FILTER (WHERE strpos(p.content, 'Client ' || right(d.name, 2) || ' ') = 0)::int AS without_tag
         FROM documents d LEFT JOIN passages p ON p.document_id = d.id
        GROUP BY d.id`,
    );
    return new Map(rows.map((row) => [row.id, { passages: row.passages, withoutTag: row.without_tag }]));
  } finally {
    await client.end();
  }
}

async function runOnce(budgetMib: number, files: Buffer[]): Promise<RunReport> {
  const runStart = nowMs();
  const deadline = runStart + RUN_DEADLINE_MS;
  const loadBefore = loadAverage();
  const api = await startBuiltApi({ UPLOAD_BUDGET_MB: String(budgetMib) });
  let worker: ReturnType<typeof startServer> | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const workerPort = await freePort();
    worker = startServer([WORKER_ENTRY], {
      ...productionEnv({ name: api.queuePrefix, databaseUrl: api.databaseUrl, redisUrl: api.redisUrl }),
      WORKER_PORT: String(workerPort),
    });
    await waitForHttp(`http://127.0.0.1:${workerPort}/api/health`, worker.child);
    const client = await ApiClient.register(api.baseUrl);
    const knowledgebaseId = await client.createKnowledgebase('Uploads');

    const pid = api.process.child.pid!;
    const baseline = processMemoryBytes(pid, 'VmRSS')!;
    let peak = baseline;
    const start = nowMs();
    sampler = setInterval(() => {
      const now = processMemoryBytes(pid, 'VmRSS') ?? 0;
      if (process.env.BENCH_TRACE) process.stderr.write(`${Math.round(now / MIB)} `);
      peak = Math.max(peak, now);
    }, SAMPLE_INTERVAL_MS);
    const ticksBefore = machineTicks();

    const tally = { refused: 0, resets: 0 };
    const outcomes = await Promise.all(
      files.map((file, index) => uploadUntilAccepted(client, knowledgebaseId, index, file, start, deadline, tally)),
    );
    const ticksAfter = machineTicks();
    const peakWhileUploading = peak;
    const acceptedAfterS = Math.max(...outcomes.map((outcome) => outcome.acceptedAtMs)) / 1000;
    const createTimes = outcomes.map((outcome) => outcome.createMs / 1000).sort((a, b) => a - b);

    // Nothing lost, nothing extra: one document per client, each named for it, no document from a refused upload.
    const ids = new Set(outcomes.map((outcome) => outcome.id));
    if (ids.size !== UPLOADS) throw new Error(`${ids.size} distinct documents for ${UPLOADS} uploads`);
    type Listed = { id: number; name: string; status: string };
    const list = async () =>
      (await client.request<{ data: Listed[] }>('GET', `/api/user/knowledgebases/${knowledgebaseId}/documents`)).data;
    let listed = await list();
    if (listed.length !== UPLOADS || !listed.every((document) => ids.has(document.id)))
      throw new Error(`the knowledgebase holds ${listed.length} documents, not the ${UPLOADS} accepted`);

    let activeAfterS: number | undefined;
    let active = 0;
    let passages: number | undefined;
    if (WAIT_FOR_PROCESSING) {
      while (listed.some((document) => document.status === 'processing')) {
        if (nowMs() > deadline) {
          const waiting = listed.filter((document) => document.status === 'processing').length;
          throw new Error(`${waiting} documents still processing at the run's deadline`);
        }
        await sleep(LIST_POLL_MS);
        listed = await list();
      }
      activeAfterS = (nowMs() - start) / 1000;
      const stored = await passagesByDocument(api.databaseUrl);
      const lengths = new Set<number>();
      const counts = new Set<number>();
      for (const { id } of listed) {
        const { data } = await client.request<{
          data: { name: string; status: string; error_message: string | null; content_length: number };
        }>('GET', `/api/user/knowledgebases/${knowledgebaseId}/documents/${id}`);
        if (data.status !== 'active') throw new Error(`document ${data.name} ${data.status}: ${data.error_message}`);
        const own = stored.get(id);
        if (!own || own.passages === 0) throw new Error(`document ${data.name} has no passages`);
        if (own.withoutTag !== 0) throw new Error(`document ${data.name}: ${own.withoutTag} passages of another file`);
        lengths.add(data.content_length);
        counts.add(own.passages);
        active++;
      }
      if (lengths.size !== 1 || counts.size !== 1)
        throw new Error(`documents differ: content_length ${[...lengths]}, passages ${[...counts]}`);
      passages = [...counts][0];
    }
    clearInterval(sampler);
    sampler = undefined;
    if (process.env.BENCH_TRACE) process.stderr.write('\n');
    return {
      budgetMib,
      baselineRssMib: baseline / MIB,
      peakUploadingRssMib: peakWhileUploading / MIB,
      peakSampledRssMib: Math.max(peak, processMemoryBytes(pid, 'VmRSS') ?? 0) / MIB,
      vmHwmMib: (processMemoryBytes(pid, 'VmHWM') ?? 0) / MIB,
      accepted: outcomes.length,
      refused: tally.refused,
      resets: tally.resets,
      attemptsMax: Math.max(...outcomes.map((outcome) => outcome.attempts)),
      acceptedAfterS,
      createP50S: createTimes[Math.floor((createTimes.length - 1) / 2)],
      createMaxS: createTimes[createTimes.length - 1],
      activeAfterS,
      documents: listed.length,
      active,
      passages,
      loadBefore,
      loadAfter: loadAverage(),
      machineBusy: busyBetween(ticksBefore, ticksAfter),
    };
  } finally {
    if (sampler) clearInterval(sampler);
    await worker?.stop();
    await api.close();
  }
}

async function main(): Promise<void> {
  // Past every run's own deadline, the interrupt clean-ups stop the processes and drop the databases.
  const watchdog = setTimeout(
    () => {
      console.error('upload-memory: the command ran past its deadline');
      process.kill(process.pid, 'SIGTERM');
    },
    BUDGETS.length * RUN_DEADLINE_MS + 60_000,
  );
  watchdog.unref();
  const files = Array.from({ length: UPLOADS }, (_, index) => fileOf(index));
  const { head, tail } = multipartParts('00');
  const contentLength = head.length + FILE_BYTES + tail.length;
  const rows: (string | number)[][] = [];
  const started = new Date().toISOString();
  for (const budget of BUDGETS) {
    const report = await runOnce(budget, files);
    const row = [
      budget,
      Math.min(UPLOADS, Math.floor((budget * MIB) / contentLength)),
      fixed(report.baselineRssMib, 0),
      fixed(report.peakUploadingRssMib, 0),
      fixed(report.peakSampledRssMib, 0),
      fixed(report.vmHwmMib, 0),
      fixed((report.vmHwmMib * MIB) / 1e6, 0),
      report.accepted,
      report.refused,
      report.resets,
      report.attemptsMax,
      fixed(report.acceptedAfterS, 1),
      `${fixed(report.createP50S, 2)} / ${fixed(report.createMaxS, 2)}`,
      report.activeAfterS === undefined ? '-' : fixed(report.activeAfterS, 0),
      report.activeAfterS === undefined ? '-' : `${report.active}/${report.documents}, ${report.passages} each`,
      `${report.loadBefore} -> ${report.loadAfter}`,
      `${fixed(report.machineBusy * 100, 0)}%`,
    ];
    rows.push(row);
    console.error(row.join(' | '));
  }
  clearTimeout(watchdog);
  printTable(
    `The API's memory under ${UPLOADS} parallel ${fixed(FILE_BYTES / MIB, 0)} MiB TXT uploads (started ${started})`,
    [
      'budget MiB',
      'in flight',
      'baseline RSS MiB',
      'peak RSS MiB, uploads',
      'peak RSS MiB, run',
      'VmHWM MiB',
      'VmHWM MB',
      '201',
      '503',
      'reset',
      'most tries',
      'all accepted s',
      'create p50 / max s',
      'all active s',
      'active, passages',
      'load avg before -> after',
      'machine busy',
    ],
    rows,
    [
      'in flight: the most uploads the budget admits at once (each reserves its Content-Length, about the file).',
      'baseline RSS: the API booted, account and knowledgebase created, before the first upload.',
      'peak RSS: sampled every 50 ms, until all were accepted (uploads) and until all were read back (run).',
      "VmHWM: the kernel's high-water mark of the API process since it started, read at the end of the run.",
      '503: answers read; reset: the connection reset before its 503 could be read (retried after 2 s too).',
      'all accepted s: from the first upload to the last 201; create: one accepted request, sent to answered.',
      'all active s: from the first upload until the list shows none processing (one worker).',
      'machine busy: both cores, other work included, while the uploads were sent.',
    ],
  );
}

runMain(main);
