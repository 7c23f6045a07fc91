import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CallIngestion } from '@app/calls';
import {
  type CallRow,
  type CallSessionEnvelope,
  type CallSessionRequest,
  DomainError,
  type LanguageResponse,
  type SessionTool,
  TERMINAL_CALL_STATUSES,
  toCallResponse,
  toE164,
  ValidationFailed,
} from '@app/contracts';
import { queryPool } from '@app/database';
import { JobQueue, Jobs } from '@app/jobs';
import { generateToken, hashToken } from '@app/platform';
import { toolParametersSchema } from '@app/tools';
import { fillVariables, mergeCallVariables } from './call-variables';

/** A call token outlives the longest the call may run by this much: the final write comes after the hang-up. */
export const CALL_TOKEN_GRACE_SECONDS = 600;

const noAssistantAnswers = () =>
  new DomainError('no_assistant_answers', 404, { message: 'No assistant answers this number.' });
const callEnded = (status: string) =>
  new DomainError('call_ended', 409, { message: `The call is already ${status}; it has no session to open.` });

/** The assistant of a session and everything it runs with, read in one statement. */
interface SessionAssistantRow {
  id: number;
  user_id: number;
  name: string;
  type: string;
  voice_id: string | null;
  timezone: string;
  initial_message: string | null;
  system_prompt: string | null;
  max_duration: number;
  record: boolean;
  variables: Record<string, unknown>;
  post_call_schema: { name: string; type: string; description: string }[];
  webhook_on: boolean;
  language: LanguageResponse;
  secondary_languages: LanguageResponse[];
  knowledgebase: { id: number; name: string } | null;
  tools: { id: number; name: string; description: string; schema: { name: string; type: string }[] }[];
  lead_variables: Record<string, unknown> | null;
}

/**
 * Opens the voice runtime's session of a call: finds or creates the call (an inbound call by the number dialled, an
 * outbound one as the dialer or `make_call` wrote it), and answers what an agent needs to run it, with a token for
 * that call alone. Idempotent on the external id: a retry, or many at once, make one call.
 */
