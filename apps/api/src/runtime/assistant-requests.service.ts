import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import {
  type AssistantRequestOutcome,
  type CallRow,
  Errors,
  MAX_SERVER_TIMEOUT_MS,
  TERMINAL_CALL_STATUSES,
} from '@app/contracts';
import { SecretBox, SecretContexts, signedWebhookHeaders } from '@app/crypto';
import {
  type AssistantRequestSettlement,
  AssistantRequestsRepository,
  RuntimeCallsRepository,
  type ServerHookRow,
} from '@app/database';
import { OutboundHttp, OutboundRequestError } from '@app/outbound-http';
import { ANSWER_MAX_BYTES, readAssistantRequestAnswer } from './assistant-request-answer';

/** The mark a new call is written with while its number's hook is asked: a racing session waits for the outcome. */
export const ASSISTANT_REQUEST_PENDING: AssistantRequestOutcome = {
  status: 'pending',
  reason: 'The server is being asked which assistant takes the call.',
};

/** What a refused call's stored outcome keeps beside status and reason: what the runtime says before hanging up. */
type StoredOutcome = AssistantRequestOutcome & { message?: string | null };

/**
 * How long after a call's creation a session waits for another session's hook before it records that none came: the
 * longest hook, and more.
 */
const WAIT_FOR_OTHER_SESSION_MS = MAX_SERVER_TIMEOUT_MS + 2000;
const WAIT_STEP_MS = 20;
/** The status a refused call ends with: the runtime hangs up on it, as the assistant side. */
const REFUSED_CALL_STATUS = 'ended_by_assistant';

/**
 * The ring-time hook: before an inbound call to a number with a `server_url` (its own, else its account's) runs, the
 * owner's server is asked, signed as the call webhooks are, which assistant takes it and with which variables, or
 * whether to refuse it. Asked once a call: the session that wrote the call asks and records the outcome on it;
 * any other session of the call (a retry, or one racing it) answers that outcome. Whatever goes wrong with the
 * server (no answer in time, an error, an answer the service cannot act on) leaves the call to the number's own
 * assistant, and the outcome says why in words the owner can read (naming the server's host at most).
 */
@Injectable()
export class AssistantRequests {
  private readonly logger = new Logger(AssistantRequests.name);

  constructor(
    private readonly requests: AssistantRequestsRepository,
    private readonly calls: RuntimeCallsRepository,
    private readonly ingestion: CallIngestion,
    private readonly http: OutboundHttp,
    private readonly secrets: SecretBox,
  ) {}

  /** Asks the hook about a call this session wrote (marked pending), records what came of it, and answers the call. */
  async ask(call: CallRow, hook: ServerHookRow): Promise<CallRow> {
    const settlement = await this.consult(call, hook);
    return (await this.requests.settle(call.id, settlement)) ?? (await this.reread(call));
  }

  /**
   * The call as its hook left it: when another session is still asking, once it has recorded the outcome (or, if
   * it never does, with a fallback recorded here); a call the hook refused is ended and answered as refused (403).
   */
  async settled(call: CallRow): Promise<CallRow> {
    let current = call;
    // From the call's creation, when the asking began: a call left pending long ago is settled at once.
    const deadline = Math.min(Date.now(), new Date(call.created_at).getTime()) + WAIT_FOR_OTHER_SESSION_MS;
    while (current.assistant_request?.status === 'pending') {
      if (Date.now() >= deadline) {
        // The session asking died before recording anything: the number's assistant takes the call.
        const reason = 'The session that asked the server ended before recording its answer.';
        current = (await this.requests.settle(current.id, { outcome: { status: 'fallback', reason } })) ?? current;
        if (current.assistant_request?.status === 'pending') current = await this.reread(current);
        break;
      }
      await sleep(WAIT_STEP_MS);
      current = await this.reread(current);
    }
    const outcome = current.assistant_request as StoredOutcome | null;
    if (outcome?.status !== 'rejected') return current;
    // The end is written after the outcome: a session that died in between leaves it to the next one.
    if (!TERMINAL_CALL_STATUSES.includes(current.status)) {
      await this.ingestion.write(current.external_id, { status: REFUSED_CALL_STATUS });
    }
    throw Errors.callRejected(outcome.message ?? null);
  }

