import { Injectable } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { MetricsRegistry } from './metrics.registry';

interface PgPool {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** The Postgres pool's connections in use and requests waiting for one, read at scrape time. */
@Injectable()
export class DatabasePoolMetrics {
  constructor(registry: MetricsRegistry, dataSource: DataSource) {
    const pool = () => (dataSource.driver as unknown as { master?: PgPool }).master;
    new Gauge({
      name: 'db_pool_connections',
      help: 'Postgres pool connections of this process, by state (in_use, idle)',
      labelNames: ['state'],
      registers: [registry],
      collect() {
        const current = pool();
        if (!current) return;
        this.set({ state: 'in_use' }, current.totalCount - current.idleCount);
        this.set({ state: 'idle' }, current.idleCount);
      },
    });
    new Gauge({
      name: 'db_pool_waiting_requests',
      help: 'Queries of this process waiting for a free Postgres connection',
      registers: [registry],
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
  }
}
