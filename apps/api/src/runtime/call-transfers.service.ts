import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '@app/config';
import {
  type CallTransferEnvelope,
  DomainError,
  Errors,
  type StoredCallTransfer,
  type StoredTransferDestination,
  TERMINAL_CALL_STATUSES,
  type TransferCallRequest,
  type TransferStatus,
  ValidationFailed,
} from '@app/contracts';
import { RuntimeCallsRepository, type TransferCallRow } from '@app/database';
import {
  CALL_CONTROL,
  type CallControl,
  CallControlError,
  callFailure,
  type CallFailure,
  type TransferOutcome,
  transferTarget,
} from '@app/telephony';

const callEnded = (status: string) =>
  new DomainError('call_ended', 409, { message: `The call is already ${status}; it cannot be transferred.` });

/**
 * Transfers asked for by the voice runtime: only to a destination of the call's own assistant (by name: a model never
 * dials a number of its own), through the telephony port, and recorded on the call (its `transfer`, an event, and
 * `ended_reason: transferred` once the caller is handed over). A transfer that did not connect leaves the caller with
 * the assistant, and answers why, in words it can say.
 */
@Injectable()
export class CallTransfers {
  private readonly logger = new Logger(CallTransfers.name);

  constructor(
    private readonly calls: RuntimeCallsRepository,
    @Inject(CALL_CONTROL) private readonly control: CallControl,
    private readonly config: AppConfig,
  ) {}

  async transfer(externalId: string, request: TransferCallRequest): Promise<CallTransferEnvelope> {
    const call = await this.calls.findTransferCallByExternalId(externalId);
    if (!call) throw Errors.callNotFound();
    if (TERMINAL_CALL_STATUSES.includes(call.status)) throw callEnded(call.status);
    const destination = call.transfer_destinations.find((each) => each.name === request.destination);
    if (!destination) throw ValidationFailed.field('destination', 'The selected destination is invalid.');
    const outcome =
      destination.mode === 'warm' && destination.number
        ? await this.warm(call, destination.number, destination, request)
        : await this.cold(call, destination, request);
    const failure = outcome.status === 'failed' ? outcome : undefined;
    const status: TransferStatus = !failure ? 'transferred' : failure.reason === 'declined' ? 'declined' : 'failed';
    const transfer: StoredCallTransfer = {
      destination: destination.name,
      mode: destination.mode,
      status,
      reason: failure?.reason ?? null,
      at: new Date().toISOString(),
    };
    const id = await this.calls.recordTransfer(call, transfer);
    if (failure) this.logFailure(call, destination, failure);
    if (failure?.reason === 'provider-error') throw Errors.telephonyFailed(failure.message);
    return {
      message: failure ? failure.message : 'The call was transferred.',
      data: {
        transfer: {
          id,
          destination: destination.name,
          mode: destination.mode,
          status,
          reason: transfer.reason,
          message: failure?.message ?? null,
        },
      },
    };
  }

  /** The caller handed to the destination by the provider (SIP REFER); the call leaves the room. */
  private cold(
    call: TransferCallRow,
    destination: StoredTransferDestination,
    request: TransferCallRequest,
  ): Promise<TransferOutcome> {
    return this.control.transfer({
      room: call.external_id,
      participantIdentity: request.participant_identity ?? undefined,
      to: transferTarget(destination.number ? { number: destination.number } : { sipUri: destination.sip_uri! }),
      playDialtone: true,
    });
  }

  /**
   * LiveKit's warm transfer: the person is rung into a consultation room of their own, where the assistant (an agent
   * dispatched there with the call's `external_id` and the summary) briefs them; once they answered they are moved
   * into the caller's room and the consultation room is closed. A person who does not answer, or declines, never
   * reaches the caller: the room is closed and the caller stays with the assistant. A move the provider cannot do
   * (self-hosted LiveKit has no `MoveParticipant`) hangs up on the person and fails as the provider's failure.
   */
  private async warm(
    call: TransferCallRow,
    number: string,
    destination: StoredTransferDestination,
    request: TransferCallRequest,
  ): Promise<TransferOutcome> {
    if (!call.outbound_trunk_id) {
      return { status: 'failed', ...callFailure('provider-error', 'The call’s number has no outbound trunk.') };
    }
    const room = `consult_${randomUUID()}`;
    const identity = `transfer_${destination.name}`;
    try {
      await this.control.createRoom({
        name: room,
        emptyTimeoutSeconds: 60,
        agentDispatch: {
          agentName: this.config.livekitAgentName,
          metadata: {
            external_id: call.external_id,
            consultation: { destination: destination.name, summary: request.summary ?? null },
          },
        },
      });
      const dial = await this.control.dialIntoRoom({
        room,
        to: number,
        from: call.assistant_phone_number,
        outboundTrunkId: call.outbound_trunk_id,
        participantIdentity: identity,
        participantName: destination.name,
        waitUntilAnswered: true,
      });
      if (dial.status === 'failed') return dial;
      await this.control.moveParticipant({
        fromRoom: room,
        identity: dial.participantIdentity,
        toRoom: call.external_id,
      });
      return { status: 'transferred' };
    } catch (error) {
      if (!(error instanceof CallControlError)) throw error;
      await this.control.removeParticipant({ room, identity }).catch(() => undefined);
      return { status: 'failed', ...callFailure('provider-error', error.message) };
    } finally {
      await this.control.endCall({ room }).catch((error: Error) => {
        this.logger.warn({ callId: call.id, room, error: error.message }, 'a consultation room was left open');
      });
    }
  }

  /** The provider's own words go to the log only: they may name its internals. */
  private logFailure(call: TransferCallRow, destination: StoredTransferDestination, failure: CallFailure): void {
    this.logger.warn(
      { callId: call.id, destination: destination.name, reason: failure.reason, detail: failure.detail },
      'a transfer did not connect',
    );
  }
}
