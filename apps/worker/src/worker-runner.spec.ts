import { EventEmitter } from 'node:events';
import {
  allJobs,
  handle,
  type JobHandler,
  JobProcessor,
  type JobQueue,
  Jobs,
  QueueBackend,
  Queues,
  type QueueName,
} from '@app/jobs';
import { type AppConfig } from '@app/config';
import type { JobMetrics } from './job-metrics';
import { WorkerRunner } from './worker-runner';

class FakeProcessor extends JobProcessor {
  constructor(
    readonly queueName: QueueName,
    protected readonly handlers: JobHandler[],
  ) {
    super();
  }
}

const idle = async () => undefined;
const handlersOf = (queue: QueueName): JobHandler[] =>
  allJobs()
    .filter((definition) => definition.queue === queue)
    .map((definition) => handle(definition, idle));
const everyQueue = () => Object.values(Queues).map((queue) => new FakeProcessor(queue, handlersOf(queue)));

describe('WorkerRunner', () => {
  const config = { workerConcurrency: 2 } as AppConfig;
  const metrics = {} as JobMetrics;
  const backend = new QueueBackend(config);
  const jobs = {} as JobQueue;

  it('refuses to boot when a declared job has no handler, naming it', () => {
    const runner = new WorkerRunner(
      config,
      [new FakeProcessor(Queues.maintenance, handlersOf(Queues.maintenance))],
      metrics,
      backend,
      jobs,
    );
    expect(() => runner.onModuleInit()).toThrow(`documents/${Jobs.processDocument.name}`);
  });

  it('boots when every declared job is handled', () => {
    const runner = new WorkerRunner(config, everyQueue(), metrics, backend, jobs);
    expect(() => runner.onModuleInit()).not.toThrow();
  });

  it('refuses to boot when a job is handled twice, or on another queue’s processor', () => {
    const twice = new WorkerRunner(
      config,
      [...everyQueue(), new FakeProcessor(Queues.dialer, [handle(Jobs.placeCall, idle)])],
      metrics,
      backend,
      jobs,
    );
    expect(() => twice.onModuleInit()).toThrow(`dialer/${Jobs.placeCall.name} is handled 2 times`);
    const elsewhere = new WorkerRunner(
      config,
      [...everyQueue(), new FakeProcessor(Queues.calls, [handle(Jobs.processDocument, idle)])],
      metrics,
      backend,
      jobs,
    );
    expect(() => elsewhere.onModuleInit()).toThrow(
      `documents/${Jobs.processDocument.name} is handled on the calls queue's processor`,
    );
  });

  describe('a worker idle beside waiting jobs', () => {
    /**
     * Workers that only say what is done to them (`run` hands one a job as BullMQ would), a queue whose waiting count
     * the test sets, and a dial that lasts until the test lets it end.
     */
    function fakes() {
      const started: (EventEmitter & { closed: boolean; run: (job: unknown) => Promise<unknown> })[] = [];
      const fakeBackend = {
        createWorker: (_queue: string, process: (job: unknown) => Promise<unknown>) => {
          const worker = Object.assign(new EventEmitter(), {
            closed: false,
            run: process,
            waitUntilReady: async () => undefined,
            close: async () => void (worker.closed = true),
          });
          started.push(worker);
          return worker;
        },
      } as unknown as QueueBackend;
      const counts = { waiting: 0 };
      const fakeJobs = { queue: () => ({ getJobCounts: async () => counts }) } as unknown as JobQueue;
      const restarts: string[] = [];
      const fakeMetrics = {
        workerRestarted: (queue: string) => restarts.push(queue),
        started: () => undefined,
        finishedAttempt: () => undefined,
      } as unknown as JobMetrics;
      let endDial = () => undefined as void;
      const dialing = new Promise<void>((resolve) => (endDial = resolve));
      const handlers = handlersOf(Queues.dialer).filter((handler) => handler.definition !== Jobs.placeCall);
      handlers.push(handle(Jobs.placeCall, () => dialing));
      const runner = new WorkerRunner(
        config,
        [new FakeProcessor(Queues.dialer, handlers)],
        fakeMetrics,
        fakeBackend,
        fakeJobs,
      );
      return { runner, started, counts, restarts, endDial };
    }
    const jobOf = (name: string) => ({ name, id: '1', data: {}, attemptsMade: 0, opts: {} });
    // The checks' clock: the system time is set by the test, no timer runs by itself.
    const t0 = Date.parse('2026-11-27T12:00:00Z');
    const at = (ms: number) => jest.setSystemTime(t0 + ms);
    beforeEach(() => {
      jest.useFakeTimers({ now: t0 });
    });
    afterEach(() => jest.useRealTimers());

    it('is replaced once every check for 30 s found it idle with jobs waiting', async () => {
      const { runner, started, counts, restarts } = fakes();
      await runner.onApplicationBootstrap();
      counts.waiting = 6;
      at(1_000);
      await runner.watch();
      at(21_000);
      await runner.watch();
      expect(started).toHaveLength(1);
      at(31_000);
      await runner.watch();
      expect(started).toHaveLength(2);
      expect(started[0].closed).toBe(true);
      expect(restarts).toEqual([Queues.dialer]);
      // The new worker gets its own 30 s.
      at(41_000);
      await runner.watch();
      expect(started).toHaveLength(2);
      await runner.beforeApplicationShutdown();
      expect(started[1].closed).toBe(true);
    });

    it('is left alone while it takes jobs, holds one, or nothing waits', async () => {
      const { runner, started, counts, endDial } = fakes();
      await runner.onApplicationBootstrap();
      // Nothing waits.
      at(0);
      await runner.watch();
      at(60_000);
      await runner.watch();
      // Jobs wait, but it started one in between: the count starts again.
      counts.waiting = 6;
      at(60_000);
      await runner.watch();
      at(61_000);
      await started[0].run(jobOf(Jobs.dialCampaign.name));
      at(95_000);
      await runner.watch();
      // A job in hand: not idle, however long, even if BullMQ never reports its end.
      const dial = started[0].run(jobOf(Jobs.placeCall.name));
      at(200_000);
      await runner.watch();
      at(300_000);
      await runner.watch();
      expect(started).toHaveLength(1);
      endDial();
      await dial;
      await runner.beforeApplicationShutdown();
    });
  });
});
