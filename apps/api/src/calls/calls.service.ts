import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  CallEnvelope,
  CallListQuery,
  CallResponse,
  Errors,
  LengthAwarePage,
  lengthAwarePage,
  MessageResponse,
  CallRow,
  toCallResponse,
} from '@app/contracts';
import { SqlFilter } from '@app/database';
import { pageLocation } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';

@Injectable()
export class CallsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly config: AppConfig,
  ) {}

  /** Newest first; each single filter is served by its own index. */
  async list(user: AuthenticatedUser, query: CallListQuery, request: Request): Promise<LengthAwarePage<CallResponse>> {
    const filter = new SqlFilter((p) => `user_id = ${p}`, user.id);
    const add = filter.where.bind(filter);
    if (query.status) add((p) => `status = ${p}`, query.status);
    if (query.type) add((p) => `type = ${p}`, query.type);
    if (query.phone_number) add((p) => `client_phone_number LIKE ${p}`, `%${query.phone_number}%`);
    if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
    if (query.campaign_id !== undefined) add((p) => `campaign_id = ${p}`, query.campaign_id);
    if (query.date_from) add((p) => `created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `created_at < ${p}::date + 1`, query.date_to);
    const where = filter.sql;
    const parameters = filter.values;
    const order = query.date_from || query.date_to ? 'created_at DESC, id DESC' : 'id DESC';
    const [rows, total] = await Promise.all([
      this.dataSource.query(
        `SELECT * FROM calls WHERE ${where} ORDER BY ${order} LIMIT ${filter.next()} OFFSET ${filter.next(2)}`,
        [...parameters, query.per_page, (query.page - 1) * query.per_page],
      ) as Promise<CallRow[]>,
      this.total(user, query, where, parameters),
    ]);
    return lengthAwarePage(
      rows.map(toCallResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  /** From the counters the triggers keep when at most one filter (not a partial number) or only dates are set. */
  private async total(
    user: AuthenticatedUser,
    query: CallListQuery,
    where: string,
    parameters: unknown[],
  ): Promise<number> {
    const buckets = [
      query.status && `s:${query.status}`,
      query.type && `t:${query.type}`,
      query.assistant_id !== undefined && `a:${query.assistant_id}`,
      query.campaign_id !== undefined && `c:${query.campaign_id}`,
    ].filter((bucket): bucket is string => Boolean(bucket));
    const dated = Boolean(query.date_from || query.date_to);
    if (!query.phone_number && buckets.length + (dated ? 1 : 0) <= 1) {
      const [row] = dated
        ? await this.dataSource.query(
            `SELECT COALESCE(sum(total), 0)::int AS total FROM call_counts
              WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [user.id, `d:${query.date_from ?? '0000-00-00'}`, `d:${query.date_to ?? '9999-99-99'}`],
          )
        : await this.dataSource.query(
            `SELECT sum(total)::int AS total FROM call_counts WHERE user_id = $1 AND bucket = $2`,
            [user.id, buckets[0] ?? ''],
          );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.dataSource.query(
      `SELECT count(*)::int AS total FROM calls WHERE ${where}`,
      parameters,
    );
    return total;
  }

  async get(user: AuthenticatedUser, id: number): Promise<CallEnvelope> {
    const [row] = (await this.dataSource.query(`SELECT * FROM calls WHERE id = $1 AND user_id = $2`, [
      id,
      user.id,
    ])) as CallRow[];
    if (!row) throw Errors.callNotFound();
    return { data: toCallResponse(row) };
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    const [, deleted] = (await this.dataSource.query(`DELETE FROM calls WHERE id = $1 AND user_id = $2`, [
      id,
      user.id,
    ])) as [unknown, number];
    if (deleted === 0) throw Errors.callNotFound();
    return { message: 'Call deleted successfully.' };
  }
}
