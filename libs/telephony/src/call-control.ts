import { AccessToken } from 'livekit-server-sdk';

/**
 * Why the provider could not connect a call it was asked to connect (a transfer, or a dial into a room): the far
 * end's answer where it gave one, or the provider's own failure.
 */
export type CallFailureReason =
  'busy' | 'no-answer' | 'declined' | 'unreachable' | 'refused' | 'caller-gone' | 'not-a-phone-call' | 'provider-error';

/** What the assistant can say for each reason (never the provider's own words, which may name its internals). */
export const CALL_FAILURE_MESSAGES: Record<CallFailureReason, string> = {
  busy: 'The line is busy.',
  'no-answer': 'Nobody answered.',
  declined: 'The call was declined.',
  unreachable: 'The number could not be reached.',
  refused: 'The phone network refused to connect the call.',
  'caller-gone': 'The caller is no longer on the line.',
  'not-a-phone-call': 'Only a phone call can be transferred.',
  'provider-error': 'The telephony provider could not connect the call.',
};

/** A call that did not connect: why, what to say, and what the provider said. */
export interface CallFailure {
  reason: CallFailureReason;
  /** `CALL_FAILURE_MESSAGES[reason]`: what the assistant can say. */
  message: string;
  /** The provider's own words, for the call's record and the logs. */
  detail: string;
  /** The SIP status the far end answered, when the failure came with one. */
  sipStatus: { code: number; status: string } | null;
}

export const callFailure = (
  reason: CallFailureReason,
  detail: string,
  sipStatus: CallFailure['sipStatus'] = null,
): CallFailure => ({ reason, message: CALL_FAILURE_MESSAGES[reason], detail, sipStatus });

/** A cold transfer: the provider hands the phone call over to `to` (SIP REFER) and the call leaves the room. */
export interface TransferRequest {
  room: string;
  /** The phone participant to transfer; the room's phone participant when omitted. */
  participantIdentity?: string;
  /** Where to: `tel:+E164` or a `sip:`/`sips:` URI, as `transferTarget` makes them. */
  to: string;
  /** Play a ringing tone to the caller while the transfer rings. */
  playDialtone?: boolean;
  /** How long the destination may ring before the transfer fails (whole seconds, 1 to 120; default 30). */
  ringingTimeoutSeconds?: number;
}

export type TransferOutcome = { status: 'transferred' } | ({ status: 'failed' } & CallFailure);

/** A person rung into a room (a warm transfer's consultation room): the SIP participant LiveKit makes of them. */
export interface DialIntoRoomRequest {
  room: string;
  /** E.164 number to call. */
  to: string;
  /** E.164 caller number presented to them. */
  from: string;
  /** The provider's outbound trunk of the caller number. */
  outboundTrunkId: string;
  participantIdentity: string;
  participantName?: string;
  /** What the agent gets to know about the person, as the participant's metadata. */
  metadata?: Record<string, unknown>;
  /** Answer only once they answered (or the call failed); otherwise as soon as it rings. Default true. */
  waitUntilAnswered?: boolean;
  /** How long their phone may ring (whole seconds, 1 to 60; default 30). */
  ringingTimeoutSeconds?: number;
  /** Digits to press once answered (an extension): 0-9, *, #, and `w` for a half-second pause. */
  dtmf?: string;
}

export type DialIntoRoomOutcome =
  | { status: 'answered' | 'ringing'; participantIdentity: string; sipCallId: string }
  | ({ status: 'failed' } & CallFailure);

export interface MoveParticipantRequest {
  fromRoom: string;
  identity: string;
  toRoom: string;
}

export interface RoomRequest {
  name: string;
  /** The room's metadata, which every participant of the room can read: nothing private. */
  metadata?: string;
  /** How long the room stays open while nobody joined it (seconds); the provider's default otherwise. */
  emptyTimeoutSeconds?: number;
  /** An agent dispatched into the room as it is made, with what it gets to know (its job's metadata). */
  agentDispatch?: { agentName: string; metadata: Record<string, unknown> };
}

export interface WebCallRequest {
  room: string;
  /** What the agent gets to know about the call (its `external_id` among it), as its dispatch's metadata. */
  metadata: Record<string, unknown>;
  /** The agent to dispatch; the configured one (`LIVEKIT_AGENT_NAME`) when omitted. */
  agentName?: string;
}

export interface ParticipantTokenRequest {
  room: string;
  identity: string;
  name?: string;
  /** How long the token may be used to join (seconds, 1 to 600; default 600). */
  ttlSeconds?: number;
  /** The participant's metadata, which everyone in the room can read: nothing private. */
  metadata?: string;
}

export interface ParticipantToken {
  /** A LiveKit access token (JWT) that may join `room` only, publish and subscribe, and nothing else. */
  token: string;
  expiresAt: Date;
  /** Where a client connects with it (`wss://`, or `ws://` for a local server). */
  url: string;
}

