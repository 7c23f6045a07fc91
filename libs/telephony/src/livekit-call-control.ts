import { RoomAgentDispatch, RoomServiceClient, SipClient } from 'livekit-server-sdk';
import {
  callFailure,
  type CallControl,
  CallControlError,
  type CallFailure,
  type CallFailureReason,
  type DialIntoRoomOutcome,
  type DialIntoRoomRequest,
  MAX_PARTICIPANT_TOKEN_SECONDS,
  mintParticipantToken,
  type MoveParticipantRequest,
  type ParticipantToken,
  type ParticipantTokenRequest,
  type RoomRequest,
  seconds,
  type TransferOutcome,
  type TransferRequest,
  type WebCallRequest,
} from './call-control';
import type { LiveKitSettings } from './livekit-sip-provisioner';

const REQUEST_TIMEOUT_SECONDS = 10;

/** livekit-server-sdk `DEFAULT_RINGING_TIMEOUT_SECONDS`, the SDK's own default. */
const DEFAULT_RINGING_SECONDS = 30;
/**
 * LiveKit gives a `CreateSIPParticipant` that waits for the answer 80 seconds (livekit/livekit pkg/service/sip.go
 * `CreateSIPParticipant`) and then answers `request timed out` while the phone may still ring: a dial into a room
 * rings for at most 60.
 */
const MAX_DIAL_RINGING_SECONDS = 60;
/** A transfer holds its caller (and the request) for as long as the destination rings. */
const MAX_TRANSFER_RINGING_SECONDS = 120;

const ringingSeconds = (value: number | undefined, max: number) =>
  seconds('ringingTimeoutSeconds', value, DEFAULT_RINGING_SECONDS, max);

/** livekit/protocol livekit/attrs.go `AttrSIPCallID`: the attribute that makes a participant a phone call. */
const SIP_CALL_ID_ATTRIBUTE = 'sip.callID';

/** What the SIP status the far end answered means (RFC 3261 section 21, RFC 3398 for the 6xx). */
function reasonOfSipStatus(code: number): CallFailureReason {
  if (code === 486 || code === 600) return 'busy';
  // Request Timeout, Temporarily Unavailable (the usual no-answer of a carrier), Request Terminated (rang out).
  if (code === 408 || code === 480 || code === 487) return 'no-answer';
  if (code === 603 || code === 607 || code === 608) return 'declined';
  if ([404, 410, 484, 485, 604].includes(code)) return 'unreachable';
  // A carrier's server failing is the network's failure; any other answer refuses the call (or the REFER).
  return code >= 500 && code < 600 ? 'provider-error' : 'refused';
}

/**
 * What a failed `TransferSIPParticipant` or `CreateSIPParticipant` means. A SIP status comes as the Twirp error's
 * `sip_status_code`/`sip_status` metadata (livekit/protocol livekit/sip.go `SIPStatus.TwirpErrorMeta`, which
 * livekit-server-sdk surfaces as `SipCallError`). Without one: the ringing ran out (livekit/sip pkg/sip/protocol.go
 * `ErrSIPRequestTimeout` "sip request timed out", the bridge's "refer canceled", or the server's own deadline,
 * psrpc's "request timed out"); a transfer's participant not in the room (`not_found`, pkg/service/sip.go
 * `transferSIPParticipantRequest`); a participant that is no phone call ("no SIP session associated with
 * participant"); or LiveKit's own failure.
 */
function failureOf(error: unknown, notFound: CallFailureReason): CallFailure {
  const { code, metadata, message } = error as { code?: string; metadata?: Record<string, string>; message?: string };
  const detail = message ?? String(error);
  const sipCode = Number(metadata?.sip_status_code);
  if (sipCode >= 300) {
    return callFailure(reasonOfSipStatus(sipCode), detail, { code: sipCode, status: metadata?.sip_status ?? '' });
  }
  if ((code === 'canceled' || code === 'deadline_exceeded') && /request timed out|refer canceled/.test(detail)) {
    return callFailure('no-answer', detail);
  }
  if (code === 'not_found') return callFailure(notFound, detail);
  if (code === 'invalid_argument' && detail.includes('no SIP session associated with participant')) {
    return callFailure('not-a-phone-call', detail);
  }
  return callFailure('provider-error', detail);
}

/** A room operation's failure, as `CallControlError`. */
function controlError(what: string, error: unknown): CallControlError {
  const { code, message } = error as { code?: string; message?: string };
  // livekit/livekit pkg/service/roommanager.go `MoveParticipant`: the open-source server answers "not implemented".
  const reason =
    code === 'not_found'
      ? 'not-found'
      : code === 'unknown' && /not implemented/.test(message ?? '')
        ? 'unsupported'
        : 'provider-error';
  return new CallControlError(`LiveKit could not ${what}: ${message ?? String(error)}`, reason, { cause: error });
}

const isNotFound = (error: unknown) => (error as { code?: string }).code === 'not_found';

