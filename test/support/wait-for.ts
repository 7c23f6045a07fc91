import type { Stack } from './stack';
import type { TestAccount } from './factories';

/** Polls until `check` returns a value, as a client watching a background job would. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Polls the single-document read until the document leaves `processing`; returns its body's `data`. */
export function waitForDocument(
  stack: Stack,
  account: TestAccount,
  knowledgebaseId: number,
  documentId: number,
  timeoutMs?: number,
) {
  return waitFor(async () => {
    const response = await stack.http
      .get(`/api/user/knowledgebases/${knowledgebaseId}/documents/${documentId}`)
      .set(account.auth);
    if (response.status !== 200) throw new Error(`document read answered ${response.status}`);
    return response.body.data.status === 'processing' ? undefined : response.body.data;
  }, timeoutMs);
}
