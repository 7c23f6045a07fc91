import type { Queue } from 'bullmq';
import { processCpuMs } from '../../bench/support/http-load';
import type { Stack } from './stack';
import type { TestAccount } from './factories';

/**
 * A check whose type lets it answer `false` does not compile: the polls take any value but `undefined` as the answer,
 * so a check built of `a && b && c` would end the wait at the first `false`, its condition unmet. An answer typed
 * `any` is let through.
 */
type NeverFalse<T> = 0 extends 1 & T
  ? unknown
  : false extends T
    ? { 'a check answers undefined until its condition is met, never false': never }
    : unknown;

/** Polls until `check` returns a value (anything but undefined), as a client watching a background job would. */
export async function waitFor<T>(
  check: (() => Promise<T | undefined>) & NeverFalse<T>,
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

/**
 * The outer bound (Jest's timeout) of a test whose waits scale with what they wait for (`waitWhileProgressing`): only
 * a hang reaches it, never a slow machine.
 */
export const UNTIL_STALLED = 30 * 60_000;

/**
 * Polls until `check` returns a value for as long as `progress` keeps changing (rows imported, a process's CPU time
 * while it compiles and boots): a wait that scales with the work and with how loaded the machine is, instead of a
 * fixed deadline a slower run misses. Fails once `progress` has stood still for `stallMs`.
 */
export async function waitWhileProgressing<T>(
  check: (() => Promise<T | undefined>) & NeverFalse<T>,
  progress: () => Promise<unknown> | unknown,
  stallMs: number,
  intervalMs = 200,
): Promise<T> {
  let last = JSON.stringify(await progress());
  let changedAt = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    const now = JSON.stringify(await progress());
    if (now !== last) [last, changedAt] = [now, Date.now()];
    else if (Date.now() - changedAt > stallMs)
      throw new Error(`No progress for ${stallMs} ms (still at ${now}), and the condition is not met`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The CPU time a process has used so far (ms), or `gone`: a process compiling, booting or working advances it. */
export function cpuOf(pid: number): number | 'gone' {
  try {
    return processCpuMs(pid);
  } catch {
    return 'gone';
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

/**
 * Polls until the job has completed, then reads what it returned. The state is read before the job: a job read first
 * and found `completed` by a second call may have been read while still active, its `returnvalue` still null.
 */
export async function waitForJobResult(queue: Queue, jobId: string, timeoutMs?: number): Promise<unknown> {
  await waitFor(async () => ((await queue.getJobState(jobId)) === 'completed' ? true : undefined), timeoutMs);
  return (await queue.getJob(jobId))?.returnvalue;
}
