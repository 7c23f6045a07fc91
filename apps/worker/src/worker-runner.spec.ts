import { allJobs, handle, type JobHandler, Jobs, JobProcessor, QueueBackend, Queues, type QueueName } from '@app/jobs';
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

  it('refuses to boot when a declared job has no handler, naming it', () => {
    const runner = new WorkerRunner(
      config,
      [new FakeProcessor(Queues.maintenance, handlersOf(Queues.maintenance))],
      metrics,
      backend,
    );
    expect(() => runner.onModuleInit()).toThrow(`documents/${Jobs.processDocument.name}`);
  });

  it('boots when every declared job is handled', () => {
    const runner = new WorkerRunner(config, everyQueue(), metrics, backend);
    expect(() => runner.onModuleInit()).not.toThrow();
  });

  it('refuses to boot when a job is handled twice, or on another queue’s processor', () => {
    const twice = new WorkerRunner(
      config,
      [...everyQueue(), new FakeProcessor(Queues.dialer, [handle(Jobs.placeCall, idle)])],
      metrics,
      backend,
    );
    expect(() => twice.onModuleInit()).toThrow(`dialer/${Jobs.placeCall.name} is handled 2 times`);
    const elsewhere = new WorkerRunner(
      config,
      [...everyQueue(), new FakeProcessor(Queues.calls, [handle(Jobs.processDocument, idle)])],
      metrics,
      backend,
    );
    expect(() => elsewhere.onModuleInit()).toThrow(
      `documents/${Jobs.processDocument.name} is handled on the calls queue's processor`,
    );
  });
});
