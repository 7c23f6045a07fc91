import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { type RuntimeCredential } from '@app/calls';
import {
  DomainError,
  Errors,
  type InvokeToolRequest,
  type RuntimeEvent,
  type RuntimeEventsEnvelope,
  type RuntimeEventsRequest,
  type SearchKnowledgebaseQuery,
  type SearchResponse,
  TERMINAL_CALL_STATUSES,
  type ToolInvocationEnvelope,
  toCallControlMessage,
  toRuntimeEventsReceipt,
  toToolInvocation,
  ValidationFailed,
} from '@app/contracts';
import { LiveCallsRepository, type NewCallEvent, type RuntimeCallRow, RuntimeCallsRepository } from '@app/database';
import { LiveSignals } from '@app/jobs';
import { toolCallFailure } from '@app/tools';
import { CallEventStreams } from '../calls/call-event-streams.service';
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
    private readonly calls: RuntimeCallsRepository,
    private readonly knowledgebases: KnowledgebasesService,
    private readonly tools: ToolsService,
    private readonly signals: LiveSignals,
    private readonly live: LiveCallsRepository,
    private readonly streams: CallEventStreams,
  ) {}

  /**
   * The call's control stream: the owner's hang-ups, texts to say and instructions (its `control` events), each once,
   * in the order asked, from after `Last-Event-ID`, until the call's final write. A finished call is 409.
   */
  async control(externalId: string, request: Request, response: Response): Promise<void> {
    const call = await this.live.findCall({ externalId }, TERMINAL_CALL_STATUSES);
    if (!call) throw Errors.callNotFound();
    if (call.finished) throw Errors.callFinished();
    await this.streams.follow(request, response, {
      accountId: null,
      callId: call.id,
      lastEventId: request.header('last-event-id'),
      types: ['control'],
      render: (event) => ({ event: 'control', data: toCallControlMessage(event) }),
    });
  }

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
    const eventId = await this.calls.insertToolCall(call, {
      tool_id: tool.id,
      name: tool.name,
      arguments: values,
      status: result.response?.status ?? null,
      duration_ms: result.durationMs,
      error: toolCallFailure(result),
    });
    await this.signals.publish({ callId: call.id, fromId: eventId });
    return { data: toToolInvocation(result) };
  }

  /**
   * Stores transcript turns and notes under the runtime's `seq`, all of a batch or none: one already stored with the
   * same content is kept as first sent, so a retried post (or one that crossed another) records nothing twice; other
   * content under a stored seq is a 409 naming it. A time outside the call's life (with `EVENT_CLOCK_TOLERANCE_SECONDS`
   * either side) is a 422 on the event's `at`; a call token whose call has ended is refused as the guard refuses it.
   * One statement, whatever the batch.
   */
  async record(
    externalId: string,
    request: RuntimeEventsRequest,
    credential: RuntimeCredential,
  ): Promise<RuntimeEventsEnvelope> {
    const events = distinctEvents(request.events.map(toNewEvent));
    const outcome = await this.calls.insertEventsByExternalId(externalId, events, {
      whileOpen: credential === 'call-token',
      finalStatuses: TERMINAL_CALL_STATUSES,
      tolerance: EVENT_CLOCK_TOLERANCE_SECONDS,
      notifyChannel: this.signals.notifyChannel,
    });
    switch (outcome.kind) {
      case 'no-call':
        // A call token the guard let through from memory whose call has since been deleted: as a wrong token.
        throw credential === 'call-token' ? Errors.unauthenticated() : Errors.callNotFound();
      case 'closed':
        throw Errors.unauthenticated();
      case 'conflict':
        throw eventConflict(outcome.seq);
      case 'outside':
        throw new ValidationFailed(
          Object.fromEntries(
            outcome.outside.map(({ index, early }) => [
              `events.${index}.at`,
              [
                early
                  ? `The events.${index}.at field must be a date after or equal to ${outcome.earliest.toISOString()}.`
                  : `The events.${index}.at field must be a date before or equal to ${outcome.latest.toISOString()}.`,
              ],
            ]),
          ),
        );
      case 'recorded':
        // On the Postgres backend the statement notified the call's watchers itself.
        if (outcome.fromId !== null && !this.signals.notifyChannel) {
          await this.signals.publish({ callId: outcome.callId, fromId: outcome.fromId });
        }
        return {
          message: 'Events recorded.',
          data: toRuntimeEventsReceipt(outcome.recorded, request.events.length),
        };
    }
  }

  /** The call, its variables as its assistant sees them. */
  private async call(externalId: string): Promise<RuntimeCallRow> {
    const call = await this.calls.findRuntimeCallByExternalId(externalId);
    if (!call) throw Errors.callNotFound();
    return { ...call, variables: mergeCallVariables(call.assistant_variables, call.lead_variables, call.variables) };
  }
}

/** How far an event's time may be from the call's life, either side: the runtime's clock is not the service's. */
export const EVENT_CLOCK_TOLERANCE_SECONDS = 300;

const eventConflict = (seq: number) =>
  new DomainError('call_event_conflict', 409, { message: `Event ${seq} was already recorded with other content.` });

/** An event as stored: its type's fields in `data`, and its place in the request for the errors that name it. */
function toNewEvent(event: RuntimeEvent, index: number): NewCallEvent & { index: number } {
  return {
    index,
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
        : event.type === 'dtmf'
          ? { digits: event.digits, direction: event.direction }
          : { text: event.text },
  };
}

/**
 * A batch's events, one per seq: a repeat of an earlier one in the same batch is a duplicate as a stored one is,
 * and with other content it is the batch's own contradiction, a 422 on its `seq`.
 */
function distinctEvents<Event extends NewCallEvent & { index: number }>(events: Event[]): Event[] {
  const bySeq = new Map<number, Event>();
  for (const event of events) {
    const earlier = bySeq.get(event.seq);
    if (!earlier) bySeq.set(event.seq, event);
    else if (!sameEvent(earlier, event)) {
      throw ValidationFailed.field(
        `events.${event.index}.seq`,
        `The events.${event.index}.seq field has a duplicate value.`,
      );
    }
  }
  return [...bySeq.values()];
}

function sameEvent(one: NewCallEvent, other: NewCallEvent): boolean {
  return (
    one.type === other.type &&
    Date.parse(one.at) === Date.parse(other.at) &&
    JSON.stringify(one.data) === JSON.stringify(other.data)
  );
}
