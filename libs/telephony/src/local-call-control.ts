import { randomBytes } from 'node:crypto';
import {
  callFailure,
  type CallControl,
  CallControlError,
  type CallControlErrorReason,
  type CallFailureReason,
  type DialIntoRoomOutcome,
  type DialIntoRoomRequest,
  mintParticipantToken,
  type MoveParticipantRequest,
  type ParticipantToken,
  type ParticipantTokenRequest,
  type RoomRequest,
  type TransferOutcome,
  type TransferRequest,
  type WebCallRequest,
} from './call-control';

export type CallControlOperation =
  | 'transfer'
  | 'dialIntoRoom'
  | 'moveParticipant'
  | 'removeParticipant'
  | 'createRoom'
  | 'endCall'
  | 'startWebCall'
  | 'participantToken';

/** An operation that connects a call, and answers how that ended. */
export type ConnectingOperation = 'transfer' | 'dialIntoRoom';
export type RoomOperation = Exclude<CallControlOperation, ConnectingOperation | 'participantToken'>;

/** One operation the local adapter was asked for: the room it was for, the request, and how it ended. */
export interface CallControlRecord {
  operation: CallControlOperation;
  room: string;
  request: object;
  /** A transfer's or dial's outcome, a failed operation's `{failed: reason}`, or null: done. */
  outcome: object | null;
}

/** Where the local adapter keeps what it was asked (a table, so every process and test sees it). */
export interface CallControlLog {
  record(entry: CallControlRecord): Promise<void>;
}

export interface LocalCallControlOptions {
  log: CallControlLog;
  /** The agent a web call dispatches when it names none. */
  agentName: string;
  /** Signs participant tokens: the configured LiveKit server; LiveKit's development one (`livekit-server --dev`) otherwise. */
  livekit?: { url: string; apiKey: string; apiSecret: string };
}

/** livekit/livekit cmd/server/main.go: the key pair and address of `livekit-server --dev`. */
const DEVELOPMENT_LIVEKIT = { url: 'ws://localhost:7880', apiKey: 'devkey', apiSecret: 'secret' };

/**
 * Call control for development and tests: reaches nobody, records every operation in the log, and answers as a
 * provider would whose every call connects. `answerNext` makes the next transfers or dials end as a person or a
 * network would end them (busy, unanswered, declined, ...); `failNext` makes a room operation fail. Participant
 * tokens are real: signed with the configured LiveKit key when there is one, with LiveKit's development key else.
 */
export class LocalCallControl implements CallControl {
  private readonly answers = new Map<ConnectingOperation, CallFailureReason[]>();
  private readonly failures = new Map<RoomOperation, CallControlErrorReason[]>();
  private readonly holds = new Map<ConnectingOperation, Promise<void>[]>();

  constructor(private readonly options: LocalCallControlOptions) {}

  /** The next `times` transfers (or dials) fail for `reason`. */
  answerNext(operation: ConnectingOperation, reason: CallFailureReason, times = 1): void {
    this.answers.set(operation, [
      ...(this.answers.get(operation) ?? []),
      ...Array<CallFailureReason>(times).fill(reason),
    ]);
  }

  /** The next `times` calls of a room operation throw `CallControlError` with `reason`. */
  failNext(operation: RoomOperation, reason: CallControlErrorReason = 'provider-error', times = 1): void {
    this.failures.set(operation, [
      ...(this.failures.get(operation) ?? []),
      ...Array<CallControlErrorReason>(times).fill(reason),
    ]);
  }

  /**
   * The next transfer (or dial) rings until the returned function is called, as a person who takes their time to
   * answer: what a second request meanwhile meets.
   */
  holdNext(operation: ConnectingOperation): () => void {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(operation, [...(this.holds.get(operation) ?? []), held]);
    return release;
  }

  async transfer(request: TransferRequest): Promise<TransferOutcome> {
    await this.holds.get('transfer')?.shift();
    const reason = this.answers.get('transfer')?.shift();
    const outcome: TransferOutcome = reason
      ? { status: 'failed', ...callFailure(reason, `Simulated transfer failure: ${reason}.`) }
      : { status: 'transferred' };
    await this.record('transfer', request.room, request, outcome);
    return outcome;
  }

  async dialIntoRoom(request: DialIntoRoomRequest): Promise<DialIntoRoomOutcome> {
    await this.holds.get('dialIntoRoom')?.shift();
    const reason = this.answers.get('dialIntoRoom')?.shift();
    const outcome: DialIntoRoomOutcome = reason
      ? { status: 'failed', ...callFailure(reason, `Simulated dial failure: ${reason}.`) }
      : {
          status: request.waitUntilAnswered === false ? 'ringing' : 'answered',
          participantIdentity: request.participantIdentity,
          sipCallId: `SCL_${randomBytes(9).toString('base64url')}`,
        };
    await this.record('dialIntoRoom', request.room, request, outcome);
    return outcome;
  }

  moveParticipant(request: MoveParticipantRequest): Promise<void> {
    return this.roomOperation('moveParticipant', request.fromRoom, request);
  }

  removeParticipant(request: { room: string; identity: string }): Promise<void> {
    return this.roomOperation('removeParticipant', request.room, request);
  }

  createRoom(request: RoomRequest): Promise<void> {
    return this.roomOperation('createRoom', request.name, request);
  }

  endCall(request: { room: string }): Promise<void> {
    return this.roomOperation('endCall', request.room, request);
  }

  startWebCall(request: WebCallRequest): Promise<void> {
    return this.roomOperation('startWebCall', request.room, {
      ...request,
      agentName: request.agentName ?? this.options.agentName,
    });
  }

  async participantToken(request: ParticipantTokenRequest): Promise<ParticipantToken> {
    const token = await mintParticipantToken(this.options.livekit ?? DEVELOPMENT_LIVEKIT, request);
    // The token itself is a credential: the record says who may join where, and until when.
    await this.record('participantToken', request.room, request, { expires_at: token.expiresAt.toISOString() });
    return token;
  }

  private async roomOperation(operation: RoomOperation, room: string, request: object): Promise<void> {
    const reason = this.failures.get(operation)?.shift();
    await this.record(operation, room, request, reason ? { failed: reason } : null);
    if (reason) throw new CallControlError(`Simulated provider failure: ${operation} (${reason}).`, reason);
  }

  private record(operation: CallControlOperation, room: string, request: object, outcome: object | null) {
    return this.options.log.record({ operation, room, request, outcome });
  }
}
