import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CallAnalysis, CallEventRow, CallListQuery, CallRow } from '@app/contracts';
import { ReadReplicas } from './read-replicas';
import { SqlFilter } from './sql-filter';
import { SqlRepository } from './sql-repository';

/** What a call's list may be filtered by. */
export type CallFilter = Pick<
  CallListQuery,
  'status' | 'type' | 'phone_number' | 'assistant_id' | 'campaign_id' | 'date_from' | 'date_to' | 'success'
>;

/** What decides whether a call's analysis can be run again. */
export interface CallAnalysisState {
  status: string;
  has_transcript: boolean;
  analysis_status: string | null;
  analysis_run: number;
}

/**
 * An account's calls and their events, as the account reads and deletes them (by their owner id first), and the
 * retention's purge of old calls. The voice runtime's statements are `RuntimeCallsRepository`'s, its writes of a call
 * `CallWritesRepository`'s, the worker's deliveries and reaper `CallDeliveriesRepository`'s.
 */
@Injectable()
export class CallsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** A page of the account's calls, newest first, and the total; each single filter is served by its own index. */
  async list(ownerId: number, query: CallFilter, limit: number, offset: number): Promise<[CallRow[], number]> {
    const filter = new SqlFilter((p) => `user_id = ${p}`, ownerId);
    const add = filter.where.bind(filter);
    if (query.status) add((p) => `status = ${p}`, query.status);
    if (query.type) add((p) => `type = ${p}`, query.type);
    if (query.phone_number) filter.numberContaining('client_phone_number', 'user_id', query.phone_number);
    if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
    if (query.campaign_id !== undefined) add((p) => `campaign_id = ${p}`, query.campaign_id);
    if (typeof query.success === 'boolean') add((p) => `analysis_success = ${p}`, query.success);
    if (query.date_from) add((p) => `created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `created_at < ${p}::date + 1`, query.date_to);
    const where = filter.sql;
    const parameters = filter.values;
    const order = query.date_from || query.date_to ? 'created_at DESC, id DESC' : 'id DESC';
    return Promise.all([
      this.reads.query<CallRow>(
        ownerId,
        `SELECT * FROM calls WHERE ${where} ORDER BY ${order} LIMIT ${filter.next()} OFFSET ${filter.next(2)}`,
        [...parameters, limit, offset],
      ),
      this.total(ownerId, query, where, parameters),
    ]);
  }

  /** From the counters the triggers keep when at most one filter (not a partial number) or only dates are set. */
  private async total(ownerId: number, query: CallFilter, where: string, parameters: unknown[]): Promise<number> {
    const buckets = [
      query.status && `s:${query.status}`,
      query.type && `t:${query.type}`,
      query.assistant_id !== undefined && `a:${query.assistant_id}`,
      query.campaign_id !== undefined && `c:${query.campaign_id}`,
      typeof query.success === 'boolean' && `x:${query.success}`,
    ].filter((bucket): bucket is string => Boolean(bucket));
    const dated = Boolean(query.date_from || query.date_to);
    if (!query.phone_number && buckets.length + (dated ? 1 : 0) <= 1) {
      const [row] = dated
        ? await this.reads.query(
            ownerId,
            `SELECT COALESCE(sum(total), 0)::int AS total FROM call_counts
              WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [ownerId, `d:${query.date_from ?? '0000-00-00'}`, `d:${query.date_to ?? '9999-99-99'}`],
          )
        : await this.reads.query(
            ownerId,
            `SELECT sum(total)::int AS total FROM call_counts WHERE user_id = $1 AND bucket = $2`,
            [ownerId, buckets[0] ?? ''],
          );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.reads.query(
      ownerId,
      `SELECT count(*)::int AS total FROM calls WHERE ${where}`,
      parameters,
    );
    return total;
  }

  async find(ownerId: number, id: number): Promise<CallRow | undefined> {
    const [row] = await this.reads.query<CallRow>(ownerId, `SELECT * FROM calls WHERE id = $1 AND user_id = $2`, [
      id,
      ownerId,
    ]);
    return row;
  }

  /** How many events the account's call has; undefined when it has no such call. */
  async countEvents(ownerId: number, id: number): Promise<number | undefined> {
    const [call] = await this.reads.query<{ events: number }>(
      ownerId,
      `SELECT (SELECT count(*)::int FROM call_events WHERE call_id = calls.id) AS events
         FROM calls WHERE id = $1 AND user_id = $2`,
      [id, ownerId],
    );
    return call?.events;
  }

  /** Events of a call of the account (found with `countEvents`), oldest first. */
  listEvents(ownerId: number, id: number, limit: number, offset: number): Promise<CallEventRow[]> {
    return this.reads.query<CallEventRow>(
      ownerId,
      `SELECT type, seq, at, data FROM call_events WHERE call_id = $1
        ORDER BY at, seq NULLS LAST, id LIMIT $2 OFFSET $3`,
      [id, limit, offset],
    );
  }

  /** Whether the account's call has ended with a transcript, and where its analysis stands; undefined: no such call. */
  async findAnalysisState(ownerId: number, id: number): Promise<CallAnalysisState | undefined> {
    const [row] = (await this.manager.query(
      `SELECT status, transcript ~ '\\S' AS has_transcript, analysis->>'status' AS analysis_status, analysis_run
         FROM calls WHERE id = $1 AND user_id = $2`,
      [id, ownerId],
    )) as CallAnalysisState[];
    return row;
  }

  /**
   * Starts a new run of the call's analysis (`analysis`, pending), if the call's current run is still `run` (as read);
   * its grade leaves the `success` filter until the run settles, and a `call.analyzed` of the run it replaces that is
   * still owed is no longer sent. Undefined when another request changed the analysis meanwhile.
   */
  async requestAnalysis(ownerId: number, id: number, run: number, pending: CallAnalysis): Promise<CallRow | undefined> {
    const [row] = (await this.manager.query(
      `WITH requested AS (
         UPDATE calls SET analysis = $4, analysis_run = analysis_run + 1, analysis_success = NULL,
                analysis_webhook_due = false, analysis_changed_at = now(), updated_at = now()
          WHERE id = $1 AND user_id = $2 AND analysis_run = $3 RETURNING *
       ) SELECT * FROM requested`,
      [id, ownerId, run, JSON.stringify(pending)],
    )) as CallRow[];
    return row;
  }

  /** Returns false when the account has no such call. */
  async delete(ownerId: number, id: number): Promise<boolean> {
    return (await this.changed(`DELETE FROM calls WHERE id = $1 AND user_id = $2`, [id, ownerId])) > 0;
  }

  /**
   * Removes up to `batch` calls created more than `days` ago, oldest first (`purge_calls_before`, a transaction of
   * its own); returns how many went.
   */
  async purgeOlderThan(days: number, batch: number): Promise<number> {
    const [{ removed }] = (await this.manager.query(
      `SELECT purge_calls_before(now() - make_interval(days => $1), $2) AS removed`,
      [days, batch],
    )) as { removed: number }[];
    return removed;
  }
}
