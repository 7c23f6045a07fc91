import { Injectable } from '@nestjs/common';
import { DataSource, type QueryFailedError } from 'typeorm';
import type {
  CallEventRow,
  CallRow,
  SessionAssistantLike,
  StoredCallTransfer,
  StoredEndCallSettings,
  StoredTransferDestination,
  StoredVoicemailSettings,
  TransferStatus,
} from '@app/contracts';
import { outboundTrunkOf } from './phone-number-holders';
import { queryPool } from './pool-query';
import { isUniqueViolation } from './query-errors';
import { ReadReplicas } from './read-replicas';
import { SqlRepository } from './sql-repository';

/** A call with what the voice runtime's routes need of it: its assistant's knowledgebase and the variables' layers. */
export interface RuntimeCallRow extends Pick<CallRow, 'id' | 'user_id' | 'assistant_id' | 'variables'> {
  knowledgebase_id: number | null;
  assistant_variables: Record<string, unknown>;
  lead_variables: Record<string, unknown> | null;
}

/**
 * The ring-time hook a call to a number asks: the number's own `server_url`, else its account's default, with the
 * timeout and the sealed secret of the same (`source` says which, and so which secret context opens it).
 */
export interface ServerHookRow {
  source: 'number' | 'account';
  /** The number's id or the account's, as the secret's context names it. */
  owner_id: number;
  url: string;
  timeout_ms: number;
  secret_sealed: string | null;
}

/** An active assistant holding a number, and the number with its ring-time hook (null without one). */
export interface InboundHolderRow {
  id: number;
  phone_number_id: number;
  phone_number: string;
  country_code: string | null;
  hook: ServerHookRow | null;
}

/**
 * The assistant of a session and everything it runs with, read in one statement: what the session hands out
 * (`SessionAssistantLike`, beside its DTO), and what the service needs besides.
 */
export interface SessionAssistantRow extends SessionAssistantLike {
  user_id: number;
  variables: Record<string, unknown>;
  transfer_destinations: StoredTransferDestination[];
  end_call: StoredEndCallSettings | null;
  voicemail: StoredVoicemailSettings | null;
  webhook_on: boolean;
  lead_variables: Record<string, unknown> | null;
}

/** A call as a transfer needs it: its state, its room, and where its assistant may transfer it. */
export interface TransferCallRow {
  id: number;
  user_id: number;
  external_id: string;
  status: string;
  assistant_phone_number: string;
  transfer_destinations: StoredTransferDestination[];
  /** Its last transfer's status, if it had one. */
  transfer_status: TransferStatus | null;
  /** The provider's outbound trunk of the call's number (else its assistant's): a warm transfer dials from it. */
  outbound_trunk_id: string | null;
}

/** An event the runtime reports under its own `seq`. */
export interface NewCallEvent {
  seq: number;
  type: CallEventRow['type'];
  at: string;
  data: Record<string, unknown>;
}

/** What storing a batch of the runtime's events came to (`insertEventsByExternalId`). */
export type EventsOutcome =
  /** `fromId`: the lowest id of the events stored (null: none new), for the streams that follow the call. */
  | { kind: 'recorded'; recorded: number; callId: number; fromId: number | null }
  | { kind: 'no-call' }
  | { kind: 'closed' }
  | { kind: 'outside'; earliest: Date; latest: Date; outside: { index: number; early: boolean }[] }
  | { kind: 'conflict'; seq: number };

/** The seq named by `call_event_conflict` (other content under a stored event's seq), if that failed the statement. */
function conflictingEventSeq(error: unknown): number | undefined {
  if (!isUniqueViolation(error)) return undefined;
  const cause = (error as QueryFailedError).driverError as { constraint?: string; detail?: string };
  return cause.constraint === 'call_events_same_seq' ? Number(cause.detail) : undefined;
}

/**
 * The voice runtime's statements on calls: the look-ups of its routes and sessions (by external id, the system's own),
 * a session's token and `call.started` mark, and the events and tool calls it records. It acts for no account, so
 * the writes an account reads (events, tool calls) note the call's account (`writeForAccount`): its next reads
 * find them. A session's token and mark, which no account read shows, are not noted.
 */
