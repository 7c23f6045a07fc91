import { log, voice } from '@livekit/agents';
import type { CallLine } from './call.js';
import type { Consultation } from './dispatch.js';
import type { ServiceClient } from './service-client.js';

export interface ConsultationOptions {
  /** The call being transferred. */
  externalId: string;
  consultation: Consultation;
  /** The consultation room, with the person the service is ringing into it. */
  line: CallLine;
  service: ServiceClient;
  /** A session with the deployment's default models: the person hears the agent, the caller's assistant is not run. */
  createSession(): voice.AgentSession;
}

/** What the person hears before they are joined to the caller. */
export function briefing(consultation: Consultation): string {
  const summary = consultation.summary ? ` ${consultation.summary.trim()}` : '';
  return `Hello, I have a caller for you.${summary} I am connecting you now.`;
}

/**
 * A warm transfer's consultation room (LiveKit's warm-transfer flow): once the person answers, tells them what the call
 * is about, then tells the service, which joins them to the caller and closes this room. A person who never answers
 * is the service's to handle: it closes the room, and this job with it.
 */
export async function runConsultation(options: ConsultationOptions): Promise<void> {
  const { line, externalId } = options;
  const session = options.createSession();
  try {
    await line.start(
      session,
      new voice.Agent({ instructions: 'You hand a caller over to a colleague; you only say what you are given.' }),
    );
    const answered = await line.connected();
    if (answered.status !== 'connected') return;
    await session.say(briefing(options.consultation), { allowInterruptions: false }).waitForPlayout();
    await options.service.transferBriefed(externalId);
  } catch (error) {
    // The service joins the person after its briefing timeout anyway: better unbriefed than hung up on.
    log().warn({ error: (error as Error).message, externalId }, 'the person of a warm transfer was not briefed');
  } finally {
    await session.close().catch(() => undefined);
  }
}
