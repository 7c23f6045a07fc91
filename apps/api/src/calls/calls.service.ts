import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Request } from 'express';
import { AppConfig } from '@app/config';
import {
  CallAnalysisQueuedResponse,
  CallEnvelope,
  type CallEventResponse,
  CallListQuery,
  CallResponse,
  DomainError,
  Errors,
  LengthAwarePage,
  MessageResponse,
  type PageQuery,
  INVALID_PHONE_NUMBER,
  MakeCallRequest,
  MakeCallResponse,
  toCallEventResponse,
  toCallResponse,
  PENDING_ANALYSIS,
  TERMINAL_CALL_STATUSES,
  toE164,
  ValidationFailed,
  pageOffset,
} from '@app/contracts';
import { CallLimitReached, CallsRepository, DiallingRepository, Transactions } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { errorMessage, pageOfList } from '@app/platform';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

/** Why a call's analysis cannot run now. */
const analysisConflict = (message: string) => new DomainError('analysis_conflict', 409, { message });

/** Strictly E.164: a plus, the country code and the number, nothing else. */
const E164 = /^\+[1-9]\d{1,14}$/;

@Injectable()
export class CallsService implements OnModuleInit {
  private readonly logger = new Logger(CallsService.name);

  constructor(
    private readonly calls: CallsRepository,
    private readonly dialling: DiallingRepository,
    private readonly transactions: Transactions,
    private readonly config: AppConfig,
    private readonly jobs: JobQueue,
    private readonly creates: IdempotentCreates,
  ) {}

  /** A call whose dial was not queued before its process died is placed by the dialer's sweep. */
  onModuleInit(): void {
    this.creates.recoverWith('call', (_user, id) => Promise.resolve(this.initiated(id)));
  }

  /**
   * One outbound call now, from the assistant's phone number: written as an initiated call with a pending dial,
   * then queued for the worker; beyond the account's limit of calls in progress, 429 and nothing is written. Should Redis refuse the job, the call is still placed: the dialer's periodic
   * sweep picks up every dial nobody took, so the 201 holds either way.
   */
  async makeCall(user: AuthenticatedUser, request: MakeCallRequest): Promise<MakeCallResponse> {
    const callId = await this.transactions.run(async (transaction) => {
      const dialling = this.dialling.within(transaction);
      const assistant = await dialling.lockCallerAssistant(user.id, request.assistant_id);
      const errors: Record<string, string[]> = {};
      if (!E164.test(request.phone_number) || toE164(request.phone_number) !== request.phone_number) {
        errors.phone_number = [INVALID_PHONE_NUMBER('phone number')];
      }
      if (!assistant) errors.assistant_id = ['The selected assistant id is invalid.'];
      else if (assistant.type !== 'outbound')
        errors.assistant_id = ['The assistant id field must be an outbound assistant.'];
      else if (!assistant.number_id) errors.assistant_id = ['The assistant has no phone number to call from.'];
      else if (!assistant.outbound_trunk_id)
        errors.assistant_id = ["The assistant's phone number cannot place calls: it has no outbound SIP trunk."];
      if (!assistant || Object.keys(errors).length > 0) throw new ValidationFailed(errors);
      // Written only while the account has a call slot free, in the same statement that takes it.
      const id = await dialling.insertPlacedCallWithinLimit(
        {
          userId: user.id,
          assistantId: assistant.id,
          assistantName: assistant.name,
          campaignId: null,
          campaignName: null,
          leadId: null,
          secondaryContactId: null,
          to: request.phone_number,
          // Its number, checked above.
          from: assistant.phone_number!,
          phoneNumberId: assistant.number_id,
          variables: request.variables ?? {},
        },
        this.config.accountMaxConcurrentCalls,
      );
      if (id instanceof CallLimitReached) throw Errors.callLimitReached(id.maxConcurrentCalls);
      await this.creates.record(transaction, 'call', id);
      return id;
    });
    try {
      await this.jobs.enqueue(Jobs.placeCall, { callId });
    } catch (error) {
      this.logger.warn({ callId, error: errorMessage(error) }, 'could not queue the call; the dialer sweep will');
    }
    return this.initiated(callId);
  }

  private initiated(callId: number): MakeCallResponse {
    return { message: 'Call initiated successfully.', call_id: callId, status: 'initiated' };
  }

  /** Newest first, with the exact total. */
  async list(user: AuthenticatedUser, query: CallListQuery, request: Request): Promise<LengthAwarePage<CallResponse>> {
    const [rows, total] = await this.calls.list(user.id, query, query.per_page, pageOffset(query));
    return pageOfList(rows.map(toCallResponse), total, query, request, this.config.appUrl);
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
    const rows = await this.calls.listEvents(user.id, id, query.per_page, pageOffset(query));
    return pageOfList(rows.map(toCallEventResponse), events, query, request, this.config.appUrl);
  }

  /**
   * Runs the call's analysis again, on the assistant's plan as it is now: a new run, pending, queued once committed.
   * A run still pending is the one that answers (queued again in case its job was lost). A call that has not ended,
   * or has no transcript, or a deployment without a model provider, is 409.
   */
  async reanalyse(user: AuthenticatedUser, id: number): Promise<CallAnalysisQueuedResponse> {
    if (!this.config.modelProvider) throw analysisConflict('No model provider is configured: calls are not analysed.');
    for (let attempt = 1; ; attempt++) {
      const state = await this.calls.findAnalysisState(user.id, id);
      if (!state) throw Errors.callNotFound();
      if (!TERMINAL_CALL_STATUSES.includes(state.status))
        throw analysisConflict('The call has not ended yet: it is analysed when it ends.');
      if (!state.has_transcript) throw analysisConflict('The call has no transcript to analyse.');
      const row =
        state.analysis_status === 'pending'
          ? await this.calls.find(user.id, id)
          : await this.calls.requestAnalysis(user.id, id, state.analysis_run, PENDING_ANALYSIS);
      // Another request changed the analysis since it was read: read it again.
      if (!row || row.analysis?.status !== 'pending') {
        if (attempt === 3) throw Errors.conflict();
        continue;
      }
      await this.jobs.enqueue(Jobs.analyzeCall, { callId: row.id, run: row.analysis_run }).catch((error: Error) => {
        // The run is recorded: the worker's sweep queues it once its job is found missing.
        this.logger.warn({ callId: row.id, error: error.message }, 'could not queue the analysis; the sweep will');
      });
      return { message: 'The call’s analysis is queued.', data: toCallResponse(row) };
    }
  }

  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.calls.delete(user.id, id))) throw Errors.callNotFound();
    return { message: 'Call deleted successfully.' };
  }
}
