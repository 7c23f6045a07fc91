/**
 * A CSV of 100,000 leads (a phone number and two variables a row) imported into one campaign through the API and
 * the worker: the time from upload to `completed`. Not a timed test.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/lead-import.ts [rows]
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiClient, startBenchStack } from './support/stack';
import { fixed, nowMs, printTable, runMain } from './support/report';

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 100_000);
  const stack = await startBenchStack();
  try {
    const api = await ApiClient.register(stack.baseUrl);
    const assistantId = await api.createOutboundAssistant();
    const campaign = await api.request(
      'POST',
      '/api/user/campaign',
      { name: 'Import', assistant_id: assistantId },
      201,
    );
    const lines = ['phone_number,first_name,plan'];
    for (let index = 0; index < rows; index++) lines.push(`+1415${String(2000000 + index)},Name ${index},gold`);
    const csv = lines.join('\n') + '\n';
    const form = new FormData();
    form.set('file', new Blob([csv], { type: 'text/csv' }), 'leads.csv');
    const started = nowMs();
    const accepted = await api.request('POST', `/api/user/campaign/${campaign.data.id}/leads/import`, form, 202);
    const uploadMs = nowMs() - started;
    let progress: { status: string; rows_imported: number; rows_failed: number };
    do {
      await sleep(250);
      progress = (await api.request('GET', `/api/user/campaign/${campaign.data.id}/leads/imports/${accepted.data.id}`))
        .data;
    } while (!['completed', 'failed'].includes(progress.status));
    const seconds = (nowMs() - started) / 1000;
    printTable(
      `CSV import of ${rows} leads (${fixed(csv.length / 1024 / 1024)} MiB)`,
      ['status', 'imported', 'failed', 'upload ms', 'upload to completed', 'rows/s'],
      [
        [
          progress.status,
          progress.rows_imported,
          progress.rows_failed,
          fixed(uploadMs, 0),
          `${fixed(seconds)} s`,
          fixed(rows / seconds, 0),
        ],
      ],
    );
    if (progress.status !== 'completed' || progress.rows_imported !== rows) process.exitCode = 1;
  } finally {
    await stack.close();
  }
}

runMain(main);
