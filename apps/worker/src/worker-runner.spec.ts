import { EventEmitter } from 'node:events';
import { Injectable, Scope, type Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  allJobs,
  type CallJob,
  type DocumentJob,
  FailureReasons,
  HandlesJob,
  jobFailed,
  JobQueue,
  Jobs,
  QueueBackend,
  Queues,
} from '@app/jobs';
import { AppConfig } from '@app/config';
import { JobMetrics } from './job-metrics';
import { WorkerRunner } from './worker-runner';

/** A service with a method that does nothing for each declared job but those left out. */
function handlingEvery(...leftOut: object[]): Type {
  class EveryJob {}
  for (const definition of allJobs().filter((job) => !leftOut.includes(job))) {
    const descriptor = { value: async () => undefined, writable: true, configurable: true };
    Object.defineProperty(EveryJob.prototype, definition.name, descriptor);
    HandlesJob(definition)(EveryJob.prototype, definition.name, descriptor);
  }
  return Injectable()(EveryJob) ?? EveryJob;
}

/** A fake BullMQ worker: what is done to it, and `run`, which hands it a job as BullMQ would. */
type FakeWorker = EventEmitter & { queue: string; closed: boolean; run: (job: unknown) => Promise<unknown> };

/** The runner in a Nest module with these providers, over a queue backend whose workers only record what they get. */
async function runnerWith(providers: Type[], waiting: (queue: string) => number = () => 0) {
  const started: FakeWorker[] = [];
  const backend = {
    createWorker: (queue: string, process: (job: unknown) => Promise<unknown>) => {
      const worker: FakeWorker = Object.assign(new EventEmitter(), {
        queue,
        closed: false,
        run: process,
        waitUntilReady: async () => undefined,
        close: async () => void (worker.closed = true),
      });
      started.push(worker);
      return worker;
    },
  };
  const jobs = { queue: (queue: string) => ({ getJobCounts: async () => ({ waiting: waiting(queue) }) }) };
  const restarts: string[] = [];
  const metrics = {
    workerRestarted: (queue: string) => restarts.push(queue),
    started: () => undefined,
    finishedAttempt: () => undefined,
  };
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      ...providers,
      WorkerRunner,
      { provide: AppConfig, useValue: { workerConcurrency: 2 } },
      { provide: JobMetrics, useValue: metrics },
      { provide: QueueBackend, useValue: backend },
      { provide: JobQueue, useValue: jobs },
    ],
  }).compile();
  return { runner: moduleRef.get(WorkerRunner), started, restarts };
}

const jobOf = (name: string, data: object = {}) => ({ name, id: '1', data, attemptsMade: 0, opts: {} });

@Injectable()
class Dialling {
  @HandlesJob(Jobs.placeCall)
  async place(): Promise<void> {}
}

@Injectable({ scope: Scope.REQUEST })
class DiallingPerRequest {
  @HandlesJob(Jobs.placeCall)
  async place(): Promise<void> {}
}

