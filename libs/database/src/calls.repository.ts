import { Injectable } from '@nestjs/common';
import { DataSource, type QueryFailedError } from 'typeorm';
import type { CallEventRow, CallListQuery, CallRow, LanguageResponse } from '@app/contracts';
import { type EndedCall, markLeadInCall, settleLeadOfEndedCall } from './call-outcomes';
import { queryPool } from './pool-query';
import { isUniqueViolation } from './query-errors';
import { ReadReplicas } from './read-replicas';
import { SqlFilter } from './sql-filter';
import { SqlRepository } from './sql-repository';

/** What a call's list may be filtered by. */
export type CallFilter = Pick<
  CallListQuery,
  'status' | 'type' | 'phone_number' | 'assistant_id' | 'campaign_id' | 'date_from' | 'date_to'
>;

/** A call with what the voice runtime's routes need of it: its assistant's knowledgebase and the variables' layers. */
export interface RuntimeCallRow extends Pick<CallRow, 'id' | 'user_id' | 'assistant_id' | 'variables'> {
  knowledgebase_id: number | null;
  assistant_variables: Record<string, unknown>;
  lead_variables: Record<string, unknown> | null;
}

/** An active assistant holding a number, and the number. */
export interface InboundHolderRow {
  id: number;
  phone_number_id: number;
  phone_number: string;
  country_code: string | null;
}