@Injectable()
export class RuntimeCallsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  async findByExternalId(externalId: string): Promise<CallRow | undefined> {
    const [call] = (await this.manager.query(`SELECT * FROM calls WHERE external_id = $1`, [externalId])) as CallRow[];
    return call;
  }

  async findRuntimeCallByExternalId(externalId: string): Promise<RuntimeCallRow | undefined> {
    const [call] = (await this.manager.query(
      `SELECT c.id, c.user_id, c.assistant_id, a.knowledgebase_id,
              COALESCE(a.variables, '{}') AS assistant_variables, l.variables AS lead_variables, c.variables
         FROM calls c
         LEFT JOIN assistants a ON a.id = c.assistant_id
         LEFT JOIN leads l ON l.id = c.lead_id AND l.user_id = c.user_id
        WHERE c.external_id = $1`,
      [externalId],
    )) as RuntimeCallRow[];
    return call;
  }

  /**
   * What a call token opens of the call with that external id, in one statement: nothing (undefined: another call's
   * token, an expired one, or none), the call's routes while it is `open`, or, once its status is final (`finished`),
   * only a repeat of the final write.
   */
  async callTokenStateByExternalId(
    tokenHash: string,
    externalId: string,
    finalStatuses: readonly string[],
  ): Promise<{ state: 'open' | 'finished'; expiresAt: Date } | undefined> {
    const [row] = await queryPool<{ finished: boolean; expires_at: Date }>(
      this.dataSource,
      `SELECT c.status = ANY($3) AS finished, t.expires_at FROM call_tokens t JOIN calls c ON c.id = t.call_id
          WHERE t.token_hash = $1 AND t.expires_at > now() AND c.external_id = $2`,
      [tokenHash, externalId, finalStatuses],
    );
    if (!row) return undefined;
    return { state: row.finished ? 'finished' : 'open', expiresAt: row.expires_at };
  }

  /**
   * The active assistants holding a number whose national number (`national_phone_number`, indexed) is one of
   * `nationalNumbers`, with the number and its ring-time hook: an inbound assistant before an outbound one, then the
   * oldest. The session keeps those whose number the dialled form names.
   */
  findInboundHoldersByNationalNumbers(nationalNumbers: string[]): Promise<InboundHolderRow[]> {
    return this.manager.query(
      `SELECT a.id, p.id AS phone_number_id, p.phone_number, p.country_code,
              CASE WHEN p.server_url IS NOT NULL
                     THEN json_build_object('source', 'number', 'owner_id', p.id, 'url', p.server_url,
                                            'timeout_ms', p.server_timeout_ms, 'secret_sealed', p.server_secret_sealed)
                   WHEN s.server_url IS NOT NULL
                     THEN json_build_object('source', 'account', 'owner_id', s.user_id, 'url', s.server_url,
                                            'timeout_ms', s.server_timeout_ms, 'secret_sealed', s.server_secret_sealed)
              END AS hook
         FROM phone_numbers p JOIN assistants a ON a.phone_number_id = p.id AND a.user_id = p.user_id
         LEFT JOIN user_settings s ON s.user_id = p.user_id
        WHERE national_phone_number(p.phone_number) = ANY($1) AND a.status = 'active'
        ORDER BY a.type = 'inbound' DESC, a.id`,
      [nationalNumbers],
    );
  }

  async assistantHasTool(assistantId: number | null, toolId: number): Promise<boolean> {
    const [linked] = await this.manager.query(
      `SELECT 1 FROM assistant_tools WHERE assistant_id = $1 AND tool_id = $2`,
      [assistantId, toolId],
    );
    return Boolean(linked);
  }

  /**
   * A session of the call, in one statement: the assistant it runs (with the variables of the call's lead, of the
   * assistant's account), a new token valid for the assistant's `max_duration` plus `graceSeconds` (tokens of earlier
   * sessions stay valid until they expire), and the call's `call.started` event, named the first time and then
   * marked owed when the assistant's webhook is on. None of it without the assistant (none: undefined).
   */
  async openSession(
    callId: number,
    assistantId: number,
    leadId: number | null,
    tokenHash: string,
    graceSeconds: number,
  ): Promise<(SessionAssistantRow & { expires_at: Date; started_due: boolean }) | undefined> {
    const [row] = await queryPool<SessionAssistantRow & { expires_at: Date; started_due: boolean }>(
      this.dataSource,
      `WITH assistant AS (
         SELECT a.id, a.user_id, a.name, a.type, a.voice_id, a.model, a.transcriber, a.voice, a.timezone, a.initial_message, a.system_prompt,
                a.max_duration, a.record, a.variables, a.post_call_schema, a.transfer_destinations, a.end_call,
                a.voicemail, (a.is_webhook_active AND a.webhook_url IS NOT NULL) AS webhook_on,
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
          WHERE a.id = $1
       ), token AS (
         INSERT INTO call_tokens (token_hash, call_id, expires_at)
         SELECT $3, $4, now() + make_interval(secs => assistant.max_duration + $5) FROM assistant
         RETURNING expires_at
       ), started AS (
         UPDATE calls
            SET started_webhook_due = CASE WHEN started_event_id IS NULL THEN assistant.webhook_on
                                           ELSE started_webhook_due END,
                started_event_id = COALESCE(started_event_id, 'msg_' || gen_random_uuid()::text)
           FROM assistant
          WHERE calls.id = $4
          RETURNING started_webhook_due
       )
       SELECT assistant.*, (SELECT expires_at FROM token) AS expires_at,
              (SELECT started_webhook_due FROM started) AS started_due
         FROM assistant`,
      [assistantId, leadId, tokenHash, callId, graceSeconds],
    );
    return row;
  }

  /**
   * Stores a batch of events (`[{seq, type, at, data}]`) of the call with that external id in one statement, all or
   * nothing: an event already stored under its `seq` with the same content is kept as it was (a duplicate); with
   * other content, the statement fails and the batch is undone (`conflict`, whether the other was stored before or
   * by a request racing this one). Nothing is stored when an event's `at` is outside the call's life, `tolerance`
   * seconds either side (from its creation to its end, or now while it runs: `outside`, by the events' `index`), or,
   * with `whileOpen`, when the call's status is final (`closed`). With `notifyChannel` (the Postgres queue backend)
   * the statement itself notifies the call's watchers of what it stored, at its commit, for no round trip more.
   */
  async insertEventsByExternalId(
    externalId: string,
    events: (NewCallEvent & { index: number })[],
    options: { whileOpen: boolean; finalStatuses: readonly string[]; tolerance: number; notifyChannel: string | null },
  ): Promise<EventsOutcome> {
    try {
      const [row] = await this.writeForAccount<{
        id: number;
        from_id: string | null;
        closed: boolean;
        earliest: Date;
        latest: Date;
        outside: { index: number; early: boolean }[] | null;
        recorded: number;
      }>(
        `WITH call AS (
                SELECT id, user_id, $3 AND status = ANY($4) AS closed,
                       created_at - make_interval(secs => $5) AS earliest,
                       COALESCE(ended_at, now()) + make_interval(secs => $5) AS latest
                  FROM calls WHERE external_id = $1),
              event AS (
                SELECT * FROM jsonb_to_recordset($2::jsonb)
                    AS event(index int, seq int, type text, at timestamptz, data jsonb)),
              outside AS (
                SELECT event.index, event.at < call.earliest AS early FROM call, event
                 WHERE event.at NOT BETWEEN call.earliest AND call.latest),
              recorded AS (
                INSERT INTO call_events (call_id, seq, type, at, data)
                SELECT call.id, event.seq, event.type, event.at, event.data FROM call, event
                 WHERE NOT call.closed AND NOT EXISTS (SELECT FROM outside)
                ON CONFLICT (call_id, seq) DO UPDATE SET seq = call_event_conflict(excluded.seq)
                 WHERE (call_events.type, call_events.at, call_events.data)
                       IS DISTINCT FROM (excluded.type, excluded.at, excluded.data)
                RETURNING id),
              stored AS (SELECT count(*)::int AS recorded, min(id) AS from_id FROM recorded)
         SELECT call.id, closed, earliest, latest,
                CASE WHEN NOT closed AND NOT EXISTS (SELECT FROM outside) THEN user_id END AS written_for,
                (SELECT json_agg(outside ORDER BY index) FROM outside) AS outside,
                stored.recorded, stored.from_id,
                CASE WHEN $6::text IS NOT NULL AND stored.from_id IS NOT NULL
                     THEN pg_notify($6, call.id || ':' || stored.from_id) END AS notified
           FROM call, stored`,
        [
          externalId,
          JSON.stringify(events),
          options.whileOpen,
          options.finalStatuses,
          options.tolerance,
          options.notifyChannel,
        ],
      );
      if (!row) return { kind: 'no-call' };
      if (row.closed) return { kind: 'closed' };
      if (row.outside) return { kind: 'outside', earliest: row.earliest, latest: row.latest, outside: row.outside };
      return {
        kind: 'recorded',
        recorded: row.recorded,
        callId: row.id,
        fromId: row.from_id === null ? null : Number(row.from_id),
      };
    } catch (error) {
      const seq = conflictingEventSeq(error);
      if (seq === undefined) throw error;
      return { kind: 'conflict', seq };
    }
  }

  /** The call a transfer is asked for, with its assistant's destinations. */
  async findTransferCallByExternalId(externalId: string): Promise<TransferCallRow | undefined> {
    const [call] = (await this.manager.query(
      `SELECT c.id, c.user_id, c.external_id, c.status, c.assistant_phone_number, c.transfer->>'status' AS transfer_status,
              COALESCE(a.transfer_destinations, '[]') AS transfer_destinations,
              ${outboundTrunkOf('COALESCE(c.phone_number_id, a.phone_number_id)')} AS outbound_trunk_id
         FROM calls c LEFT JOIN assistants a ON a.id = c.assistant_id
        WHERE c.external_id = $1`,
      [externalId],
    )) as TransferCallRow[];
    return call;
  }

  /**
   * Takes the call's transfer for one request: false while another transfer of it is under way (begun within
   * `staleSeconds`; one older was lost with its process), or once it is over or handed over.
   */
  async claimTransfer(callId: number, finalStatuses: readonly string[], staleSeconds: number): Promise<boolean> {
    const [, claimed] = (await this.manager.query(
      `UPDATE calls SET transfer_started_at = now(), transfer_briefed_at = NULL
        WHERE id = $1 AND status <> ALL($2::varchar[]) AND (transfer->>'status' IS DISTINCT FROM 'transferred')
          AND (transfer_started_at IS NULL OR transfer_started_at < now() - make_interval(secs => $3))
        RETURNING id`,
      [callId, finalStatuses, staleSeconds],
    )) as [unknown[], number];
    return claimed > 0;
  }

  /**
   * The consultation room's agent briefed the person of the warm transfer under way: the call's id, null when no
   * transfer of the call is under way (none asked for, or it is over).
   */
  async markTransferBriefed(externalId: string): Promise<number | null> {
    const [rows] = (await this.manager.query(
      `UPDATE calls SET transfer_briefed_at = now() WHERE external_id = $1 AND transfer_started_at IS NOT NULL
       RETURNING id`,
      [externalId],
    )) as [{ id: number }[], number];
    return rows[0]?.id ?? null;
  }

  /** Whether the person of the call's warm transfer under way was briefed. */
  async transferBriefed(callId: number): Promise<boolean> {
    const [row] = (await this.manager.query(
      `SELECT transfer_briefed_at IS NOT NULL AS briefed FROM calls WHERE id = $1`,
      [callId],
    )) as { briefed: boolean }[];
    return row?.briefed === true;
  }

  /** Lets the call be transferred again after a transfer that recorded nothing (its request failed). */
  async releaseTransfer(callId: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET transfer_started_at = NULL WHERE id = $1`, [callId]);
  }

  /**
   * A transfer's outcome, in one statement: the call's `transfer` (its last one) and, when it went through, its
   * `ended_reason`; and the call's `transfer` event. Answers the event's id, the transfer's own.
   */
  async recordTransfer(call: Pick<CallRow, 'id' | 'user_id'>, transfer: StoredCallTransfer): Promise<number> {
    const [event] = await this.writeForAccount<{ id: string }>(
      `WITH updated AS (
         UPDATE calls SET transfer = $2::jsonb, updated_at = now(), transfer_started_at = NULL,
                ended_reason = CASE WHEN $3::varchar = 'transferred' THEN 'transferred' ELSE ended_reason END
          WHERE id = $1)
       INSERT INTO call_events (call_id, seq, type, at, data) VALUES ($1, NULL, 'transfer', $4, $5)
       RETURNING id, $6::int AS written_for`,
      [
        call.id,
        JSON.stringify(transfer),
        transfer.status,
        transfer.at,
        JSON.stringify(transferEventData(transfer)),
        call.user_id,
      ],
    );
    return Number(event.id);
  }

  /** Records a tool the service called for the call, now; answers the event's id. */
  async insertToolCall(call: Pick<CallRow, 'id' | 'user_id'>, data: Record<string, unknown>): Promise<number> {
    const [row] = await this.writeForAccount<{ id: string }>(
      `INSERT INTO call_events (call_id, seq, type, at, data) VALUES ($1, NULL, 'tool_call', now(), $2)
       RETURNING id, $3::int AS written_for`,
      [call.id, JSON.stringify(data), call.user_id],
    );
    return Number(row.id);
  }
}

/** A transfer event's own fields (its time is the event's). */
const transferEventData = ({ destination, mode, status, reason }: StoredCallTransfer) => ({
  destination,
  mode,
  status,
  reason,
});
