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
    const conditions = ['user_id = $1'];
    const parameters: unknown[] = [user.id];
    const add = (condition: (placeholder: string) => string, value: unknown) => {
      parameters.push(value);
      conditions.push(condition(`$${parameters.length}`));
    };
    if (query.status) add((p) => `status = ${p}`, query.status);
    if (query.type) add((p) => `type = ${p}`, query.type);
    if (query.phone_number) add((p) => `client_phone_number LIKE ${p}`, `%${query.phone_number}%`);
    if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
    if (query.campaign_id !== undefined) add((p) => `campaign_id = ${p}`, query.campaign_id);
    if (query.date_from) add((p) => `created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `created_at < ${p}::date + 1`, query.date_to);
    const where = conditions.join(' AND ');
    const order = query.date_from || query.date_to ? 'created_at DESC, id DESC' : 'id DESC';
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `SELECT * FROM calls WHERE ${where} ORDER BY ${order} LIMIT $${parameters.length + 1} OFFSET $${parameters.length + 2}`,
        [...parameters, query.per_page, (query.page - 1) * query.per_page],
      ) as Promise<CallRow[]>,
      this.dataSource.query(`SELECT count(*)::int AS total FROM calls WHERE ${where}`, parameters),
    ]);
    return lengthAwarePage(
      rows.map(toCallResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
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