/** The assistant of a session and everything it runs with, read in one statement. */
export interface SessionAssistantRow {
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

/** A call to deliver a webhook of, with its assistant's webhook. */
export interface CallDeliveryRow extends CallRow {
  assistant_id: number;
  webhook_url: string | null;
  is_webhook_active: boolean;
  webhook_secret_sealed: string | null;
}

/** The lead of a call, with its campaign, as a webhook names it. */
export interface CallLeadRow {
  id: number;
  phone_number: string;
  variables: Record<string, unknown>;
  status: string;
  campaign_id: number;
  campaign_name: string;
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
  | { kind: 'recorded'; userId: number; recorded: number }
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
 * What one statement reads before the runtime's write of a call: the assistant (the one the write names, else the
 * call's own; its fields null when there is none), the references named, the call.
 */
export interface CallBeforeWrite {
  id: number | null;
  user_id: number | null;
  name: string | null;
  webhook_url: string | null;
  is_webhook_active: boolean | null;
  /** Whether the assistant records its calls: a recording's URL is kept only then. */
  record: boolean | null;
  campaign_found: boolean;
  campaign_name: string | null;
  lead_found: boolean;
  /** The call's account, assistant, campaign, lead, status, own number and row version (`xmin`), when it exists. */
  call_user_id: number | null;
  call_assistant_id: number | null;
  call_campaign_id: number | null;
  call_lead_id: number | null;
  call_status: string | null;
  call_assistant_phone_number: string | null;
  call_version: string | null;
}

/** The runtime's write of a call, as the ingestion decided it. */
export interface CallWrite {
  status: string;
  /** The account and assistant the call is written for; absent when a later write names none and the call's is gone. */
  assistant?: { user_id: number; id: number; name: string };
  /**
   * What the write gives; on a later write, a field it leaves out (absent or null) keeps the call's value, and
   * `variables` are merged into the call's, key by key. A first write gives `type` and both numbers.
   */
  given: {
    type?: string;
    client_phone_number?: string;
    assistant_phone_number?: string;
    campaign_id?: number | null;
    campaign_name: string | null;
    lead_id?: number | null;
    duration?: number;
    transcript?: string | null;
    variables?: Record<string, unknown>;
    evaluation?: Record<string, unknown>;
    carrier_cost?: number;
    total_cost?: number;
    answered_by?: string;
    recording_url?: string | null;
  };
  /** A later write whose transcript is the call's transcript turns, joined (kept when there are none). */
  transcriptOfTurns: boolean;
  /** What the first final write sets, and a later one keeps: the webhook event, the end, the delivery owed. */
  ending: { webhook_event_id: string | null; ended_at: Date | null; webhook_due: boolean };
}

/**
 * The runtime's transcript turns joined in their order, one line a turn (`Assistant: ...`, `Customer: ...`, as the
 * calls' transcripts read); null for a call without turns.
 */
const TRANSCRIPT_OF_TURNS = `(SELECT string_agg(CASE WHEN turn.data->>'role' = 'assistant' THEN 'Assistant: ' ELSE 'Customer: ' END
                                 || (turn.data->>'text'), E'\n' ORDER BY turn.seq)
     FROM call_events turn WHERE turn.call_id = calls.id AND turn.type = 'transcript')`;

/**
 * The columns a later write sets (`[column, expression]`), each an SQL expression over the call's row with the
 * write's values as parameters: the status and the assistant outright, a field the write leaves out kept, the
 * variables merged key by key, the transcript from the turns when the write asks for it. Numbers are cast to their
 * columns' scale, so that a value compares as it would be stored. Without `derived`, the columns that only follow
 * the ids written (the account, the assistant's and campaign's names) are left out: they tell no write apart.
 */
function laterWrite(
  write: CallWrite,
  parameter: (value: unknown) => string,
  { derived }: { derived: boolean },
): [string, string][] {
  const set = (column: string, value: string): [string, string] => [column, value];
  const keep = (column: string, value: unknown, type: string) =>
    set(column, `COALESCE(${parameter(value ?? null)}::${type}, ${column})`);
  const json = (value: Record<string, unknown> | undefined) => (value == null ? null : JSON.stringify(value));
  const { assistant, given } = write;
  return [
    set('status', `${parameter(write.status)}::varchar`),
    ...(assistant && derived
      ? [
          set('user_id', `${parameter(assistant.user_id)}::int`),
          set('assistant_name', `${parameter(assistant.name)}::varchar`),
        ]
      : []),
    ...(assistant ? [set('assistant_id', `${parameter(assistant.id)}::int`)] : []),
    keep('type', given.type, 'varchar'),
    keep('client_phone_number', given.client_phone_number, 'varchar'),
    keep('assistant_phone_number', given.assistant_phone_number, 'varchar'),
    keep('campaign_id', given.campaign_id, 'int'),
    ...(derived ? [keep('campaign_name', given.campaign_name, 'varchar')] : []),
    keep('lead_id', given.lead_id, 'int'),
    keep('duration', given.duration, 'int'),
    write.transcriptOfTurns
      ? set('transcript', `COALESCE(${TRANSCRIPT_OF_TURNS}, transcript)`)
      : keep('transcript', given.transcript, 'text'),
    set('variables', `variables || COALESCE(${parameter(json(given.variables))}::jsonb, '{}')`),
    keep('evaluation', json(given.evaluation), 'jsonb'),
    keep('carrier_cost', given.carrier_cost, 'numeric(12, 4)'),
    keep('total_cost', given.total_cost, 'numeric(12, 4)'),
    keep('answered_by', given.answered_by, 'varchar'),
    keep('recording_url', given.recording_url, 'text'),
  ];
}

/** A call the reaper ended, and what its lead's settling needs. */
export type ReapedCallRow = EndedCall & Pick<CallRow, 'assistant_id'>;

/**
 * The calls, their events and their tokens. An account's calls are read and deleted by their owner id first; the
 * voice runtime's and the worker's reads by external id or id are the system's own, and are named so.
 */
@Injectable()
export class CallsRepository extends SqlRepository {
  constructor(dataSource: DataSource, reads: ReadReplicas) {
    super(dataSource, reads);
  }

  /** A page of the account's calls, newest first, and the total; each single filter is served by its own index. */
  async list(ownerId: number, query: CallFilter, limit: number, offset: number): Promise<[CallRow[], number]> {
    const filter = new SqlFilter((p) => `user_id = ${p}`, ownerId);
    const add = filter.where.bind(filter);
    if (query.status) add((p) => `status = ${p}`, query.status);
    if (query.type) add((p) => `type = ${p}`, query.type);
    if (query.phone_number) filter.numberContaining('client_phone_number', 'user_id', query.phone_number);
    if (query.assistant_id !== undefined) add((p) => `assistant_id = ${p}`, query.assistant_id);
    if (query.campaign_id !== undefined) add((p) => `campaign_id = ${p}`, query.campaign_id);
    if (query.date_from) add((p) => `created_at >= ${p}::date`, query.date_from);
    if (query.date_to) add((p) => `created_at < ${p}::date + 1`, query.date_to);
    const where = filter.sql;
    const parameters = filter.values;
    const order = query.date_from || query.date_to ? 'created_at DESC, id DESC' : 'id DESC';
    return Promise.all([
      this.reads.query<CallRow>(
        ownerId,
        `SELECT * FROM calls WHERE ${where} ORDER BY ${order} LIMIT ${filter.next()} OFFSET ${filter.next(2)}`,
        [...parameters, limit, offset],
      ),
      this.total(ownerId, query, where, parameters),
    ]);
  }

