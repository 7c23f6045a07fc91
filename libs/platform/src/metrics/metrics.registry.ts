import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The Prometheus registry of one app. Each app (API, worker) has its own, so a process serves only its own
 * metrics, even when both apps run in one process as in the tests.
 */
export class MetricsRegistry extends Registry {
  constructor() {
    super();
    collectDefaultMetrics({ register: this });
  }
}