  private async reread(call: CallRow): Promise<CallRow> {
    return (await this.calls.findByExternalId(call.external_id)) ?? call;
  }

  /** The server's answer, as what it does to the call. */
  private async consult(call: CallRow, hook: ServerHookRow): Promise<AssistantRequestSettlement> {
    const host = hostOf(hook.url);
    const fallback = (reason: string): AssistantRequestSettlement => ({ outcome: { status: 'fallback', reason } });
    let secret: string;
    try {
      secret = this.secrets.open(hook.secret_sealed ?? '', secretContext(hook));
    } catch {
      this.logger.warn({ callId: call.id, source: hook.source }, 'the ring-time hook’s secret could not be opened');
      return fallback('The hook’s signing secret could not be read; rotate it to ask the server again.');
    }
    const body = JSON.stringify({
      type: 'call.assistant_request',
      call: {
        external_id: call.external_id,
        client_phone_number: call.client_phone_number,
        assistant_phone_number: call.assistant_phone_number,
      },
      assistant_id: call.assistant_id,
    });
    const started = performance.now();
    let status: number;
    let answerBody: Buffer;
    try {
      const answer = await this.http.client.request(hook.url, {
        method: 'POST',
        headers: signedWebhookHeaders(secret, `msg_${randomUUID()}`, body),
        body,
        timeoutMs: hook.timeout_ms,
        maxBytes: ANSWER_MAX_BYTES,
        // The signed body is for the server named, not for wherever it redirects.
        confineToOrigin: true,
      });
      status = answer.status;
      answerBody = answer.body;
    } catch (error) {
      if (!(error instanceof OutboundRequestError)) throw error;
      return fallback(`${error.message}.`);
    }
    const took = `${Math.round(performance.now() - started)} ms`;
    if (status < 200 || status > 299) return fallback(`${host} answered ${status} in ${took}.`);
    const read = readAssistantRequestAnswer(answerBody);
    if ('invalid' in read) return fallback(`The answer of ${host} cannot be used: ${read.invalid}.`);
    const { answer } = read;
    if (answer.reject) {
      const said = answer.reject.message === null ? 'without a message' : 'with a message';
      return {
        outcome: {
          status: 'rejected',
          reason: `${host} refused the call in ${took}, ${said}.`,
          message: answer.reject.message,
        },
      };
    }
    let assistantId: number | undefined;
    if (answer.assistantId !== undefined && answer.assistantId !== call.assistant_id) {
      const named = await this.requests.findAssistant(call.user_id, answer.assistantId);
      const refuse = (why: string) => fallback(`${host} named assistant ${answer.assistantId}, ${why}.`);
      // Another account's assistant reads exactly as one that does not exist.
      if (!named) return refuse('which is not one of this account’s assistants');
      if (named.status !== 'active') return refuse('which is inactive');
      if (named.type !== 'inbound') return refuse('which is an outbound assistant; inbound calls go to inbound ones');
      assistantId = named.id;
    }
    const variables = answer.variables ?? {};
    const count = Object.keys(variables).length;
    const who = assistantId === undefined ? 'the number’s assistant' : `assistant ${assistantId}`;
    const reason =
      `${host} answered in ${took}: ${who} takes the call` +
      (count === 0 ? '.' : `, with ${count} variable${count === 1 ? '' : 's'}.`);
    return { outcome: { status: 'answered', reason }, assistantId, variables };
  }
}

function secretContext(hook: ServerHookRow): string {
  return hook.source === 'number'
    ? SecretContexts.phoneNumberServerSecret(hook.owner_id)
    : SecretContexts.accountServerSecret(hook.owner_id);
}

/** The host of a stored URL (validated when written), the most of it an outcome names. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'the server';
  }
}
