import { Jobs, JobProcessor, QueueBackend, Queues, type QueueName } from '@app/jobs';
import { type AppConfig } from '@app/config';
import type { JobMetrics } from './job-metrics';
import { WorkerRunner } from './worker-runner';

class FakeProcessor extends JobProcessor {
  constructor(
    readonly queueName: QueueName,
    protected readonly handlers: Record<string, () => Promise<unknown>>,
  ) {
    super();
  }
}

const handlersFor = (queue: QueueName) =>
  Object.fromEntries(
    Object.values(Jobs)
      .filter((definition) => definition.queue === queue)
      .map((definition) => [definition.name, async () => undefined]),
  );

describe('WorkerRunner', () => {
  const config = { workerConcurrency: 2 } as AppConfig;
  const metrics = {} as JobMetrics;
  const backend = new QueueBackend(config);

  it('refuses to boot when a declared job has no handler, naming it', () => {
    const runner = new WorkerRunner(
      config,
      [new FakeProcessor(Queues.maintenance, handlersFor(Queues.maintenance))],
      metrics,
      backend,
    );
    expect(() => runner.onModuleInit()).toThrow(`documents/${Jobs.processDocument.name}`);
  });

  it('boots when every declared job is handled', () => {
    const runner = new WorkerRunner(
      config,
      Object.values(Queues).map((queue) => new FakeProcessor(queue, handlersFor(queue))),
      metrics,
      backend,
    );
    expect(() => runner.onModuleInit()).not.toThrow();
  });
});
