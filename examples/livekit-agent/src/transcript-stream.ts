import { type llm, log, voice } from '@livekit/agents';
import { type CallClient, type CallEvent, ServiceError } from './service-client.js';

/** The service's limits on one events post. */
const MAX_EVENTS_PER_REQUEST = 100;
const MAX_EVENT_TEXT = 10_000;
/** Rounds of sending what is left when the call ends, each after the client's own retries. */
const CLOSING_ROUNDS = 3;
const CLOSING_PAUSE_MS = 1_000;

export interface Turn {
  role: 'assistant' | 'user';
  text: string;
}

/**
 * Streams a call's transcript turns (and notes) to the service while the call runs. Each event gets the next `seq`
 * when it happens and keeps it: a post that fails leaves its events pending, and the next turn, or the end of the
 * call, sends them again with the same numbers, so a post whose answer was lost after the service stored it records
 * nothing twice. One post is in flight at a time.
 */
export class TranscriptStream {
  /** Every turn so far, in order: what the post-call evaluation reads. */
  readonly turns: Turn[] = [];
  private seq = 0;
  private pending: CallEvent[] = [];
  private sending: Promise<void> = Promise.resolve();

  /** @param startedAt - the call's start (ms since the epoch), which turn offsets count from */
  constructor(
    private readonly call: CallClient,
    private readonly startedAt: number,
  ) {}

  /** Records each message the session adds to the conversation, the caller's and the assistant's. */
  follow(session: voice.AgentSession): void {
    session.on(voice.AgentSessionEventTypes.ConversationItemAdded, ({ item }) => {
      if (item.type === 'message') this.addMessage(item);
    });
  }

  addMessage(message: llm.ChatMessage): void {
    const text = message.textContent?.trim();
    if (!text || (message.role !== 'user' && message.role !== 'assistant')) return;
    this.turns.push({ role: message.role, text });
    this.push({
      seq: ++this.seq,
      type: 'transcript',
      role: message.role,
      text: text.slice(0, MAX_EVENT_TEXT),
      at: new Date(message.createdAt).toISOString(),
      ...this.span(message.metrics.startedSpeakingAt, message.metrics.stoppedSpeakingAt),
    });
  }

  /** Something about the call that is not a turn (why it ended, who answered), in the call's event list. */
  note(text: string): void {
    this.push({ seq: ++this.seq, type: 'note', text: text.slice(0, MAX_EVENT_TEXT), at: new Date().toISOString() });
  }

  /** Keys pressed on the call: the caller's (`inbound`) or the assistant's (`outbound`). */
  dtmf(digits: string, direction: 'inbound' | 'outbound'): void {
    this.push({ seq: ++this.seq, type: 'dtmf', digits, direction, at: new Date().toISOString() });
  }

  /** Sends what is still pending; the call's final write comes after, so the service's transcript has every turn. */
  async close(): Promise<void> {
    for (let round = 1; round <= CLOSING_ROUNDS && this.pending.length > 0; round++) {
      if (round > 1) await new Promise((resolve) => setTimeout(resolve, CLOSING_PAUSE_MS));
      await this.flushSoon();
    }
    if (this.pending.length > 0) {
      log().warn(
        { events: this.pending.length },
        'transcript events could not be delivered; the call ends without them',
      );
    }
  }

  private push(event: CallEvent): void {
    this.pending.push(event);
    void this.flushSoon();
  }

  private flushSoon(): Promise<void> {
    this.sending = this.sending.then(() => this.flush());
    return this.sending;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending.slice(0, MAX_EVENTS_PER_REQUEST);
      try {
        await this.call.recordEvents(batch);
      } catch (error) {
        if (error instanceof ServiceError && !error.retryable) {
          // Refused as it is (the call gone, a token expired): sending it again cannot help.
          log().error({ error: error.message, events: batch.length }, 'transcript events refused; dropped');
        } else {
          log().warn({ error: (error as Error).message }, 'transcript events not delivered yet; kept to send again');
          return;
        }
      }
      this.pending.splice(0, batch.length);
    }
  }

  /** Where a turn sits in the call, when the framework timed it (its timestamps are seconds since the epoch). */
  private span(startedAt?: number, stoppedAt?: number): { start_ms?: number; end_ms?: number } {
    if (startedAt === undefined || stoppedAt === undefined) return {};
    const offset = (seconds: number) => Math.max(0, Math.round(seconds * 1000 - this.startedAt));
    return { start_ms: offset(startedAt), end_ms: offset(stoppedAt) };
  }
}
