import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  Errors,
  type InvokeToolRequest,
  type RuntimeEventsEnvelope,
  type RuntimeEventsRequest,
  type SearchKnowledgebaseQuery,
  type SearchResponse,
  type ToolInvocationEnvelope,
} from '@app/contracts';
import { noteAccountWrite, queryPool } from '@app/database';
import { KnowledgebasesService } from '../knowledgebases/knowledgebases.service';
import { ToolsService } from '../tools/tools.service';
import { mergeCallVariables } from './call-variables';

/** What the runtime's routes need of the call they name. */
interface RuntimeCall {
  id: number;
  user_id: number;
  assistant_id: number | null;
  knowledgebase_id: number | null;
  variables: Record<string, unknown>;
}

/**
 * The voice runtime's work during a call, for the call's own assistant and account: look-ups in its knowledgebase,
 * its tools called by the service (their secrets never leave it), and the call's events.
 */
@Injectable()
export class CallRuntime {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly knowledgebases: KnowledgebasesService,
    private readonly tools: ToolsService,
  ) {}

  /** The user search's answer over the call's assistant's knowledgebase; none: no passages. */
  async knowledge(externalId: string, query: SearchKnowledgebaseQuery): Promise<SearchResponse> {
    const call = await this.call(externalId);
    if (call.knowledgebase_id === null) return { data: [] };
    return this.knowledgebases.searchOwned(call.user_id, call.knowledgebase_id, query);
  }

  /**
   * Calls a tool of the call's assistant as the test route does, with the call's variables for its templates, and
   * records the invocation on the call (what the model asked and what came back, never a header or the answer's
   * body). A tool the assistant does not have is 404, whoever owns it. The endpoint's failure is the answer's
   * `status` and `error`, never this route's.
   */
  async invoke(externalId: string, toolId: number, request: InvokeToolRequest): Promise<ToolInvocationEnvelope> {
    const call = await this.call(externalId);
    const [linked] = await this.dataSource.query(
      `SELECT 1 FROM assistant_tools WHERE assistant_id = $1 AND tool_id = $2`,
      [call.assistant_id, toolId],
    );
    if (!linked) throw Errors.toolNotFound();
    const values = request.arguments ?? {};
    const { tool, result } = await this.tools.run(call.user_id, toolId, values, call.variables);
    const status = result.response?.status ?? null;
    await this.dataSource.query(
      `INSERT INTO call_events (call_id, seq, type, at, data) VALUES ($1, NULL, 'tool_call', now(), $2)`,
      [
        call.id,
        JSON.stringify({
          tool_id: tool.id,
          name: tool.name,
          arguments: values,
          status,
          duration_ms: result.durationMs,
        }),
      ],
    );
    noteAccountWrite(call.user_id);
    return {
      data: {
        status,
        body: result.response?.body ?? null,
        duration_ms: result.durationMs,
        error: result.error,
      },
    };
  }

  /**
   * Stores transcript turns and notes under the runtime's `seq`: one already stored is kept as first sent, so a
   * retried post (or one that crossed another) records nothing twice. One statement, whatever the batch.
   */
  async record(externalId: string, request: RuntimeEventsRequest): Promise<RuntimeEventsEnvelope> {
    const events = request.events.map((event) => ({
      seq: event.seq,
      type: event.type,
      at: event.at,
      data:
        event.type === 'transcript'
          ? {
              role: event.role,
              text: event.text,
              ...(event.start_ms === undefined ? {} : { start_ms: event.start_ms }),
              ...(event.end_ms === undefined ? {} : { end_ms: event.end_ms }),
            }
          : { text: event.text },
    }));
    const [row] = await queryPool<{ user_id: number | null; recorded: number }>(
      this.dataSource,
      `WITH call AS (SELECT id, user_id FROM calls WHERE external_id = $1),
            recorded AS (
              INSERT INTO call_events (call_id, seq, type, at, data)
              SELECT call.id, event.seq, event.type, event.at, event.data
                FROM call, jsonb_to_recordset($2::jsonb) AS event(seq int, type text, at timestamptz, data jsonb)
              ON CONFLICT (call_id, seq) DO NOTHING
              RETURNING 1)
       SELECT (SELECT user_id FROM call) AS user_id, (SELECT count(*)::int FROM recorded) AS recorded`,
      [externalId, JSON.stringify(events)],
    );
    if (row.user_id === null) throw Errors.callNotFound();
    noteAccountWrite(row.user_id);
    return {
      message: 'Events recorded.',
      data: { recorded: row.recorded, duplicates: events.length - row.recorded },
    };
  }

  private async call(externalId: string): Promise<RuntimeCall> {
    const [call] = (await this.dataSource.query(
      `SELECT c.id, c.user_id, c.assistant_id, a.knowledgebase_id,
              COALESCE(a.variables, '{}') AS assistant_variables, l.variables AS lead_variables, c.variables
         FROM calls c
         LEFT JOIN assistants a ON a.id = c.assistant_id
         LEFT JOIN leads l ON l.id = c.lead_id AND l.user_id = c.user_id
        WHERE c.external_id = $1`,
      [externalId],
    )) as (RuntimeCall & {
      assistant_variables: Record<string, unknown>;
      lead_variables: Record<string, unknown> | null;
    })[];
    if (!call) throw Errors.callNotFound();
    return {
      ...call,
      variables: mergeCallVariables(call.assistant_variables, call.lead_variables, call.variables),
    };
  }
}