/**
 * Call control through LiveKit's Twirp API (`livekit-server-sdk`): `TransferSIPParticipant` for a cold transfer,
 * `CreateSIPParticipant` with `wait_until_answered`, `MoveParticipant`, `RemoveParticipant`, `CreateRoom` (with the
 * agent dispatched through `RoomConfiguration.agents`) and `DeleteRoom`; participant tokens signed with the API key.
 * The warm transfer is LiveKit's documented one (agents' `WarmTransferTask`): the caller held, the person rung into a
 * consultation room and briefed there, then moved into the caller's room. `MoveParticipant` is LiveKit Cloud's: the
 * open-source server answers it `unsupported`.
 */
export class LiveKitCallControl implements CallControl {
  private readonly rooms: RoomServiceClient;
  private readonly sip: SipClient;

  constructor(
    private readonly settings: LiveKitSettings,
    private readonly agentName: string,
  ) {
    const options = { requestTimeout: settings.requestTimeoutSeconds ?? REQUEST_TIMEOUT_SECONDS };
    this.rooms = new RoomServiceClient(settings.url, settings.apiKey, settings.apiSecret, options);
    this.sip = new SipClient(settings.url, settings.apiKey, settings.apiSecret, options);
  }

  async transfer(request: TransferRequest): Promise<TransferOutcome> {
    const ringing = ringingSeconds(request.ringingTimeoutSeconds, MAX_TRANSFER_RINGING_SECONDS);
    try {
      const identity = request.participantIdentity ?? (await this.phoneParticipant(request.room));
      if (identity === undefined) {
        return { status: 'failed', ...callFailure('caller-gone', `No phone call is in the room ${request.room}.`) };
      }
      // The SDK waits as long as the destination may ring (livekit-server-sdk dialTimeout.ts `dialRequestTimeout`).
      await this.sip.transferSipParticipant(request.room, identity, request.to, {
        playDialtone: request.playDialtone,
        ringingTimeout: ringing,
      });
      return { status: 'transferred' };
    } catch (error) {
      return { status: 'failed', ...failureOf(error, 'caller-gone') };
    }
  }

  async dialIntoRoom(request: DialIntoRoomRequest): Promise<DialIntoRoomOutcome> {
    const ringing = ringingSeconds(request.ringingTimeoutSeconds, MAX_DIAL_RINGING_SECONDS);
    const waitUntilAnswered = request.waitUntilAnswered ?? true;
    try {
      const participant = await this.sip.createSipParticipant(request.outboundTrunkId, request.to, request.room, {
        fromNumber: request.from,
        participantIdentity: request.participantIdentity,
        participantName: request.participantName ?? request.to,
        participantMetadata: request.metadata ? JSON.stringify(request.metadata) : undefined,
        dtmf: request.dtmf,
        ringingTimeout: ringing,
        waitUntilAnswered,
      });
      return {
        status: waitUntilAnswered ? 'answered' : 'ringing',
        participantIdentity: participant.participantIdentity,
        sipCallId: participant.sipCallId,
      };
    } catch (error) {
      // A trunk LiveKit does not hold is `not_found` too: the deployment's failure, not the person's.
      return { status: 'failed', ...failureOf(error, 'provider-error') };
    }
  }

  async moveParticipant(request: MoveParticipantRequest): Promise<void> {
    try {
      await this.rooms.moveParticipant(request.fromRoom, request.identity, request.toRoom);
    } catch (error) {
      throw controlError('move the participant', error);
    }
  }

  async removeParticipant(request: { room: string; identity: string }): Promise<void> {
    try {
      await this.rooms.removeParticipant(request.room, request.identity);
    } catch (error) {
      if (!isNotFound(error)) throw controlError('remove the participant', error);
    }
  }

  async createRoom(request: RoomRequest): Promise<void> {
    const dispatch = request.agentDispatch;
    try {
      await this.rooms.createRoom({
        name: request.name,
        metadata: request.metadata,
        emptyTimeout: request.emptyTimeoutSeconds,
        agents: dispatch
          ? [new RoomAgentDispatch({ agentName: dispatch.agentName, metadata: JSON.stringify(dispatch.metadata) })]
          : undefined,
      });
    } catch (error) {
      throw controlError('create the room', error);
    }
  }

  async endCall(request: { room: string }): Promise<void> {
    try {
      await this.rooms.deleteRoom(request.room);
    } catch (error) {
      // livekit/livekit pkg/service/roomservice.go `DeleteRoom`: a room that is gone is `not_found`; ended all the same.
      if (!isNotFound(error)) throw controlError('end the call', error);
    }
  }

  startWebCall(request: WebCallRequest): Promise<void> {
    // The room waits for its person as long as their token may be used to join. The agent's metadata goes in its
    // dispatch, never the room's metadata, which the person's browser can read.
    return this.createRoom({
      name: request.room,
      emptyTimeoutSeconds: MAX_PARTICIPANT_TOKEN_SECONDS,
      agentDispatch: { agentName: request.agentName ?? this.agentName, metadata: request.metadata },
    });
  }

  participantToken(request: ParticipantTokenRequest): Promise<ParticipantToken> {
    return mintParticipantToken(this.settings, request);
  }

  /** The room's phone call: the participant LiveKit's SIP bridge put there (it carries `sip.callID`). */
  private async phoneParticipant(room: string): Promise<string | undefined> {
    const participants = await this.rooms.listParticipants(room);
    return participants.find((participant) => participant.attributes[SIP_CALL_ID_ATTRIBUTE])?.identity;
  }
}