  /** From the counters the triggers keep when at most one filter (not a partial number) or only dates are set. */
  private async total(ownerId: number, query: CallFilter, where: string, parameters: unknown[]): Promise<number> {
    const buckets = [
      query.status && `s:${query.status}`,
      query.type && `t:${query.type}`,
      query.assistant_id !== undefined && `a:${query.assistant_id}`,
      query.campaign_id !== undefined && `c:${query.campaign_id}`,
    ].filter((bucket): bucket is string => Boolean(bucket));
    const dated = Boolean(query.date_from || query.date_to);
    if (!query.phone_number && buckets.length + (dated ? 1 : 0) <= 1) {
      const [row] = dated
        ? await this.reads.query(
            ownerId,
            `SELECT COALESCE(sum(total), 0)::int AS total FROM call_counts
              WHERE user_id = $1 AND bucket LIKE 'd:%' AND bucket >= $2 AND bucket <= $3`,
            [ownerId, `d:${query.date_from ?? '0000-00-00'}`, `d:${query.date_to ?? '9999-99-99'}`],
          )
        : await this.reads.query(
            ownerId,
            `SELECT sum(total)::int AS total FROM call_counts WHERE user_id = $1 AND bucket = $2`,
            [ownerId, buckets[0] ?? ''],
          );
      return row?.total ?? 0;
    }
    const [{ total }] = await this.reads.query(
      ownerId,
      `SELECT count(*)::int AS total FROM calls WHERE ${where}`,
      parameters,
    );
    return total;
  }

  async find(ownerId: number, id: number): Promise<CallRow | undefined> {
    const [row] = await this.reads.query<CallRow>(ownerId, `SELECT * FROM calls WHERE id = $1 AND user_id = $2`, [
      id,
      ownerId,
    ]);
    return row;
  }

  /** How many events the account's call has; undefined when it has no such call. */
  async countEvents(ownerId: number, id: number): Promise<number | undefined> {
    const [call] = await this.reads.query<{ events: number }>(
      ownerId,
      `SELECT (SELECT count(*)::int FROM call_events WHERE call_id = calls.id) AS events
         FROM calls WHERE id = $1 AND user_id = $2`,
      [id, ownerId],
    );
    return call?.events;
  }

  /** Events of a call of the account (found with `countEvents`), oldest first. */
  listEvents(ownerId: number, id: number, limit: number, offset: number): Promise<CallEventRow[]> {
    return this.reads.query<CallEventRow>(
      ownerId,
      `SELECT type, seq, at, data FROM call_events WHERE call_id = $1
        ORDER BY at, seq NULLS LAST, id LIMIT $2 OFFSET $3`,
      [id, limit, offset],
    );
  }

  /** Returns false when the account has no such call. */
  async delete(ownerId: number, id: number): Promise<boolean> {
    return (await this.changed(`DELETE FROM calls WHERE id = $1 AND user_id = $2`, [id, ownerId])) > 0;
  }

  // The voice runtime's.

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
  ): Promise<'open' | 'finished' | undefined> {
    const [row] = await queryPool<{ finished: boolean }>(
      this.dataSource,
      `SELECT c.status = ANY($3) AS finished FROM call_tokens t JOIN calls c ON c.id = t.call_id
          WHERE t.token_hash = $1 AND t.expires_at > now() AND c.external_id = $2`,
      [tokenHash, externalId, finalStatuses],
    );
    if (!row) return undefined;
    return row.finished ? 'finished' : 'open';
  }

