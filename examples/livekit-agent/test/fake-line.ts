import { voice } from '@livekit/agents';
import type { CallLine } from '../src/call.js';
import type { SipNumbers } from '../src/dispatch.js';
import type { AnsweredBy } from '../src/service-client.js';

/**
 * The telephone side of a call without LiveKit: the session runs with no room (text in, text out), and the test
 * plays the SIP participant: its numbers, whether it picks up, who answers, and hanging up.
 */
export class FakeLine implements CallLine {
  hangUps = 0;
  /** Keys the assistant pressed, in order. */
  readonly keysSent: string[] = [];
  private dtmfListener?: (digit: string) => void;
  agent?: voice.Agent;
  session?: voice.AgentSession;
  private readonly started: Promise<voice.AgentSession>;
  private markStarted!: (session: voice.AgentSession) => void;

  constructor(
    readonly numbers: SipNumbers,
    private readonly behaviour: {
      connection?: Awaited<ReturnType<CallLine['connected']>>;
      answeredBy?: AnsweredBy | null;
    } = {},
  ) {
    this.started = new Promise((resolve) => (this.markStarted = resolve));
  }

  /** Where LiveKit's line would pass the room: the framework's text-only session is as far as a test can go. */
  async start(session: voice.AgentSession, agent: voice.Agent): Promise<void> {
    this.session = session;
    this.agent = agent;
    await session.start({ agent });
    this.markStarted(session);
  }

  /** The session once the call runs in it. */
  running(): Promise<voice.AgentSession> {
    return this.started;
  }

  connected(): ReturnType<CallLine['connected']> {
    return Promise.resolve(this.behaviour.connection ?? { status: 'connected' });
  }

  answeredBy(): Promise<AnsweredBy | null> {
    return Promise.resolve(this.behaviour.answeredBy ?? null);
  }

  async hangUp(): Promise<void> {
    this.hangUps += 1;
  }

  async sendDtmf(digits: string): Promise<void> {
    this.keysSent.push(digits);
  }

  onDtmf(listener: (digit: string) => void): void {
    this.dtmfListener = listener;
  }

  /** The caller presses a key. */
  callerPresses(digit: string): void {
    this.dtmfListener?.(digit);
  }

  /** What LiveKit's room input does when the caller's participant leaves: it closes the session, saying why. */
  callerHangsUp(): void {
    this.session?.shutdown({ reason: voice.CloseReason.PARTICIPANT_DISCONNECTED });
  }
}
