/**
 * Create -> active latency of a one-page TXT document through the real API and worker.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/document-latency.ts
 *
 * Boots the API and the worker in this process (as the e2e tests do) against a fresh database and Redis prefix,
 * registers an account and creates a knowledgebase over HTTP, then:
 *   sequential  3 warm-up uploads, then 50 uploads one after another; each is polled through
 *               GET /api/user/knowledgebases/{id}/documents/{documentId} every 10 ms until it is active.
 *   concurrent  60 uploads with 20 in flight at a time; one poller lists the knowledgebase's documents
 *               every 10 ms (per-document polling at 20 in flight would load the API more than the uploads do).
 * Reports p50/p95/max of create -> active (from sending the upload to first seeing `active`) and of the
 * create request alone.
 *
 * The worker's extraction threads start from compiled JavaScript (a transpiled copy of libs/extraction in
 * bench/.cache/), as in a deployed worker; BENCH_EXTRACTION=ts-node starts them from the TypeScript sources
 * through ts-node instead, as the e2e tests do (about 0.3 s more per document).
 */
// First, so the worker booted below starts its extraction threads from compiled JavaScript.
import { extractionThreadFrom } from './support/compiled-thread-hook';
import { setTimeout as sleep } from 'node:timers/promises';
import { fixed, nowMs, percentile, printTable, runMain } from './support/report';
import { ApiClient, startBenchStack } from './support/stack';
import { DOCUMENT_DEADLINE_MS, POLL_INTERVAL_MS, sequential, upload, type Sample } from './support/txt-documents';

const SEQUENTIAL_COUNT = 50;
const WARM_UP_COUNT = 3;
const CONCURRENT_COUNT = 60;
const IN_FLIGHT = 20;

async function concurrent(client: ApiClient, knowledgebaseId: number): Promise<{ samples: Sample[]; wallMs: number }> {
  const pending = new Map<number, { start: number; done: (at: number) => void; fail: (error: Error) => void }>();
  const samples: Sample[] = [];
  let next = 0;
  let finished = false;
  const deadline = nowMs() + 4 * DOCUMENT_DEADLINE_MS;

  const poller = (async () => {
    while (!finished) {
      if (pending.size > 0) {
        const { data } = await client.request<{ data: { id: number; status: string }[] }>(
          'GET',
          `/api/user/knowledgebases/${knowledgebaseId}/documents`,
        );
        const seenAt = nowMs();
        for (const document of data) {
          const waiter = pending.get(document.id);
          if (!waiter || document.status === 'processing') continue;
          pending.delete(document.id);
          if (document.status === 'active') waiter.done(seenAt);
          else waiter.fail(new Error(`document ${document.id} ${document.status}`));
        }
        if (seenAt > deadline) throw new Error('concurrent run exceeded its deadline');
      }
      await sleep(POLL_INTERVAL_MS);
    }
  })();

  const slot = async () => {
    while (next < CONCURRENT_COUNT) {
      const seed = 5000 + next++;
      const start = nowMs();
      const id = await upload(client, knowledgebaseId, seed);
      const created = nowMs();
      const activeAt = await new Promise<number>((done, fail) => pending.set(id, { start, done, fail }));
      samples.push({ createMs: created - start, activeMs: activeAt - start });
    }
  };

  const start = nowMs();
  try {
    await Promise.race([Promise.all(Array.from({ length: IN_FLIGHT }, slot)), poller]);
  } finally {
    finished = true;
  }
  const wallMs = nowMs() - start;
  await poller;
  return { samples, wallMs };
}

function row(label: string, values: number[]): (string | number)[] {
  return [
    label,
    values.length,
    fixed(percentile(values, 50)),
    fixed(percentile(values, 95)),
    fixed(Math.max(...values)),
  ];
}

async function main(): Promise<void> {
  const bootStart = nowMs();
  const stack = await startBenchStack();
  const bootMs = nowMs() - bootStart;
  try {
    const client = await ApiClient.register(stack.baseUrl);

    const warmUpKnowledgebase = await client.createKnowledgebase('Warm-up');
    await sequential(client, warmUpKnowledgebase, WARM_UP_COUNT);

    const sequentialKnowledgebase = await client.createKnowledgebase('Sequential');
    const sequentialStart = nowMs();
    const one = await sequential(client, sequentialKnowledgebase, SEQUENTIAL_COUNT);
    const sequentialMs = nowMs() - sequentialStart;

    const concurrentKnowledgebase = await client.createKnowledgebase('Concurrent');
    const many = await concurrent(client, concurrentKnowledgebase);

    printTable(
      'One-page TXT (3.3 KB): create -> active, ms',
      ['measure', 'n', 'p50', 'p95', 'max'],
      [
        row(
          'sequential: create -> active',
          one.map((sample) => sample.activeMs),
        ),
        row(
          'sequential: create request',
          one.map((sample) => sample.createMs),
        ),
        row(
          `${IN_FLIGHT} in flight: create -> active`,
          many.samples.map((sample) => sample.activeMs),
        ),
        row(
          `${IN_FLIGHT} in flight: create request`,
          many.samples.map((sample) => sample.createMs),
        ),
      ],
      [
        `Sequential: ${SEQUENTIAL_COUNT} documents in ${fixed(sequentialMs / 1000, 1)} s ` +
          `(${fixed(SEQUENTIAL_COUNT / (sequentialMs / 1000), 1)} documents/s), after ${WARM_UP_COUNT} warm-up uploads.`,
        `${IN_FLIGHT} in flight: ${CONCURRENT_COUNT} documents in ${fixed(many.wallMs / 1000, 1)} s ` +
          `(${fixed(CONCURRENT_COUNT / (many.wallMs / 1000), 1)} documents/s), WORKER_CONCURRENCY=${stack.config.workerConcurrency}.`,
        `Extraction threads started from ${extractionThreadFrom}. ` +
          `Polling every ${POLL_INTERVAL_MS} ms adds up to ~${POLL_INTERVAL_MS} ms plus one read to each create -> active figure. ` +
          `Stack boot (database created and migrated, API and worker started): ${fixed(bootMs / 1000, 1)} s.`,
      ],
    );
  } finally {
    await stack.close();
  }
}

runMain(main);
