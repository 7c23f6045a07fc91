import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CallEventRow } from '@app/contracts';
import { queryPool } from './pool-query';
import { noteAccountWrite, ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A stored event as the live streams send it: its id (the stream's `Last-Event-ID`) beside its row. */
export interface StreamedCallEvent extends CallEventRow {
  id: number;
}

/** What storing the owner's control of a call came to. */
export type StoredControl =
  { kind: 'no-call' } | { kind: 'finished' } | { kind: 'stored'; callId: number; externalId: string; eventId: number };

/**
 * The statements of live calls: the owner's control of a call (stored as its `control` events, which the runtime's
 * control stream reads), and the reads of both streams, always on the primary: a stream reads what a signal just
 * announced, which a replica may not have yet.
 */
@Injectable()
export class LiveCallsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /**
   * Stores a control (`{action, text?}`) of the account's call in one statement, unless the call is final; with
   * `notifyChannel` (the Postgres queue backend) the statement notifies the call's streams itself.
   */
  async insertControl(
    ownerId: number,
    callId: number,
    control: { action: string; text?: string },
    options: { finalStatuses: readonly string[]; notifyChannel: string | null },
  ): Promise<StoredControl> {
    const [row] = await queryPool<{ finished: boolean; external_id: string; event_id: string | null }>(
      this.dataSource,
      `WITH call AS (
              SELECT id, external_id, status = ANY($4) AS finished FROM calls WHERE id = $1 AND user_id = $2),
            stored AS (
              INSERT INTO call_events (call_id, seq, type, at, data)
              SELECT id, NULL, 'control', now(), $3 FROM call WHERE NOT finished
              RETURNING id)
       SELECT call.finished, call.external_id, stored.id AS event_id,
              CASE WHEN $5::text IS NOT NULL AND stored.id IS NOT NULL
                   THEN pg_notify($5, call.id || ':' || stored.id) END AS notified
         FROM call LEFT JOIN stored ON true`,
      [callId, ownerId, JSON.stringify(control), options.finalStatuses, options.notifyChannel],
    );
    if (!row) return { kind: 'no-call' };
    if (row.finished || row.event_id === null) return { kind: 'finished' };
    noteAccountWrite(ownerId);
    return { kind: 'stored', callId, externalId: row.external_id, eventId: Number(row.event_id) };
  }

  /** The account's call's id and whether it is final; undefined when the account has no such call. */
  async findOwned(
    ownerId: number,
    callId: number,
    finalStatuses: readonly string[],
  ): Promise<{ id: number; finished: boolean } | undefined> {
    const [row] = await queryPool<{ id: number; finished: boolean }>(
      this.dataSource,
      `SELECT id, status = ANY($3) AS finished FROM calls WHERE id = $1 AND user_id = $2`,
      [callId, ownerId, finalStatuses],
    );
    return row;
  }

  /**
   * The call with that external id, or that id, and whether it is final: for the runtime's routes and the worker,
   * which act for no account.
   */
  async findCall(
    by: { externalId: string } | { id: number },
    finalStatuses: readonly string[],
  ): Promise<{ id: number; external_id: string; finished: boolean } | undefined> {
    const [row] = await queryPool<{ id: number; external_id: string; finished: boolean }>(
      this.dataSource,
      `SELECT id, external_id, status = ANY($2) AS finished FROM calls WHERE ${'id' in by ? 'id' : 'external_id'} = $1`,
      ['id' in by ? by.id : by.externalId, finalStatuses],
    );
    return row;
  }

  /**
   * In one statement, whether the call is final and its events after `afterId` in the order they were stored (at
   * most `limit`, of `types` only when given); undefined when the call is gone.
   */
  async eventsAfter(
    callId: number,
    afterId: number,
    options: { limit: number; types: readonly string[] | null; finalStatuses: readonly string[] },
  ): Promise<{ finished: boolean; events: StreamedCallEvent[] } | undefined> {
    const [row] = await queryPool<{
      finished: boolean;
      events: (Omit<StreamedCallEvent, 'at'> & { at: string })[];
    }>(
      this.dataSource,
      `SELECT c.status = ANY($5) AS finished,
              COALESCE((SELECT json_agg(e ORDER BY e.id) FROM (
                 SELECT id, type, seq, at, data FROM call_events
                  WHERE call_id = c.id AND id > $2 AND ($4::text[] IS NULL OR type = ANY($4))
                  ORDER BY id LIMIT $3) e), '[]') AS events
         FROM calls c WHERE c.id = $1`,
      [callId, afterId, options.limit, options.types, options.finalStatuses],
    );
    if (!row) return undefined;
    return { finished: row.finished, events: row.events.map((event) => ({ ...event, at: new Date(event.at) })) };
  }
}
