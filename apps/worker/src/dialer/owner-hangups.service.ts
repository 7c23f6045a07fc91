import { Inject, Injectable, Logger } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import { TERMINAL_CALL_STATUSES } from '@app/contracts';
import { LiveCallsRepository } from '@app/database';
import { HandlesJob, Jobs, type OwnerHangupJob } from '@app/jobs';
import { CALL_CONTROL, type CallControl, CallControlError } from '@app/telephony';

/**
 * The owner's hang-up, when the runtime has not ended the call within OWNER_HANGUP_GRACE_MS (its final write is the
 * confirmation): the provider ends the call for everyone in it (LiveKit deletes the room; one already gone is no
 * error), then the call is written `ended` with `ended_reason: owner_hangup` as the runtime would have, so its lead, slot and webhook follow. A provider
 * failure is thrown, so the job's attempts retry it; the call stays as it was meanwhile.
 */
@Injectable()
export class OwnerHangups {
  private readonly logger = new Logger(OwnerHangups.name);

  constructor(
    private readonly calls: LiveCallsRepository,
    @Inject(CALL_CONTROL) private readonly control: CallControl,
    private readonly ingestion: CallIngestion,
  ) {}

  @HandlesJob(Jobs.enforceOwnerHangup)
  async enforce({ callId, controlId }: OwnerHangupJob): Promise<{ status: 'confirmed' | 'enforced' | 'gone' }> {
    const call = await this.calls.findCall({ id: callId }, TERMINAL_CALL_STATUSES);
    if (!call) return { status: 'gone' };
    if (call.finished) return { status: 'confirmed' };
    try {
      await this.control.endCall({ room: call.external_id });
    } catch (error) {
      if (!(error instanceof CallControlError) || error.reason !== 'not-found') throw error;
    }
    this.logger.warn(
      { callId, controlId },
      'the runtime did not end a call its owner hung up: ended it at the provider',
    );
    await this.ingestion.write(call.external_id, { status: 'ended', ended_reason: 'owner_hangup' });
    return { status: 'enforced' };
  }
}
