import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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
import { LiveSignals } from '@app/jobs';
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
const transferUnderWay = () =>
  new DomainError('transfer_in_progress', 409, { message: 'A transfer of this call is already under way.' });
const alreadyTransferred = () =>
  new DomainError('call_transferred', 409, { message: 'The call was already transferred.' });
/**
 * How long a transfer holds the call before another may begin: past the longest a warm transfer's person may ring
 * (LiveKit's 120 s) and be briefed (at most 60 s), with the provider's requests around it, so only a transfer lost with its process is overtaken.
 */
const TRANSFER_CLAIM_SECONDS = 240;
const noTransferUnderWay = () =>
  new DomainError('no_transfer', 409, { message: 'No transfer of this call is under way.' });
/**
 * How often a warm transfer looks again whether its person was briefed when no signal came: the briefing's route
 * signals the call (it may run in another API process), so this only bounds the wait for a lost signal.
 */
const BRIEFING_FALLBACK_POLL_MS = 2000;

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
    private readonly signals: LiveSignals,
  ) {}

  async transfer(externalId: string, request: TransferCallRequest): Promise<CallTransferEnvelope> {
    const call = await this.calls.findTransferCallByExternalId(externalId);
    if (!call) throw Errors.callNotFound();
    if (TERMINAL_CALL_STATUSES.includes(call.status)) throw callEnded(call.status);
    const destination = call.transfer_destinations.find((each) => each.name === request.destination);
    if (!destination) throw ValidationFailed.field('destination', 'The selected destination is invalid.');
    if (call.transfer_status === 'transferred') throw alreadyTransferred();
    if (!(await this.calls.claimTransfer(call.id, TERMINAL_CALL_STATUSES, TRANSFER_CLAIM_SECONDS))) {
      // Ended or handed over meanwhile, else another transfer holds it.
      const now = await this.calls.findTransferCallByExternalId(externalId);
      if (now && TERMINAL_CALL_STATUSES.includes(now.status)) throw callEnded(now.status);
      throw now?.transfer_status === 'transferred' ? alreadyTransferred() : transferUnderWay();
    }
    let outcome: TransferOutcome;
    try {
      outcome =
        destination.mode === 'warm' && destination.number
          ? await this.warm(call, destination.number, destination, request)
          : await this.cold(call, destination, request);
    } catch (error) {
      await this.calls.releaseTransfer(call.id);
      throw error;
    }
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
    await this.signals.publish({ callId: call.id, fromId: id });
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

  /**
   * The consultation room's agent has briefed the person of a warm transfer under way: the transfer goes on and joins
   * them to the caller.
   */
  async briefed(externalId: string): Promise<{ message: string }> {
    const callId = await this.calls.markTransferBriefed(externalId);
    if (callId !== null) {
      // Wakes the transfer waiting for it, in whichever API process it runs.
      await this.signals.publish({ callId, fromId: 0 });
      return { message: 'The person was briefed.' };
    }
    if (!(await this.calls.findByExternalId(externalId))) throw Errors.callNotFound();
    throw noTransferUnderWay();
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
      await this.briefing(call);
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

  /**
   * Waits until the agent in the consultation room briefed the person, at most TRANSFER_BRIEFING_TIMEOUT_SECONDS: a
   * person who answered is joined to the caller either way, briefed or not, rather than hung up on.
   */
  private async briefing(call: TransferCallRow): Promise<void> {
    const deadline = Date.now() + this.config.transferBriefingTimeoutSeconds * 1000;
    let wake: AbortController | undefined;
    // Subscribed before the first read, so a briefing stored after it is never missed.
    const stop = await this.signals.subscribe(call.id, () => wake?.abort());
    try {
      while (Date.now() < deadline) {
        wake = new AbortController();
        if (await this.calls.transferBriefed(call.id)) return;
        const wait = Math.min(BRIEFING_FALLBACK_POLL_MS, deadline - Date.now());
        await sleep(wait, undefined, { signal: wake.signal }).catch(() => undefined);
      }
    } finally {
      stop();
    }
    if (this.config.transferBriefingTimeoutSeconds > 0) {
      this.logger.warn({ callId: call.id }, 'the person was not briefed in time; joining them to the caller anyway');
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
