import { Injectable } from '@nestjs/common';
import {
  Errors,
  type InvokeToolRequest,
  type RuntimeEventsEnvelope,
  type RuntimeEventsRequest,
  type SearchKnowledgebaseQuery,
  type SearchResponse,
  type ToolInvocationEnvelope,
} from '@app/contracts';
import { CallsRepository, noteAccountWrite, type RuntimeCallRow } from '@app/database';
import { toolCallFailure } from '@app/tools';
import { KnowledgebasesService } from '../knowledgebases/knowledgebases.service';
import { ToolsService } from '../tools/tools.service';
import { mergeCallVariables } from './call-variables';

/**
 * The voice runtime's work during a call, for the call's own assistant and account: look-ups in its knowledgebase,
 * its tools called by the service (their secrets never leave it), and the call's events.
 */
@Injectable()
export class CallRuntime {
  constructor(
    private readonly calls: CallsRepository,
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
   * records the invocation on the call (what the model asked, what came back and why it failed, never a header, the
   * answer's body or the endpoint's path). A tool the assistant does not have is 404, whoever owns it. The endpoint's
   * failure is the answer's `status` and `error`, never this route's.
   */
  async invoke(externalId: string, toolId: number, request: InvokeToolRequest): Promise<ToolInvocationEnvelope> {
    const call = await this.call(externalId);
    if (!(await this.calls.assistantHasTool(call.assistant_id, toolId))) throw Errors.toolNotFound();
    const values = request.arguments ?? {};
    const { tool, result } = await this.tools.run(call.user_id, toolId, values, call.variables);
    const status = result.response?.status ?? null;
    await this.calls.insertToolCall(call.id, {
      tool_id: tool.id,
      name: tool.name,
      arguments: values,
      status,
      duration_ms: result.durationMs,
      error: toolCallFailure(result),
    });
    noteAccountWrite(call.user_id);
    return {
      data: {
        status,
        body: result.response?.body ?? null,
        duration_ms: result.durationMs,
        error: result.error?.message ?? null,
        error_code: result.error?.code ?? null,
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
    const row = await this.calls.insertEventsByExternalId(externalId, events);
    if (row.user_id === null) throw Errors.callNotFound();
    noteAccountWrite(row.user_id);
    return {
      message: 'Events recorded.',
      data: { recorded: row.recorded, duplicates: events.length - row.recorded },
    };
  }

  /** The call, its variables as its assistant sees them. */
  private async call(externalId: string): Promise<RuntimeCallRow> {
    const call = await this.calls.findRuntimeCallByExternalId(externalId);
    if (!call) throw Errors.callNotFound();
    return { ...call, variables: mergeCallVariables(call.assistant_variables, call.lead_variables, call.variables) };
  }
}