describe('WorkerRunner', () => {
  it('refuses to boot when a declared job has no handler, naming it', async () => {
    const { runner } = await runnerWith([handlingEvery(Jobs.processDocument)]);
    expect(() => runner.onModuleInit()).toThrow(
      `The worker cannot run the declared jobs: no method handles documents/${Jobs.processDocument.name}`,
    );
  });

  it('boots when every declared job is handled, with one worker a queue', async () => {
    const { runner, started } = await runnerWith([handlingEvery(Jobs.placeCall), Dialling]);
    runner.onModuleInit();
    await runner.onApplicationBootstrap();
    expect(started.map((worker) => worker.queue)).toEqual(Object.values(Queues));
    await runner.beforeApplicationShutdown();
  });

  it('refuses to boot when a job is handled twice, naming both handlers', async () => {
    const { runner } = await runnerWith([handlingEvery(), Dialling]);
    expect(() => runner.onModuleInit()).toThrow(
      `dialer/${Jobs.placeCall.name} is handled 2 times (EveryJob.${Jobs.placeCall.name}, Dialling.place)`,
    );
  });

  it('refuses to boot when a handler is on a request-scoped provider, which no job would reach', async () => {
    const { runner } = await runnerWith([handlingEvery(Jobs.placeCall), DiallingPerRequest]);
    expect(() => runner.onModuleInit()).toThrow(
      `DiallingPerRequest.place handles dialer/${Jobs.placeCall.name} on a request-scoped or transient provider; ` +
        `no method handles dialer/${Jobs.placeCall.name}`,
    );
  });

  it('hands a job its payload, and ends a recorded failure failed without retries', async () => {
    const payloads: unknown[] = [];
    @Injectable()
    class Importing {
      @HandlesJob(Jobs.importLeads)
      async run(payload: { importId: number }) {
        payloads.push(payload);
        return payload.importId === 1 ? { status: 'failed' } : jobFailed(FailureReasons.noPhoneColumn);
      }
    }
    const { runner, started } = await runnerWith([handlingEvery(Jobs.importLeads), Importing]);
    runner.onModuleInit();
    await runner.onApplicationBootstrap();
    const leads = started.find((worker) => worker.queue === Queues.leads)!;
    // A summary that says "failed" is a job done: only `jobFailed` fails one.
    await expect(leads.run(jobOf(Jobs.importLeads.name, { importId: 1 }))).resolves.toEqual({ status: 'failed' });
    const failed = leads.run(jobOf(Jobs.importLeads.name, { importId: 2 }));
    await expect(failed).rejects.toThrow(`${Jobs.importLeads.name} failed: no phone_number column`);
    await expect(failed).rejects.toHaveProperty('name', 'UnrecoverableError');
    expect(payloads).toEqual([{ importId: 1 }, { importId: 2 }]);
    await expect(leads.run(jobOf('import-contacts'))).rejects.toThrow(
      'No handler for job "import-contacts" on queue "leads"',
    );
    await runner.beforeApplicationShutdown();
  });

  it('holds a handler to its job’s payload at compile time', () => {
    class Mismatched {
      // @ts-expect-error: place-call's payload is a CallJob, not a DocumentJob.
      @HandlesJob(Jobs.placeCall)
      async place(_payload: DocumentJob): Promise<void> {}

      // @ts-expect-error: a handler resolves to a JobResult, so the runner can tell a failure.
      @HandlesJob(Jobs.placeCall)
      place2(_payload: CallJob): void {}
    }
    expect(Mismatched).toBeDefined();
  });

  describe('a worker idle beside waiting jobs', () => {
    /**
     * The dialer's worker among every queue's, its queue's waiting count set by the test, and a dial that lasts until
     * the test lets it end.
     */
    async function fakes() {
      const counts = { waiting: 0 };
      let endDial = () => undefined as void;
      const dialing = new Promise<void>((resolve) => (endDial = resolve));
      @Injectable()
      class SlowDialling {
        @HandlesJob(Jobs.placeCall)
        place(): Promise<void> {
          return dialing;
        }
      }
      const { runner, started, restarts } = await runnerWith([handlingEvery(Jobs.placeCall), SlowDialling], (queue) =>
        queue === Queues.dialer ? counts.waiting : 0,
      );
      runner.onModuleInit();
      const dialer = () => started.filter((worker) => worker.queue === Queues.dialer);
      return { runner, dialer, counts, restarts, endDial };
    }
    // The checks' clock: the system time is set by the test, no timer runs by itself.
    const t0 = Date.parse('2026-11-27T12:00:00Z');
    const at = (ms: number) => jest.setSystemTime(t0 + ms);
    beforeEach(() => {
      jest.useFakeTimers({ now: t0 });
    });
    afterEach(() => jest.useRealTimers());

    it('is replaced once every check for 30 s found it idle with jobs waiting', async () => {
      const { runner, dialer, counts, restarts } = await fakes();
      await runner.onApplicationBootstrap();
      counts.waiting = 6;
      at(1_000);
      await runner.watch();
      at(21_000);
      await runner.watch();
      expect(dialer()).toHaveLength(1);
      at(31_000);
      await runner.watch();
      expect(dialer()).toHaveLength(2);
      expect(dialer()[0].closed).toBe(true);
      expect(restarts).toEqual([Queues.dialer]);
      // The new worker gets its own 30 s.
      at(41_000);
      await runner.watch();
      expect(dialer()).toHaveLength(2);
      await runner.beforeApplicationShutdown();
      expect(dialer()[1].closed).toBe(true);
    });

    it('is left alone while it takes jobs, holds one, or nothing waits', async () => {
      const { runner, dialer, counts, endDial } = await fakes();
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
      await dialer()[0].run(jobOf(Jobs.dialCampaign.name));
      at(95_000);
      await runner.watch();
      // A job in hand: not idle, however long, even if BullMQ never reports its end.
      const dial = dialer()[0].run(jobOf(Jobs.placeCall.name));
      at(200_000);
      await runner.watch();
      at(300_000);
      await runner.watch();
      expect(dialer()).toHaveLength(1);
      endDial();
      await dial;
      await runner.beforeApplicationShutdown();
    });
  });
});
