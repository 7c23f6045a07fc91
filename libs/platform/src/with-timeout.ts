/**
 * The work's outcome, or a rejection once `milliseconds` have passed without one: an Error with `message` and the
 * code of a connection that timed out (ETIMEDOUT), so that a caller which does not handle it answers 503, as for a
 * dependency that refused. The work itself goes on; only the wait for it ends.
 */
export async function withTimeout<T>(work: Promise<T>, milliseconds: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: 'ETIMEDOUT' })), milliseconds);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