/**
 * Live control of calls in progress, at the same provider that places them (chosen by CALL_DIALER): transfers, a
 * warm transfer's steps, ending a call, and web calls. A transfer or a dial answers how it ended, never throws: a
 * busy line and a provider failure alike end it, and the reason says which. The room operations throw
 * `CallControlError`. DTMF is not here: a participant of the call sends it (the agent, `publishDtmf`), no server API
 * does.
 */
export interface CallControl {
  /** Cold transfer of a phone call (SIP REFER); a transferred call leaves the room. */
  transfer(request: TransferRequest): Promise<TransferOutcome>;
  /** Rings a person into a room, answering once they answered (or it failed). */
  dialIntoRoom(request: DialIntoRoomRequest): Promise<DialIntoRoomOutcome>;
  /** Moves a participant (a warm transfer's person, briefed) into another room that exists. */
  moveParticipant(request: MoveParticipantRequest): Promise<void>;
  /** Disconnects a participant; one who already left is no error. */
  removeParticipant(request: { room: string; identity: string }): Promise<void>;
  /** Makes a room (a warm transfer's consultation room); one that exists is left as it is. */
  createRoom(request: RoomRequest): Promise<void>;
  /** Ends a call for everyone in it by closing its room; a room already gone is no error. */
  endCall(request: { room: string }): Promise<void>;
  /** Makes a web call's room with the agent dispatched into it, before the person joins. */
  startWebCall(request: WebCallRequest): Promise<void>;
  /** A token for a web call's person to join its room. */
  participantToken(request: ParticipantTokenRequest): Promise<ParticipantToken>;
}

export const CALL_CONTROL = Symbol('CALL_CONTROL');

export type CallControlErrorReason = 'not-found' | 'unsupported' | 'provider-error';

/**
 * A room operation the provider refused or could not do: `not-found` (the room or participant is gone),
 * `unsupported` (the provider cannot do it at all: self-hosted LiveKit does not move participants), `provider-error`.
 */
export class CallControlError extends Error {
  constructor(
    message: string,
    readonly reason: CallControlErrorReason,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CallControlError';
  }
}

/** A transfer's destination as LiveKit takes it: a number as `tel:+E164`, a SIP URI as it is. */
export function transferTarget(destination: { number: string } | { sipUri: string }): string {
  return 'number' in destination ? `tel:${destination.number}` : destination.sipUri;
}

/** livekit/livekit pkg/config/config.go: the default `max_participant_identity_length` and `max_room_name_length`. */
const MAX_JOIN_NAME_BYTES = 256;

/** The longest a web call's person may take to join with their token (the contract's 10 minutes). */
export const MAX_PARTICIPANT_TOKEN_SECONDS = 600;

/** Checks a whole number of seconds within bounds: a caller's mistake, not the provider's, so it throws at once. */
export function seconds(name: string, value: number | undefined, fallback: number, max: number): number {
  const chosen = value ?? fallback;
  if (!Number.isInteger(chosen) || chosen < 1 || chosen > max) {
    throw new RangeError(`${name} must be a whole number of seconds from 1 to ${max}`);
  }
  return chosen;
}

/**
 * A LiveKit access token for a web call's person: `roomJoin` of that room only, with `canPublish`, `canSubscribe`
 * and `canPublishData`, no admin, create or list grant, valid to join for at most 10 minutes (LiveKit refreshes a
 * joined participant's token itself).
 */
export async function mintParticipantToken(
  credentials: { apiKey: string; apiSecret: string; url: string },
  request: ParticipantTokenRequest,
): Promise<ParticipantToken> {
  const ttl = seconds('ttlSeconds', request.ttlSeconds, MAX_PARTICIPANT_TOKEN_SECONDS, MAX_PARTICIPANT_TOKEN_SECONDS);
  // livekit/livekit pkg/service/utils.go `ValidateConnectRequest` refuses to join with any other (the default limits).
  for (const [name, value] of [
    ['identity', request.identity],
    ['room', request.room],
  ] as const) {
    const bytes = Buffer.byteLength(value);
    if (bytes < 1 || bytes > MAX_JOIN_NAME_BYTES) throw new RangeError(`${name} must be 1 to 256 bytes to join a room`);
  }
  const token = new AccessToken(credentials.apiKey, credentials.apiSecret, {
    identity: request.identity,
    name: request.name,
    metadata: request.metadata,
    ttl,
  });
  token.addGrant({ roomJoin: true, room: request.room, canPublish: true, canSubscribe: true, canPublishData: true });
  const jwt = await token.toJwt();
  const { exp } = JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8')) as { exp: number };
  return { token: jwt, expiresAt: new Date(exp * 1000), url: clientUrl(credentials.url) };
}

/** The URL a client connects to: LiveKit's clients speak WebSocket to the same host the server API is on. */
export const clientUrl = (url: string): string => url.replace(/^http(s?):\/\//, 'ws$1://');