@Injectable()
export class CallSessions {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ingestion: CallIngestion,
    private readonly jobs: JobQueue,
  ) {}

  async open(
    externalId: string,
    request: CallSessionRequest,
  ): Promise<{ created: boolean; body: CallSessionEnvelope }> {
    let [call] = (await this.dataSource.query(`SELECT * FROM calls WHERE external_id = $1`, [
      externalId,
    ])) as (CallRow & {
      user_id: number;
      assistant_id: number | null;
    })[];
    let created = false;
    if (!call) {
      const assistantId = await this.assistantFor(request);
      // The same write as the runtime's PUT, so a session racing another (or the PUT) still makes one call.
      const written = await this.ingestion.write(externalId, {
        assistant_id: assistantId,
        type: request.type,
        status: 'in-progress',
        client_phone_number: request.client_phone_number,
        assistant_phone_number: request.assistant_phone_number,
        campaign_id: request.campaign_id ?? null,
        lead_id: request.lead_id ?? null,
        variables: request.variables,
      });
      created = written.created;
      [call] = await this.dataSource.query(`SELECT * FROM calls WHERE external_id = $1`, [externalId]);
    }
    if (TERMINAL_CALL_STATUSES.includes(call.status)) throw callEnded(call.status);
    // The dialer's call lost its assistant since it was placed: nothing can answer it.
    if (call.assistant_id === null) throw noAssistantAnswers();
    const assistant = await this.assistant(call.assistant_id, call.lead_id);
    if (!assistant) throw noAssistantAnswers();

    const variables = mergeCallVariables(
      assistant.variables,
      assistant.lead_variables,
      call.variables,
      request.variables,
    );
    const { token, expiresAt } = await this.issueToken(call.id, assistant.max_duration);
    await this.announce(call.id, assistant.webhook_on);
    return {
      created,
      body: {
        data: {
          call: toCallResponse(call),
          token,
          expires_at: expiresAt.toISOString(),
          assistant: {
            id: assistant.id,
            name: assistant.name,
            type: assistant.type,
            language: assistant.language,
            secondary_languages: assistant.secondary_languages,
            voice_id: assistant.voice_id,
            timezone: assistant.timezone,
            initial_message: fillVariables(assistant.initial_message, variables),
            system_prompt: fillVariables(assistant.system_prompt, variables),
            max_duration: assistant.max_duration,
            record: assistant.record,
            variables,
            post_call_schema: assistant.post_call_schema,
          },
          tools: assistant.tools.map((tool): SessionTool => ({
            id: tool.id,
            name: tool.name,
            description: tool.description,
            parameters: toolParametersSchema(tool.schema),
          })),
          knowledgebase: assistant.knowledgebase,
        },
      },
    };
  }

  /**
   * The assistant of a call the service has not seen: an inbound call's is the active assistant holding the number
   * dialled (an inbound one before an outbound one, then the oldest, as the dispatch rule names it); any other names
   * its assistant.
   */
  private async assistantFor(request: CallSessionRequest): Promise<number> {
    if (request.type !== 'inbound') {
      if (request.assistant_id == null) {
        throw ValidationFailed.field(
          'assistant_id',
          'The assistant id field is required when the service did not place the call.',
        );
      }
      return request.assistant_id;
    }
    const number = toE164(request.assistant_phone_number) ?? request.assistant_phone_number;
    const [holder] = (await this.dataSource.query(
      `SELECT a.id FROM phone_numbers p JOIN assistants a ON a.phone_number_id = p.id AND a.user_id = p.user_id
        WHERE p.phone_number = $1 AND a.status = 'active'
        ORDER BY a.type = 'inbound' DESC, a.id LIMIT 1`,
      [number],
    )) as { id: number }[];
    if (!holder) throw noAssistantAnswers();
    return holder.id;
  }

  private async assistant(id: number, leadId: number | null): Promise<SessionAssistantRow | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT a.id, a.user_id, a.name, a.type, a.voice_id, a.timezone, a.initial_message, a.system_prompt,
              a.max_duration, a.record, a.variables, a.post_call_schema,
              (a.is_webhook_active AND a.webhook_url IS NOT NULL) AS webhook_on,
              json_build_object('id', l.id, 'name', l.name, 'iso_2', l.iso_2) AS language,
              COALESCE((SELECT json_agg(json_build_object('id', s.id, 'name', s.name, 'iso_2', s.iso_2)
                                        ORDER BY secondary.position)
                          FROM assistant_secondary_languages secondary JOIN languages s ON s.id = secondary.language_id
                         WHERE secondary.assistant_id = a.id), '[]') AS secondary_languages,
              (SELECT json_build_object('id', k.id, 'name', k.name) FROM knowledgebases k
                WHERE k.id = a.knowledgebase_id AND k.user_id = a.user_id) AS knowledgebase,
              COALESCE((SELECT json_agg(json_build_object('id', t.id, 'name', t.name, 'description', t.description,
                                                          'schema', t.schema) ORDER BY t.id)
                          FROM assistant_tools link JOIN tools t ON t.id = link.tool_id AND t.user_id = a.user_id
                         WHERE link.assistant_id = a.id), '[]') AS tools,
              (SELECT variables FROM leads WHERE id = $2 AND user_id = a.user_id) AS lead_variables
         FROM assistants a JOIN languages l ON l.id = a.language_id
        WHERE a.id = $1`,
      [id, leadId],
    )) as SessionAssistantRow[];
    return row;
  }

  /** A new token for this session; tokens of earlier sessions of the call stay valid until they expire. */
  private async issueToken(callId: number, maxDurationSeconds: number): Promise<{ token: string; expiresAt: Date }> {
    const token = generateToken('call');
    const [{ expires_at: expiresAt }] = (await this.dataSource.query(
      `INSERT INTO call_tokens (token_hash, call_id, expires_at)
       VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at`,
      [hashToken(token), callId, maxDurationSeconds + CALL_TOKEN_GRACE_SECONDS],
    )) as { expires_at: Date }[];
    return { token, expiresAt };
  }

  /**
   * The first session of a call names its `call.started` event and, with the assistant's webhook on, marks it owed.
   * Every session queues what is still owed (the job id keeps it single), so a session whose queueing failed (503)
   * queues it on its retry; the delivery clears the mark.
   */
  private async announce(callId: number, webhookOn: boolean): Promise<void> {
    const [{ due }] = await queryPool<{ due: boolean }>(
      this.dataSource,
      `UPDATE calls
          SET started_webhook_due = CASE WHEN started_event_id IS NULL THEN $2 ELSE started_webhook_due END,
              started_event_id = COALESCE(started_event_id, 'msg_' || gen_random_uuid()::text)
        WHERE id = $1
        RETURNING started_webhook_due AS due`,
      [callId, webhookOn],
    );
    if (due) await this.jobs.enqueue(Jobs.deliverCallStartedWebhook, { callId });
  }
}
