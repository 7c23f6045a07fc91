import { Injectable } from '@nestjs/common';
import { CallIngestion } from '@app/calls';
import {
  type CallSessionEnvelope,
  type CallSessionRequest,
  DEFAULT_END_CALL,
  DomainError,
  dialledNames,
  nationalNumberCandidates,
  reportedNumber,
  TERMINAL_CALL_STATUSES,
  toCallSession,
  ValidationFailed,
} from '@app/contracts';
import { RuntimeCallsRepository, type ServerHookRow } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { generateToken, hashToken } from '@app/platform';
import { ASSISTANT_REQUEST_PENDING, AssistantRequests } from './assistant-requests.service';
import { builtInActions, sessionVoicemail } from './built-in-actions';
import { fillVariables, mergeCallVariables } from './call-variables';

/** A call token outlives the longest the call may run by this much: the final write comes after the hang-up. */
export const CALL_TOKEN_GRACE_SECONDS = 600;

const noAssistantAnswers = () =>
  new DomainError('no_assistant_answers', 404, { message: 'No assistant answers this number.' });
const callEnded = (status: string) =>
  new DomainError('call_ended', 409, { message: `The call is already ${status}; it has no session to open.` });

/**
 * Opens the voice runtime's session of a call: finds or creates the call (an inbound call by the number dialled, an
 * outbound one as the dialer or `make_call` wrote it, a web call as its route wrote it), and answers what an agent needs to run it, with a token for
 * that call alone. Idempotent on the external id: a retry, or many at once, make one call.
 */
@Injectable()
export class CallSessions {
  constructor(
    private readonly calls: RuntimeCallsRepository,
    private readonly ingestion: CallIngestion,
    private readonly jobs: JobQueue,
    private readonly assistantRequests: AssistantRequests,
  ) {}

  async open(
    externalId: string,
    request: CallSessionRequest,
  ): Promise<{ created: boolean; body: CallSessionEnvelope }> {
    let call = await this.calls.findByExternalId(externalId);
    let created = false;
    if (!call) {
      const { client_phone_number: client, assistant_phone_number: own } = request;
      // A web call is between no phone numbers: its assistant is named (`assistant_id`), its numbers kept if given.
      const web = request.type === 'web';
      if (!web && (!client || !own)) {
        // A call the service placed is known by its id alone; one it has not seen is written from these.
        throw new ValidationFailed({
          ...(client ? {} : { client_phone_number: ['The client phone number field is required.'] }),
          ...(own ? {} : { assistant_phone_number: ['The assistant phone number field is required.'] }),
        });
      }
      const holder = await this.assistantFor(request.type, own ?? null, request.assistant_id);
      // The same write as the runtime's PUT, so a session racing another (or the PUT) still makes one call; with a
      // ring-time hook, marked as asking it, and left as it is when a racing session wrote it first.
      const written = await this.ingestion.write(
        externalId,
        {
          assistant_id: holder.assistantId,
          type: request.type,
          status: 'in-progress',
          client_phone_number: client ?? undefined,
          assistant_phone_number: holder.number ?? undefined,
          campaign_id: request.campaign_id ?? null,
          lead_id: request.lead_id ?? null,
          variables: request.variables,
        },
        'runtime-token',
        holder.hook ? { assistantRequest: ASSISTANT_REQUEST_PENDING } : undefined,
        // A call starting: beyond its account's limit of calls in progress it is refused (429), and not written.
        'within-account-limit',
      );
      created = written.created;
      call = written.row;
      if (created && holder.hook) call = await this.assistantRequests.ask(call, holder.hook);
    }
    // A call the hook was asked about: its outcome (waited for while another session asks; a refusal is a 403).
    if (call.assistant_request) call = await this.assistantRequests.settled(call);
    if (TERMINAL_CALL_STATUSES.includes(call.status)) throw callEnded(call.status);
    // The dialer's call lost its assistant since it was placed: nothing can answer it.
    if (call.assistant_id === null) throw noAssistantAnswers();
    const assistant = await this.calls.findSessionAssistantById(call.assistant_id, call.lead_id);
    if (!assistant) throw noAssistantAnswers();

    // The hook's variables are stored over the runtime's first ones: the runtime's layer does not undo them.
    const variables = mergeCallVariables(
      assistant.variables,
      assistant.lead_variables,
      call.variables,
      call.assistant_request ? undefined : request.variables,
    );
    // A new token for this session; tokens of earlier sessions of the call stay valid until they expire. The first
    // session names the call's `call.started` event; every session queues the delivery still owed (the job id keeps
    // it single), so a session whose queueing failed (503) queues it on its retry; the delivery clears the mark.
    const token = generateToken('call');
    const { expiresAt, startedDue } = await this.calls.openSession(
      call.id,
      hashToken(token),
      assistant.max_duration + CALL_TOKEN_GRACE_SECONDS,
      assistant.webhook_on,
    );
    if (startedDue) await this.jobs.enqueue(Jobs.deliverCallStartedWebhook, { callId: call.id });
    const texts = {
      initial_message: fillVariables(assistant.initial_message, variables),
      system_prompt: fillVariables(assistant.system_prompt, variables),
    };
    return {
      created,
      body: {
        data: toCallSession({
          call,
          token,
          expiresAt,
          assistant: { ...assistant, ...texts },
          variables,
          controls: {
            actions: builtInActions(assistant),
            end_call: assistant.end_call ?? DEFAULT_END_CALL,
            voicemail: sessionVoicemail(assistant.voicemail, variables),
          },
        }),
      },
    };
  }

  /**
   * The assistant of a call the service has not seen, and its number as stored: an inbound call's is the active
   * assistant holding the number dialled (an inbound one before an outbound one, then the oldest, as the dispatch
   * rule names it), found in whatever form the carrier wrote it; any other names its assistant, and keeps its number
   * as reported. A number stored as written wins over one the dialled form reads as; a national form that names
   * numbers of two countries names none: the service does not guess whose assistant answers.
   */
  private async assistantFor(
    type: CallSessionRequest['type'],
    dialled: string | null,
    assistantId: number | null | undefined,
  ): Promise<{ assistantId: number; number: string | null; hook?: ServerHookRow }> {
    if (type !== 'inbound') {
      if (assistantId == null) {
        throw ValidationFailed.field(
          'assistant_id',
          'The assistant id field is required when the service did not place the call.',
        );
      }
      return { assistantId, number: dialled };
    }
    if (dialled === null) throw new Error('An inbound call names the number dialled');
    const holders = await this.calls.findInboundHoldersByNationalNumbers(nationalNumberCandidates(dialled));
    const named = holders.filter((holder) => dialledNames(dialled, holder.phone_number, holder.country_code));
    // A number stored as dialled (an extension, or the same number in E.164) before one the dialled form reads as.
    const asWritten = named.filter((holder) => holder.phone_number === reportedNumber(dialled).trim());
    const found = asWritten.length > 0 ? asWritten : named;
    if (new Set(found.map((holder) => holder.phone_number_id)).size !== 1) throw noAssistantAnswers();
    return { assistantId: found[0].id, number: found[0].phone_number, hook: found[0].hook ?? undefined };
  }
}
