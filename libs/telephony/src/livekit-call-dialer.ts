import { AgentDispatchClient, RoomServiceClient, SipClient } from 'livekit-server-sdk';
import { CallDialError, type CallDialer, type DialRequest, noOutboundTrunk } from './call-dialer';
import type { LiveKitSettings } from './livekit-sip-provisioner';

/** How long one provider call may take before the dial fails. */
const REQUEST_TIMEOUT_SECONDS = 10;
/** How long the callee's phone may ring before LiveKit gives up. */
const RINGING_TIMEOUT_SECONDS = 45;

/** A LiveKit outbound trunk id as LiveKit makes them (`ST_` and base57 characters), within what a row stores. */
export const OUTBOUND_TRUNK_ID = /^ST_[A-Za-z0-9]{1,61}$/;

/** The participant identity of the callee in the call's room; one per room, which makes a repeated dial visible. */
export const CALLEE_IDENTITY = 'callee';

/**
 * Outbound calls through LiveKit: an explicit agent dispatch of the assistant's agent into a room named after the
 * attempt, then `CreateSIPParticipant` on the caller number's outbound trunk, which rings the callee into that
 * room. The request's metadata (the call's `external_id`, which is the room's name and the id the agent opens the
 * call's session under, with the lead's variables) travels as the dispatch's and the participant's metadata. A
 * resumed attempt first asks LiveKit what the earlier try already did, so nobody is dispatched or called twice.
 */
export class LiveKitCallDialer implements CallDialer {
  private readonly dispatches: AgentDispatchClient;
  private readonly rooms: RoomServiceClient;
  private readonly sip: SipClient;

  constructor(
    settings: LiveKitSettings,
    private readonly agentName: string,
  ) {
    const options = { requestTimeout: REQUEST_TIMEOUT_SECONDS };
    this.dispatches = new AgentDispatchClient(settings.url, settings.apiKey, settings.apiSecret, options);
    this.rooms = new RoomServiceClient(settings.url, settings.apiKey, settings.apiSecret, options);
    this.sip = new SipClient(settings.url, settings.apiKey, settings.apiSecret, options);
  }

  async dial(request: DialRequest): Promise<void> {
    // The placer refuses such a call before it reaches a dialer; kept for any other caller of the port.
    if (!request.outboundTrunkId) throw new CallDialError(noOutboundTrunk(request.from));
    const room = request.attemptId;
    const metadata = JSON.stringify(request.metadata);
    const dispatched =
      request.resumed &&
      (await this.step('list the agent dispatches', () => this.dispatches.listDispatch(room))).some(
        (dispatch) => dispatch.agentName === this.agentName,
      );
    if (!dispatched) {
      await this.step('dispatch the agent', () => this.dispatches.createDispatch(room, this.agentName, { metadata }));
    }
    if (request.resumed && (await this.calleeJoined(room))) return;
    const trunkId = request.outboundTrunkId;
    await this.step('place the call', () =>
      this.sip.createSipParticipant(trunkId, request.to, room, {
        fromNumber: request.from,
        participantIdentity: CALLEE_IDENTITY,
        participantName: request.to,
        participantMetadata: metadata,
        ringingTimeout: RINGING_TIMEOUT_SECONDS,
      }),
    );
  }

  /** Whether LiveKit holds the outbound trunk (one an operator names for a number bought from a carrier). */
  async hasOutboundTrunk(trunkId: string): Promise<boolean> {
    const trunks = await this.step('list the outbound trunks', () =>
      this.sip.listSipOutboundTrunk({ trunkIds: [trunkId] }),
    );
    // LiveKit answers an empty item in the place of an id it does not hold.
    return trunks.some((trunk) => trunk?.sipTrunkId === trunkId);
  }

  private async calleeJoined(room: string): Promise<boolean> {
    try {
      return (await this.rooms.listParticipants(room)).some((participant) => participant.identity === CALLEE_IDENTITY);
    } catch (error) {
      // A room that does not exist has nobody in it.
      if ((error as { code?: string }).code === 'not_found') return false;
      throw new CallDialError(`LiveKit could not list the room's participants: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private async step<T>(what: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new CallDialError(`LiveKit could not ${what}: ${(error as Error).message}`, { cause: error });
    }
  }
}
