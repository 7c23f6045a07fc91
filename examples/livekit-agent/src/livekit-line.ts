import { AutoSubscribe, type JobContext, voice } from '@livekit/agents';
import { DisconnectReason, type RemoteParticipant, RoomEvent } from '@livekit/rtc-node';
import type { CallLine } from './call.js';
import type { SipNumbers } from './dispatch.js';
import type { AnsweredBy, CallType } from './service-client.js';

/** LiveKit's attribute of a SIP participant telling where its call is: dialing, ringing, active, hangup. */
const CALL_STATUS = 'sip.callStatus';

/**
 * A call as LiveKit carries it: the job's room with the person in it: the SIP participant of a phone call (the caller
 * of an inbound call, the callee the dialer is ringing), or the browser's participant of a web call, who is
 * connected as soon as they joined and presses no keys. (Nothing here runs in the tests: they have no LiveKit server.)
 */
export class LiveKitLine implements CallLine {
  private constructor(
    private readonly ctx: JobContext,
    private readonly participant: RemoteParticipant,
    private readonly outbound: boolean,
  ) {}

  /**
   * Joins the room and waits for its person (any participant but an agent): the SIP participant, which the dialer
   * adds as soon as it starts ringing, or a web call's browser.
   */
  static async join(ctx: JobContext, type: CallType): Promise<LiveKitLine> {
    await ctx.connect(undefined, AutoSubscribe.AUDIO_ONLY);
    return new LiveKitLine(ctx, await ctx.waitForParticipant(), type === 'outbound');
  }

  get numbers(): SipNumbers {
    const attributes = this.participant.attributes;
    return { client: attributes['sip.phoneNumber'] ?? null, trunk: attributes['sip.trunkPhoneNumber'] ?? null };
  }

  start(session: voice.AgentSession, agent: voice.Agent): Promise<void> {
    return session.start({
      agent,
      room: this.ctx.room,
      inputOptions: { participantIdentity: this.participant.identity },
    });
  }

  /** An inbound or web call is connected when the agent hears it; an outbound one once the callee picks up. */
  connected(): ReturnType<CallLine['connected']> {
    if (!this.outbound || this.participant.attributes[CALL_STATUS] === 'active') {
      return Promise.resolve({ status: 'connected' });
    }
    const room = this.ctx.room;
    return new Promise((resolve) => {
      const settle = (result: Awaited<ReturnType<CallLine['connected']>>) => {
        room.off(RoomEvent.ParticipantAttributesChanged, onAttributes);
        room.off(RoomEvent.ParticipantDisconnected, onLeft);
        resolve(result);
      };
      const onAttributes = (changed: Record<string, string>, participant: { identity: string }) => {
        if (participant.identity === this.participant.identity && changed[CALL_STATUS] === 'active') {
          settle({ status: 'connected' });
        }
      };
      const onLeft = (participant: RemoteParticipant) => {
        if (participant.identity !== this.participant.identity) return;
        const reason = participant.disconnectReason;
        settle({
          status:
            reason === DisconnectReason.USER_UNAVAILABLE
              ? 'no-answer'
              : reason === DisconnectReason.USER_REJECTED
                ? 'busy'
                : 'failed',
        });
      };
      room.on(RoomEvent.ParticipantAttributesChanged, onAttributes);
      room.on(RoomEvent.ParticipantDisconnected, onLeft);
    });
  }

  /** The framework's answering machine detection, on the callee's first words; an inbound caller is not checked. */
  async answeredBy(session: voice.AgentSession): Promise<AnsweredBy | null> {
    if (!this.outbound) return null;
    const detector = new voice.AMD(session, { participantIdentity: this.participant.identity });
    try {
      const { category } = await detector.execute();
      if (category === voice.AMDCategory.HUMAN) return 'human';
      return category === voice.AMDCategory.UNCERTAIN ? 'unknown' : 'machine';
    } finally {
      await detector.aclose();
    }
  }

  /** RFC 4733's event codes: 0-9, then * (10) and # (11); `w` is a half-second pause between keys. */
  async sendDtmf(digits: string): Promise<void> {
    for (const digit of digits) {
      if (digit === 'w') {
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      const code = digit === '*' ? 10 : digit === '#' ? 11 : Number(digit);
      await this.ctx.room.localParticipant!.publishDtmf(code, digit);
    }
  }

  /** The keys the call's SIP participant presses (LiveKit's bridge publishes them into the room). */
  onDtmf(listener: (digit: string) => void): void {
    this.ctx.room.on(RoomEvent.DtmfReceived, (_code, digit, participant) => {
      if (participant.identity === this.participant.identity) listener(digit);
    });
  }

  /** Deleting the room ends the SIP call, whoever is still on it. */
  hangUp(): Promise<void> {
    return this.ctx.deleteRoom();
  }
}
