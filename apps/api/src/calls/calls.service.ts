import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/config';
import {
  CallEnvelope,
  type CallEventResponse,
  CallListQuery,
  CallResponse,
  Errors,
  LengthAwarePage,
  lengthAwarePage,
  MessageResponse,
  type PageQuery,
  INVALID_PHONE_NUMBER,
  MakeCallRequest,
  MakeCallResponse,
  toCallEventResponse,
  toCallResponse,
  toE164,
  ValidationFailed,
} from '@app/contracts';
import { insertPlacedCalls } from '@app/calls';
import { CallsRepository } from '@app/database';
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
    private readonly calls: CallsRepository,
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

  /** Newest first, with the exact total. */
  async list(user: AuthenticatedUser, query: CallListQuery, request: Request): Promise<LengthAwarePage<CallResponse>> {
    const [rows, total] = await this.calls.list(user.id, query, query.per_page, (query.page - 1) * query.per_page);
    return lengthAwarePage(
      rows.map(toCallResponse),
      total,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  async get(user: AuthenticatedUser, id: number): Promise<CallEnvelope> {
    const row = await this.calls.find(user.id, id);
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
    const events = await this.calls.countEvents(user.id, id);
    if (events === undefined) throw Errors.callNotFound();
    const rows = await this.calls.listEvents(user.id, id, query.per_page, (query.page - 1) * query.per_page);
    return lengthAwarePage(
      rows.map(toCallEventResponse),
      events,
      { page: query.page, perPage: query.per_page },
      pageLocation(request, this.config.appUrl),
    );
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.calls.delete(user.id, id))) throw Errors.callNotFound();
    return { message: 'Call deleted successfully.' };
  }
}
