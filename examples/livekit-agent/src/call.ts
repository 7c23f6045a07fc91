import { llm, log, voice } from '@livekit/agents';
import { buildAgent, type CallActions } from './assistant-agent.js';
import { type CallDispatch, type SipNumbers, sessionRequest } from './dispatch.js';
import { evaluateCall } from './post-call.js';
import {
  type AnsweredBy,
  atCallLimit,
  type CallClient,
  type CallReport,
  type CallSession,
  type CallStatus,
  type ControlMessage,
  type EndedReason,
  refusalOf,
  type ServiceClient,
  type SessionAssistant,
} from './service-client.js';
import { LINES_BUSY_MESSAGE } from './settings.js';
import { TranscriptStream } from './transcript-stream.js';

/** Why the agent itself ends a call: the session's close reason then. */
const END_REASONS = {
  maxDuration: 'max_duration',
  machine: 'answering_machine',
  owner: 'owner_hangup',
  transferred: 'transferred',
  assistantHangup: 'assistant_hangup',
} as const;

/**
 * The telephone side of a call: in production the LiveKit room with its SIP participant, or a web call's browser
 * (`livekit-line.ts`). Kept apart so the rest of the call runs, and is tested, without a room.
 */
export interface CallLine {
  /** The numbers of the call, as its SIP participant carries them (none for a web call). */
  readonly numbers: SipNumbers;
  /** Runs the session on the call's audio. */
  start(session: voice.AgentSession, agent: voice.Agent): Promise<void>;
  /** Resolves once the other party has picked up (at once for an inbound call), or with why it never did. */
  connected(): Promise<{ status: 'connected' } | { status: Extract<CallStatus, 'busy' | 'no-answer' | 'failed'> }>;
  /** A person or a machine, when the line can tell (an outbound call's answering machine detection); else null. */
  answeredBy(session: voice.AgentSession): Promise<AnsweredBy | null>;
  /** Ends the call for everyone on it. */
  hangUp(): Promise<void>;
  /** Presses keys on the call (LiveKit: `publishDtmf`), one after the other; `w` waits half a second. */
  sendDtmf(digits: string): Promise<void>;
  /** Calls `listener` with each key the caller presses. */
  onDtmf(listener: (digit: string) => void): void;
}

export interface CallOptions {
  dispatch: CallDispatch;
  line: CallLine;
  service: ServiceClient;
  /**
   * The session for the assistant (its language and voice pick the models), or for none: to say the service is away,
   * or the owner's refusal.
   */
  createSession(assistant: SessionAssistant | null): voice.AgentSession;
  unavailableMessage: string;
  /** Said before hanging up when the account has as many calls in progress as it may (`LINES_BUSY_MESSAGE`). */
  busyMessage?: string;
}

/**
 * One call from its dispatch to its final write: opens the session with the service, runs the assistant's agent on
 * the line (first message first), streams the turns, ends the call at `max_duration`, and reports how it ended,
 * with the post-call evaluation when the model filled it in. Resolves once the service has the final write (or it
 * could not be made).
 */
export async function runCall(options: CallOptions): Promise<void> {
  const { dispatch, line, service } = options;
  let opened: CallSession;
  try {
    opened = await service.openSession(dispatch.externalId, sessionRequest(dispatch, line.numbers));
  } catch (error) {
    const refusal = refusalOf(error);
    if (refusal !== undefined) {
      // The owner's server refused the caller: its words, if any, then the line is closed. The service ended the call.
      log().info({ externalId: dispatch.externalId }, 'the owner refused the call');
      await sayAndHangUp(options, refusal);
      return;
    }
    if (atCallLimit(error)) {
      // The owner's account is at its limit of calls in progress: the service recorded nothing, a retry would not
      // help the caller on the line. A polite word, then the line is closed.
      log().info({ externalId: dispatch.externalId }, 'the account has no call slot free; the caller is refused');
      await sayAndHangUp(options, options.busyMessage ?? LINES_BUSY_MESSAGE);
      return;
    }
    // Without the service there is no assistant to run: say so and hang up rather than make a conversation up.
    log().error({ error: (error as Error).message, externalId: dispatch.externalId }, 'no session for the call');
    await sayAndHangUp(options, options.unavailableMessage);
    return;
  }
  const call = service.forCall(opened);
  const transcript = new TranscriptStream(call, Date.now());
  let outcome: Outcome;
  try {
    outcome = await converse(options, opened, call, transcript);
  } catch (error) {
    log().error({ error: (error as Error).message, externalId: dispatch.externalId }, 'the call failed');
    await line.hangUp();
    outcome = { status: 'failed', duration: 0, answered_by: 'unknown' };
  }
  await finish(call, opened, transcript, outcome);
}

