import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  CallEnvelope,
  type CallEventResponse,
  type CallEventRow,
  CallListQuery,
  CallResponse,
  Errors,
  LengthAwarePage,
  lengthAwarePage,
  MessageResponse,
  type PageQuery,
  CallRow,
  INVALID_PHONE_NUMBER,
  MakeCallRequest,
  MakeCallResponse,
  toCallEventResponse,
  toCallResponse,
  toE164,
  ValidationFailed,
} from '@app/contracts';
import { insertPlacedCalls } from '@app/calls';
import { ReadReplicas, SqlFilter } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { pageLocation } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';

/** Strictly E.164: a plus, the country code and the number, nothing else. */
const E164 = /^\+[1-9]\d{1,14}$/;

@Injectable()
export class CallsService {
  private readonly logger = new Logger(CallsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly reads: ReadReplicas,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
  ) {}

  /**
   * One outbound call now, from the assistant's phone number: written as an initiated call with a pending dial,
   * then queued for the worker. Should Redis refuse the job, the call is still placed: the dialer's periodic
   * sweep picks up every dial nobody took, so the 201 holds either way.
   */
  async makeCall(user: AuthenticatedUser, request: MakeCallRequest): Promise<MakeCallResponse> {
    const callId = await this.dataSource.transaction(async (manager) => {
      const [assistant] = await manager.query(
        `SELECT a.id, a.name, a.type, p.id AS number_id, p.phone_number
           FROM assistants a LEFT JOIN phone_numbers p ON p.id = a.phone_number_id
          WHERE a.id = $1 AND a.user_id = $2
            FOR KEY SHARE OF a`,
        [request.assistant_id, user.id],
      );
      const errors: Record<string, string[]> = {};
      if (!E164.test(request.phone_number) || toE164(request.phone_number) !== request.phone_number) {
        errors.phone_number = [INVALID_PHONE_NUMBER('phone number')];
      }
      if (!assistant) errors.assistant_id = ['The selected assistant id is invalid.'];
      else if (assistant.type !== 'outbound')
        errors.assistant_id = ['The assistant id field must be an outbound assistant.'];
      else if (!assistant.number_id) errors.assistant_id = ['The assistant has no phone number to call from.'];
      if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
      const [id] = await insertPlacedCalls(manager, [
        {
          userId: user.id,
          assistantId: assistant.id,
          assistantName: assistant.name,
          campaignId: null,
          campaignName: null,
          leadId: null,
          secondaryContactId: null,
          to: request.phone_number,
          from: assistant.phone_number,
          phoneNumberId: assistant.number_id,
          variables: request.variables ?? {},
        },
      ]);
      return id;
    });
    try {
      await this.jobs.enqueue(Jobs.placeCall, { callId });
    } catch (error) {
      this.logger.warn({ callId, error: (error as Error).message }, 'could not queue the call; the dialer sweep will');
    }
    return { message: 'Call initiated successfully.', call_id: callId, status: 'initiated' };
  }

  /** Newest first; each single filter is served by its own index. */
  async list(user: AuthenticatedUser, query: CallListQuery, request: Request): Promise<LengthAwarePage<CallResponse>> {
    const filter = new SqlFilter((p) => `user_id = ${p}`, user.id);
    const add = filter.where.bind(filter);
    if (query.status) add((p) => `status = ${p}`, query.status);
    if (query.type) add((p) => `type = ${p}`, query.type);
    if (query.phone_number) filter.numberContaining('client_phone_number', 'user_id', query.phone_number);
    if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
    if (query.campaign_id !== undefined) add((p) => `campaign_id = ${p}`, query.campaign_id);
    if (query.date_from) add((p) => `created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `created_at < ${p}::date + 1`, query.date_to);
    const where = filter.sql;
    const parameters = filter.values;
    const order = query.date_from || query.date_to ? 'created_at DESC, id DESC' : 'id DESC';
    const [rows, total] = await Promise.all([
      this.reads.query(
        user.id,
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
        ? await this.reads.query(
            user.id,
            `SELECT COALESCE(sum(total), 0)::int AS total FROM call_counts
              WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [user.id, `d:${query.date_from ?? '0000-00-00'}`, `d:${query.date_to ?? '9999-99-99'}`],
          )
        : await this.reads.query(
            user.id,
            `SELECT sum(total)::int AS total FROM call_counts WHERE user_id = $1 AND bucket = $2`,
            [user.id, buckets[0] ?? ''],
          );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.reads.query(
      user.id,
      `SELECT count(*)::int AS total FROM calls WHERE ${where}`,
      parameters,
    );
    return total;
  }

  async get(user: AuthenticatedUser, id: number): Promise<CallEnvelope> {
    const [row] = (await this.reads.query(user.id, `SELECT * FROM calls WHERE id = $1 AND user_id = $2`, [
      id,
      user.id,
    ])) as CallRow[];
    if (!row) throw Errors.callNotFound();
    return { data: toCallResponse(row) };
  }

  /** The call's events, oldest first; the call is the owner's or it is not found. */
  async events(
    user: AuthenticatedUser,
    id: number,
    query: PageQuery,
    request: Request,
  ): Promise<LengthAwarePage<CallEventResponse>> {
    const [call] = await this.reads.query<{ events: number }>(
      user.id,
      `SELECT (SELECT count(*)::int FROM call_events WHERE call_id = calls.id) AS events
         FROM calls WHERE id = $1 AND user_id = $2`,
      [id, user.id],
    );
    if (!call) throw Errors.callNotFound();
    const rows = await this.reads.query<CallEventRow>(
      user.id,
      `SELECT type, seq, at, data FROM call_events WHERE call_id = $1
        ORDER BY at, seq NULLS LAST, id LIMIT $2 OFFSET $3`,
      [id, query.per_page, (query.page - 1) * query.per_page],
    );
    return lengthAwarePage(
      rows.map(toCallEventResponse),
      call.events,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
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
