import { setTimeout as sleep } from 'node:timers/promises';
import { TextSource } from './pdf-fixtures';
import { nowMs } from './report';
import type { ApiClient } from './stack';

export const POLL_INTERVAL_MS = 10;
export const DOCUMENT_DEADLINE_MS = 60_000;

/** About one printed page: 45 lines of prose, ~3.3 KB. */
export function onePageText(seed: number): Buffer {
  const source = new TextSource(seed);
  return Buffer.from(Array.from({ length: 45 }, () => source.line(72)).join('\n') + '\n', 'utf8');
}

export interface Sample {
  createMs: number;
  activeMs: number;
}

export async function upload(client: ApiClient, knowledgebaseId: number, seed: number): Promise<number> {
  const form = new FormData();
  form.append('name', `page-${seed}.txt`);
  form.append('type', 'txt');
  form.append('file', new Blob([onePageText(seed)], { type: 'text/plain' }), `page-${seed}.txt`);
  const body = await client.request<{ data: { id: number } }>(
    'POST',
    `/api/user/knowledgebases/${knowledgebaseId}/documents`,
    form,
    201,
  );
  return body.data.id;
}

export async function sequential(client: ApiClient, knowledgebaseId: number, count: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let index = 0; index < count; index++) {
    const start = nowMs();
    const id = await upload(client, knowledgebaseId, 1000 + index);
    const created = nowMs();
    for (;;) {
      const { data } = await client.request<{ data: { status: string; error_message: string | null } }>(
        'GET',
        `/api/user/knowledgebases/${knowledgebaseId}/documents/${id}`,
      );
      if (data.status === 'active') break;
      if (data.status !== 'processing') throw new Error(`document ${id} ${data.status}: ${data.error_message}`);
      if (nowMs() - start > DOCUMENT_DEADLINE_MS) throw new Error(`document ${id} still processing`);
      await sleep(POLL_INTERVAL_MS);
    }
    samples.push({ createMs: created - start, activeMs: nowMs() - start });
  }
  return samples;
}