type Outcome = {
  status: CallStatus;
  duration: number;
  answered_by: AnsweredBy;
  ended_reason?: EndedReason;
  evaluation?: Record<string, unknown>;
};

/** The conversation itself, from the session's start on the line to its close. */
async function converse(
  options: CallOptions,
  opened: CallSession,
  call: CallClient,
  transcript: TranscriptStream,
): Promise<Outcome> {
  const { line } = options;
  const session = options.createSession(opened.assistant);
  transcript.follow(session);
  const closed = new Promise<string>((resolve) =>
    session.once(voice.AgentSessionEventTypes.Close, (event) => resolve(String(event.reason))),
  );
  const actions: CallActions = {
    pressKeys: async (digits) => {
      await line.sendDtmf(digits);
      transcript.dtmf(digits, 'outbound');
    },
    say: (text) => void session.say(text, { allowInterruptions: false }),
    end: (reason) => session.shutdown({ drain: true, reason }),
  };
  // The caller's keys: recorded, and told to the model, which may be running a menu of its own.
  line.onDtmf((digit) => {
    transcript.dtmf(digit, 'inbound');
    session.generateReply({ userInput: `(The caller pressed ${digit} on the keypad.)` });
  });
  const agent = buildAgent(opened, call, actions);
  await line.start(session, agent);

  const connection = await line.connected();
  if (connection.status !== 'connected') {
    await session.close();
    await line.hangUp();
    return { status: connection.status, duration: 0, answered_by: 'unknown' };
  }
  const connectedAt = Date.now();
  // A call the dialer placed stays `initiated` until someone picks up; from here its owner sees it under way.
  if (opened.call.status !== 'in-progress') {
    call
      .report(report(opened, { status: 'in-progress' }))
      .catch((error: unknown) =>
        log().warn({ error: (error as Error).message }, 'could not mark the call in progress'),
      );
  }
  const { initial_message: firstMessage, max_duration: maxDuration, post_call_schema: schema } = opened.assistant;
  // Listening for a machine starts before the first message, so the callee's first words are heard.
  let detected: AnsweredBy | null = null;
  line
    .answeredBy(session)
    .then((answeredBy) => {
      detected = answeredBy;
      if (answeredBy !== 'machine') return;
      // The assistant's voicemail setting: a message left on the machine, or none.
      const { voicemail } = opened;
      if (voicemail.action === 'leave_message' && voicemail.message) {
        session.interrupt();
        session.say(voicemail.message, { allowInterruptions: false, addToChatCtx: true });
      }
      session.shutdown({ drain: true, reason: END_REASONS.machine });
    })
    .catch((error: unknown) => log().warn({ error: (error as Error).message }, 'answering machine detection failed'));
  if (firstMessage) session.say(firstMessage);
  else session.generateReply();
  // The owner's hang-ups, words and instructions, for as long as the call runs.
  const control = new AbortController();
  call
    .followControl((message) => obey(session, agent, message), control.signal)
    .catch((error: unknown) => log().warn({ error: (error as Error).message }, 'the control stream failed'));
  const limit = setTimeout(() => {
    transcript.note(`The call reached the assistant's max_duration of ${maxDuration} s and was ended.`);
    session.shutdown({ reason: END_REASONS.maxDuration });
  }, maxDuration * 1000);

  const reason = await closed;
  clearTimeout(limit);
  control.abort();
  const duration = Math.round((Date.now() - connectedAt) / 1000);
  // The caller is not kept on the line while the model reads the call and the service is told.
  await line.hangUp();
  const evaluation =
    session.llm instanceof llm.LLM
      ? await evaluateCall(session.llm, schema, transcript.turns).catch((error: unknown) => {
          log().warn({ error: (error as Error).message }, 'post-call evaluation failed; reported without it');
          return undefined;
        })
      : undefined;
  return {
    status: statusFor(reason),
    ended_reason: endedReasonFor(reason),
    duration,
    // An inbound caller who said something is a person; nothing else tells.
    answered_by: detected ?? (transcript.turns.some((turn) => turn.role === 'user') ? 'human' : 'unknown'),
    ...(evaluation ? { evaluation } : {}),
  };
}

