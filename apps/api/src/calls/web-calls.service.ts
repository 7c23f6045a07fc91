import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { type CallRow, Errors, StartWebCallRequest, toWebCallEnvelope, WebCallEnvelope } from '@app/contracts';
import { CallLimitReached, CallsRepository, DiallingRepository, Transactions } from '@app/database';
import { errorMessage } from '@app/platform';
import { CALL_CONTROL, type CallControl } from '@app/telephony';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

const ROOM_FAILED = 'The telephony provider could not open the web call’s room; nothing was started. Please try again.';

/**
 * Web calls: a person talks to an assistant from a browser, in a LiveKit room the service opens for the call, with
 * the agent dispatched into it and a token that lets the browser join that room alone. The call is written first,
 * within the account's limit of calls in progress (429 beyond it, nothing written); then the room is made. Should
 * the provider fail, the call is removed again (its slot with it) and the answer is 502: a web call exists only with
 * its room.
 */
@Injectable()
export class WebCallsService implements OnModuleInit {
  private readonly logger = new Logger(WebCallsService.name);

  constructor(
    private readonly dialling: DiallingRepository,
    private readonly calls: CallsRepository,
    private readonly transactions: Transactions,
    private readonly config: AppConfig,
    private readonly creates: IdempotentCreates,
    @Inject(CALL_CONTROL) private readonly control: CallControl,
  ) {}

  /**
   * A retry after the process died between the write and the answer: the room is made (again: a room that exists is
   * left as it is, its agent dispatched once) and a new token minted for it.
   */
  onModuleInit(): void {
    this.creates.recoverWith('web-call', async (user, id) => {
      const call = await this.calls.find(user.id, id);
      if (!call) throw Errors.callNotFound();
      return this.open(user, call);
    });
  }

  async start(user: AuthenticatedUser, assistantId: number, request: StartWebCallRequest): Promise<WebCallEnvelope> {
    const call = await this.transactions.run(async (transaction) => {
      const dialling = this.dialling.within(transaction);
      // Held until the call is written, so that the assistant cannot be deleted in between.
      const assistant = await dialling.lockCallerAssistant(user.id, assistantId);
      if (!assistant) throw Errors.assistantNotFound();
      const written = await dialling.insertWebCallWithinLimit(
        {
          userId: user.id,
          assistantId: assistant.id,
          assistantName: assistant.name,
          variables: request.variables ?? {},
        },
        this.config.accountMaxConcurrentCalls,
      );
      if (written instanceof CallLimitReached) throw Errors.callLimitReached(written.maxConcurrentCalls);
      await this.creates.record(transaction, 'web-call', written.id);
      return written;
    });
    return this.open(user, call);
  }

  /** Makes the call's room with the agent dispatched, and the browser's token; undoes the call if the room fails. */
  private async open(user: AuthenticatedUser, call: CallRow): Promise<WebCallEnvelope> {
    const room = call.external_id;
    try {
      await this.control.startWebCall({
        room,
        // The agent's own: it opens the call's session by `external_id` (no numbers to route by).
        metadata: {
          type: 'web',
          external_id: call.external_id,
          call_id: call.id,
          assistant_id: call.assistant_id,
          variables: call.variables,
        },
      });
      const token = await this.control.participantToken({
        room,
        identity: `web-${call.id}`,
        name: 'Web caller',
        ttlSeconds: this.config.webCallTokenTtlSeconds,
      });
      return toWebCallEnvelope(call, token);
    } catch (error) {
      this.logger.warn({ callId: call.id, error: errorMessage(error) }, 'a web call’s room could not be opened');
      await this.dialling.deleteUnstartedWebCall(user.id, call.id);
      // Made all the same while its answer was lost: closed, so that its agent does not wait for nobody.
      await this.control.endCall({ room }).catch(() => undefined);
      throw Errors.telephonyFailed(ROOM_FAILED);
    }
  }
}