  /**
   * The active assistants holding a number whose national number (`national_phone_number`, indexed) is one of
   * `nationalNumbers`, with the number: an inbound assistant before an outbound one, then the oldest. The session
   * keeps those whose number the dialled form names.
   */
  findInboundHoldersByNationalNumbers(nationalNumbers: string[]): Promise<InboundHolderRow[]> {
    return this.manager.query(
      `SELECT a.id, p.id AS phone_number_id, p.phone_number, p.country_code
         FROM phone_numbers p JOIN assistants a ON a.phone_number_id = p.id AND a.user_id = p.user_id
        WHERE national_phone_number(p.phone_number) = ANY($1) AND a.status = 'active'
        ORDER BY a.type = 'inbound' DESC, a.id`,
      [nationalNumbers],
    );
  }

  /** The assistant a session runs, with the variables of the call's lead (of the assistant's account). */
  async findSessionAssistantById(id: number, leadId: number | null): Promise<SessionAssistantRow | undefined> {
    const [row] = (await this.manager.query(
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

  async assistantHasTool(assistantId: number | null, toolId: number): Promise<boolean> {
    const [linked] = await this.manager.query(
      `SELECT 1 FROM assistant_tools WHERE assistant_id = $1 AND tool_id = $2`,
      [assistantId, toolId],
    );
    return Boolean(linked);
  }

  /**
   * A session of the call, in one statement: a new token valid for `seconds` (tokens of earlier sessions stay valid
   * until they expire), and the call's `call.started` event, named the first time and then marked owed when
   * `webhookOn`. Returns when the token expires and whether a `call.started` delivery is owed.
   */
  async openSession(
    callId: number,
    tokenHash: string,
    seconds: number,
    webhookOn: boolean,
  ): Promise<{ expiresAt: Date; startedDue: boolean }> {
    const [row] = await queryPool<{ expires_at: Date; due: boolean }>(
      this.dataSource,
      `WITH token AS (
         INSERT INTO call_tokens (token_hash, call_id, expires_at)
         VALUES ($1, $2, now() + make_interval(secs => $3)) RETURNING expires_at
       ), started AS (
         UPDATE calls
            SET started_webhook_due = CASE WHEN started_event_id IS NULL THEN $4 ELSE started_webhook_due END,
                started_event_id = COALESCE(started_event_id, 'msg_' || gen_random_uuid()::text)
          WHERE id = $2
          RETURNING started_webhook_due
       )
       SELECT (SELECT expires_at FROM token) AS expires_at, (SELECT started_webhook_due FROM started) AS due`,
      [tokenHash, callId, seconds, webhookOn],
    );
    return { expiresAt: row.expires_at, startedDue: row.due };
  }

  /**
   * Stores a batch of events (`[{seq, type, at, data}]`) of the call with that external id in one statement, all or
   * nothing: an event already stored under its `seq` with the same content is kept as it was (a duplicate); with
   * other content, the statement fails and the batch is undone (`conflict`, whether the other was stored before or
   * by a request racing this one). Nothing is stored when an event's `at` is outside the call's life, `tolerance`
   * seconds either side (from its creation to its end, or now while it runs: `outside`, by the events' `index`), or,
   * with `whileOpen`, when the call's status is final (`closed`).
   */
  async insertEventsByExternalId(
    externalId: string,
    events: (NewCallEvent & { index: number })[],
    options: { whileOpen: boolean; finalStatuses: readonly string[]; tolerance: number },
  ): Promise<EventsOutcome> {
    try {
      const [row] = await queryPool<{
        user_id: number;
        closed: boolean;
        earliest: Date;
        latest: Date;
        outside: { index: number; early: boolean }[] | null;
        recorded: number;
      }>(
        this.dataSource,
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
                RETURNING 1)
         SELECT user_id, closed, earliest, latest,
                (SELECT json_agg(outside ORDER BY index) FROM outside) AS outside,
                (SELECT count(*)::int FROM recorded) AS recorded
           FROM call`,
        [externalId, JSON.stringify(events), options.whileOpen, options.finalStatuses, options.tolerance],
      );
      if (!row) return { kind: 'no-call' };
      if (row.closed) return { kind: 'closed' };
      if (row.outside) return { kind: 'outside', earliest: row.earliest, latest: row.latest, outside: row.outside };
      return { kind: 'recorded', userId: row.user_id, recorded: row.recorded };
    } catch (error) {
      const seq = conflictingEventSeq(error);
      if (seq === undefined) throw error;
      return { kind: 'conflict', seq };
    }
  }

  /** Records a tool the service called for the call, now. */
  async insertToolCall(callId: number, data: Record<string, unknown>): Promise<void> {
    await this.manager.query(
      `INSERT INTO call_events (call_id, seq, type, at, data) VALUES ($1, NULL, 'tool_call', now(), $2)`,
      [callId, JSON.stringify(data)],
    );
  }

  // The runtime's writes (CallIngestion): read, decide, then write only if the call is still as read.

  /**
   * The assistant of the write (the one named, else the call's), the campaign and lead it names (of that account, or
   * the call's when it has no assistant left), and the call so far; always one row.
   */
  async readBeforeWriteByExternalId(
    externalId: string,
    assistantId: number | null,
    campaignId: number | null,
    leadId: number | null,
  ): Promise<CallBeforeWrite> {
    const [seen] = (await this.manager.query(
      `SELECT a.id, a.user_id, a.name, a.webhook_url, a.is_webhook_active, a.record,
              campaign.id IS NOT NULL AS campaign_found, campaign.name AS campaign_name,
              lead.id IS NOT NULL AS lead_found,
              call.user_id AS call_user_id, call.assistant_id AS call_assistant_id,
              call.campaign_id AS call_campaign_id, call.lead_id AS call_lead_id, call.status AS call_status,
              call.assistant_phone_number AS call_assistant_phone_number, call.xmin::text AS call_version
         FROM (SELECT $4::varchar AS external_id) wanted
         LEFT JOIN calls call ON call.external_id = wanted.external_id
         LEFT JOIN assistants a ON a.id = COALESCE($1::int, call.assistant_id)
         LEFT JOIN campaigns campaign ON campaign.id = $2::int AND campaign.user_id = COALESCE(a.user_id, call.user_id)
         LEFT JOIN leads lead ON lead.id = $3::int AND lead.user_id = COALESCE(a.user_id, call.user_id)`,
      [assistantId, campaignId, leadId, externalId],
    )) as CallBeforeWrite[];
    return seen;
  }

  /** Holds the call (if it exists) until the transaction (`transaction`) ends. */
  async lockByExternalId(externalId: string): Promise<void> {
    await this.manager.query(`SELECT 1 FROM calls WHERE external_id = $1 FOR UPDATE`, [externalId]);
  }

  /** The call's first write; undefined if a concurrent first write won the race. */
  async insertByExternalIdIfAbsent(externalId: string, write: CallWrite): Promise<CallRow | undefined> {
    const { assistant, given } = write;
    if (!assistant || !given.type || !given.client_phone_number || !given.assistant_phone_number) {
      throw new Error('A call’s first write names its assistant, type and numbers');
    }
    const values: Record<string, unknown> = {
      user_id: assistant.user_id,
      assistant_id: assistant.id,
      assistant_name: assistant.name,
      type: given.type,
      status: write.status,
      client_phone_number: given.client_phone_number,
      assistant_phone_number: given.assistant_phone_number,
      campaign_id: given.campaign_id ?? null,
      campaign_name: given.campaign_name,
      lead_id: given.lead_id ?? null,
      duration: given.duration ?? 0,
      transcript: given.transcript ?? '',
      variables: JSON.stringify(given.variables ?? {}),
      evaluation: JSON.stringify(given.evaluation ?? {}),
      carrier_cost: given.carrier_cost ?? 0,
      total_cost: given.total_cost ?? 0,
      answered_by: given.answered_by ?? null,
      recording_url: given.recording_url ?? null,
      ...write.ending,
    };
    const columns = Object.keys(values);
    const [written] = (await this.manager.query(
      `INSERT INTO calls (external_id, ${columns.join(', ')})
            VALUES ($1, ${columns.map((_, index) => `$${index + 2}`).join(', ')})
            ON CONFLICT (external_id) DO NOTHING RETURNING *`,
      [externalId, ...Object.values(values)],
    )) as CallRow[];
    return written;
  }

  /** A later write, if the call is still at `version` (its `xmin` as read); else undefined. */
  async updateByExternalIdIfUnchanged(
    externalId: string,
    version: string,
    write: CallWrite,
  ): Promise<CallRow | undefined> {
    const parameters: unknown[] = [externalId, version];
    const parameter = (value: unknown) => `$${parameters.push(value)}`;
    const { ending } = write;
    const assignments = [
      ...laterWrite(write, parameter, { derived: true }).map(([column, value]) => `${column} = ${value}`),
      // The first final write names the webhook event and the end; later ones keep them.
      `webhook_event_id = COALESCE(webhook_event_id, ${parameter(ending.webhook_event_id)})`,
      `ended_at = COALESCE(ended_at, ${parameter(ending.ended_at)}::timestamptz)`,
      `webhook_due = webhook_due OR ${parameter(ending.webhook_due)}`,
      'updated_at = now()',
    ];
    // An UPDATE wrapped in a SELECT, so that both kinds of write return their rows the same way.
    const [written] = (await this.manager.query(
      `WITH written AS (
              UPDATE calls SET ${assignments.join(', ')} WHERE external_id = $1 AND xmin = $2::text::xid RETURNING *
            ) SELECT * FROM written`,
      parameters,
    )) as CallRow[];
    return written;
  }

  /**
   * The call as it is, if still at `version`, and whether `write` would leave every field the runtime writes as it
   * is (the values compared as the columns store them: costs rounded to their scale, variables merged, a missing
   * transcript as the turns joined); undefined when the call changed since it was read.
   */
  async compareWriteByExternalId(
    externalId: string,
    version: string,
    write: CallWrite,
  ): Promise<{ row: CallRow; unchanged: boolean } | undefined> {
    const parameters: unknown[] = [externalId, version];
    const parameter = (value: unknown) => `$${parameters.push(value)}`;
    const same = laterWrite(write, parameter, { derived: false }).map(
      ([column, value]) => `${column} IS NOT DISTINCT FROM ${value}`,
    );
    const [found] = (await this.manager.query(
      `SELECT *, (${same.join(' AND ')}) AS unchanged FROM calls WHERE external_id = $1 AND xmin = $2::text::xid`,
      parameters,
    )) as (CallRow & { unchanged: boolean })[];
    if (!found) return undefined;
    const { unchanged, ...row } = found;
    return { row, unchanged };
  }

  /** What the call's end does to its lead (see `settleLeadOfEndedCall`), in this repository's transaction. */
  settleLeadOfEndedCall(call: EndedCall): Promise<void> {
    return settleLeadOfEndedCall(this.manager, call);
  }

  /** The lead of a call under way is in one (see `markLeadInCall`), in this repository's transaction. */
  markLeadInCall(call: Pick<CallRow, 'lead_id' | 'secondary_contact_id'>): Promise<void> {
    return markLeadInCall(this.manager, call);
  }

  // The worker's: webhooks, the sweep, the reaper.

  async findDeliveryById(id: number): Promise<CallDeliveryRow | undefined> {
    const [call] = (await this.manager.query(
      `SELECT c.*, a.webhook_url, a.is_webhook_active, a.webhook_secret_sealed
         FROM calls c JOIN assistants a ON a.id = c.assistant_id WHERE c.id = $1`,
      [id],
    )) as CallDeliveryRow[];
    return call;
  }

  /** The call, if its `call.started` webhook is owed. */
  async findStartedDeliveryById(id: number): Promise<CallDeliveryRow | undefined> {
    const [call] = (await this.manager.query(
      `SELECT c.*, a.webhook_url, a.is_webhook_active, a.webhook_secret_sealed
         FROM calls c JOIN assistants a ON a.id = c.assistant_id WHERE c.id = $1 AND c.started_webhook_due`,
      [id],
    )) as CallDeliveryRow[];
    return call;
  }

  /** The call's transcript turns and tool calls, in order, for its `call.ended` webhook. */
  eventsForWebhook(callId: number): Promise<CallEventRow[]> {
    return this.manager.query(
      `SELECT type, seq, at, data FROM call_events WHERE call_id = $1 AND type IN ('transcript', 'tool_call')
        ORDER BY at, seq NULLS LAST, id`,
      [callId],
    );
  }

  async findLeadWithCampaign(leadId: number): Promise<CallLeadRow | undefined> {
    const [lead] = (await this.manager.query(
      `SELECT l.id, l.phone_number, l.variables, l.status, c.id AS campaign_id, c.name AS campaign_name
             FROM leads l JOIN campaigns c ON c.id = l.campaign_id WHERE l.id = $1`,
      [leadId],
    )) as CallLeadRow[];
    return lead;
  }

  /** No `call.ended` delivery is owed any more (the webhook was turned off, or the call is gone). */
  async settleWebhook(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET webhook_due = false WHERE id = $1 AND webhook_due`, [id]);
  }

  async settleStartedWebhook(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET started_webhook_due = false WHERE id = $1 AND started_webhook_due`, [
      id,
    ]);
  }

  /** Keeps the receiver's answer; a final one (delivered, or given up) also settles what was owed. */
  async recordWebhookResponse(id: number, response: Record<string, unknown>, final: boolean): Promise<void> {
    await this.manager.query(
      `UPDATE calls SET webhook_response = $2, webhook_due = webhook_due AND NOT $3 WHERE id = $1`,
      [id, JSON.stringify(response), final],
    );
  }

  /** Calls whose `call.ended` delivery is owed and that ended more than `seconds` ago, oldest first. */
  owedWebhooks(seconds: number): Promise<{ id: number; ended_at: Date }[]> {
    return this.manager.query(
      `SELECT id, ended_at FROM calls
        WHERE webhook_due AND ended_at < now() - make_interval(secs => $1)
        ORDER BY ended_at LIMIT 500`,
      [seconds],
    );
  }

  /** What the finished delivery job of the call settled. */
  async clearWebhookDue(id: number): Promise<void> {
    await this.manager.query(`UPDATE calls SET webhook_due = false WHERE id = $1`, [id]);
  }

  /**
   * Ends as `failed` the calls in an open status not updated for `minutes` (at most 500 a time), marks their webhook
   * owed when their assistant's is on, and settles their leads, in one transaction.
   */
  endStale(openStatuses: readonly string[], minutes: number): Promise<ReapedCallRow[]> {
    return this.dataSource.transaction(async (manager) => {
      const rows = (
        await manager.query(
          `UPDATE calls SET status = 'failed', ended_at = now(), updated_at = now(),
                dial_state = CASE WHEN dial_state IN ('pending', 'dialing') THEN 'failed' ELSE dial_state END,
                webhook_event_id = COALESCE(webhook_event_id, 'msg_' || gen_random_uuid()::text),
                webhook_due = webhook_due OR COALESCE((SELECT a.is_webhook_active AND a.webhook_url IS NOT NULL
                                                         FROM assistants a WHERE a.id = calls.assistant_id), false),
                evaluation = evaluation || jsonb_build_object('reason', 'No final status was reported by the voice runtime.')
          WHERE id IN (SELECT id FROM calls WHERE status = ANY($1) AND updated_at < now() - make_interval(mins => $2)
                        ORDER BY id LIMIT 500 FOR UPDATE SKIP LOCKED)
          RETURNING id, lead_id, secondary_contact_id, status, answered_by, assistant_id`,
          [openStatuses, minutes],
        )
      )[0] as ReapedCallRow[];
      for (const row of rows) await settleLeadOfEndedCall(manager, row);
      return rows;
    });
  }

  /**
   * Removes up to `batch` calls created more than `days` ago, oldest first (`purge_calls_before`, a transaction of
   * its own); returns how many went.
   */
  async purgeOlderThan(days: number, batch: number): Promise<number> {
    const [{ removed }] = (await this.manager.query(
      `SELECT purge_calls_before(now() - make_interval(days => $1), $2) AS removed`,
      [days, batch],
    )) as { removed: number }[];
    return removed;
  }
}