/**
 * What the owner asked of the live call: a hang-up ends the session (the final write confirms it to the service,
 * which would otherwise end the call at the provider), words are said as they are, an instruction joins the model's
 * context as the owner's, for its next answers.
 */
function obey(session: voice.AgentSession, agent: voice.Agent, message: ControlMessage): void {
  log().info({ action: message.action }, 'the owner steers the call');
  switch (message.action) {
    case 'hangup':
      session.shutdown({ reason: END_REASONS.owner });
      return;
    case 'say':
      if (message.text) session.say(message.text);
      return;
    case 'instruct': {
      if (!message.text) return;
      const context = agent.chatCtx.copy();
      context.addMessage({ role: 'system', content: `The owner of this line instructs you: ${message.text}` });
      agent
        .updateChatCtx(context)
        .catch((error: unknown) => log().warn({ error: (error as Error).message }, 'could not add the instruction'));
    }
  }
}

/** How a session's close reason is reported. */
function statusFor(reason: string): CallStatus {
  switch (reason) {
    case END_REASONS.maxDuration:
    case END_REASONS.machine:
    case END_REASONS.assistantHangup:
      return 'ended_by_assistant';
    case voice.CloseReason.PARTICIPANT_DISCONNECTED:
      return 'ended_by_customer';
    case voice.CloseReason.ERROR:
      return 'failed';
    default:
      return 'ended';
  }
}

/** Why the call ended, as the service records it; a transfer's is the service's own to say. */
function endedReasonFor(reason: string): EndedReason | undefined {
  switch (reason) {
    case END_REASONS.maxDuration:
      return 'max_duration';
    case END_REASONS.machine:
      return 'voicemail';
    case END_REASONS.assistantHangup:
      return 'assistant_hangup';
    case END_REASONS.transferred:
      return 'transferred';
    case voice.CloseReason.PARTICIPANT_DISCONNECTED:
      return 'customer_hangup';
    case voice.CloseReason.ERROR:
      return 'error';
    default:
      return undefined;
  }
}

async function finish(
  call: CallClient,
  opened: CallSession,
  transcript: TranscriptStream,
  outcome: Outcome,
): Promise<void> {
  // Every turn first: without a transcript in the final write, the service joins the turns it has.
  await transcript.close();
  await call.report(report(opened, outcome)).catch((error: unknown) =>
    // The service ends a call nobody reports as failed after its stale timeout.
    log().error({ error: (error as Error).message, externalId: call.externalId }, 'final write failed'),
  );
}

/** A write of the call: the fields the service requires every time, as the session gave them, and what is new. */
function report(opened: CallSession, outcome: Pick<CallReport, 'status'> & Partial<CallReport>): CallReport {
  return {
    assistant_id: opened.assistant.id,
    type: opened.call.type,
    // A web call has none, and needs none.
    client_phone_number: opened.call.client_phone_number ?? undefined,
    assistant_phone_number: opened.call.assistant_phone_number ?? undefined,
    ...outcome,
  };
}

/** Says `message` (nothing when null) to the caller without running any assistant, then hangs up. */
async function sayAndHangUp(options: CallOptions, message: string | null): Promise<void> {
  const { line } = options;
  try {
    if (message === null || (await line.connected()).status !== 'connected') return;
    const session = options.createSession(null);
    // No LLM and no ears: the agent can only say this.
    await line.start(session, new voice.Agent({ instructions: '', llm: null, stt: null }));
    await session.say(message, { allowInterruptions: false }).waitForPlayout();
    await session.close();
  } catch (error) {
    log().error({ error: (error as Error).message }, 'could not tell the caller why the call ends');
  } finally {
    await line.hangUp();
  }
}
