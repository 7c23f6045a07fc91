/**
 * Nest drains on SIGTERM/SIGINT (HTTP requests in flight, jobs in hand). This caps the wait, so a stuck job
 * or connection cannot keep a process from exiting; BullMQ hands unfinished jobs to another worker once
 * their lock expires.
 */
export function exitAfterGracePeriod(seconds: number): void {
  const arm = (signal: NodeJS.Signals) => {
    setTimeout(() => {
      console.error(`Shutdown did not finish within ${seconds}s after ${signal}; exiting.`);
      process.exit(1);
    }, seconds * 1000).unref();
  };
  process.once('SIGTERM', arm);
  process.once('SIGINT', arm);
}
