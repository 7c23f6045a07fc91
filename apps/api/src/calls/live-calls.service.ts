import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  type CallControlAction,
  Errors,
  type MessageResponse,
  TERMINAL_CALL_STATUSES,
  toCallEventResponse,
} from '@app/contracts';
import { LiveCallsRepository } from '@app/database';
import { JobQueue, Jobs, LiveSignals, OWNER_HANGUP_GRACE_MS } from '@app/jobs';
import type { AuthenticatedUser } from '../auth/auth-context';
import { CallEventStreams } from './call-event-streams.service';

const ACCEPTED: Record<CallControlAction, string> = {
  hangup: 'The call is being hung up.',
  say: 'The message is on its way to the call.',
  instruct: 'The instruction is on its way to the call.',
};

/**
 * The owner's hold on a live call: control messages its runtime receives on its control stream (stored as the call's
 * `control` events, so none is lost and a reconnect replays them), a hang-up the runtime does not confirm enforced by
 * the worker after OWNER_HANGUP_GRACE_MS, and the stream of the call's events as they are stored.
 */
@Injectable()
export class LiveCallsService {
  constructor(
    private readonly calls: LiveCallsRepository,
    private readonly signals: LiveSignals,
    private readonly jobs: JobQueue,
    private readonly streams: CallEventStreams,
  ) {}

  /**
   * Stores the control for the runtime and signals its stream; a hang-up also queues its enforcement. Another
   * account's call is 404, a finished one 409. Should the queue refuse the enforcement, the caller is told (503): the
   * runtime still receives the hang-up, and a repeat queues the enforcement again.
   */
  async control(
    user: AuthenticatedUser,
    id: number,
    action: CallControlAction,
    text?: string,
  ): Promise<MessageResponse> {
    const stored = await this.calls.insertControl(
      user.id,
      id,
      { action, ...(text === undefined ? {} : { text }) },
      { finalStatuses: TERMINAL_CALL_STATUSES, notifyChannel: this.signals.notifyChannel },
    );
    if (stored.kind === 'no-call') throw Errors.callNotFound();
    if (stored.kind === 'finished') throw Errors.callFinished();
    if (!this.signals.notifyChannel) await this.signals.publish({ callId: stored.callId, fromId: stored.eventId });
    if (action === 'hangup') {
      await this.jobs.enqueue(
        Jobs.enforceOwnerHangup,
        { callId: stored.callId, controlId: stored.eventId },
        { delay: OWNER_HANGUP_GRACE_MS },
      );
    }
    return { message: ACCEPTED[action] };
  }

  /**
   * The call's events as they are stored, from after `Last-Event-ID`, until the call ends. An ended call is 409,
   * unless the client resumes (a reconnect that raced the end gets the rest, then the end).
   */
  async watch(user: AuthenticatedUser, id: number, request: Request, response: Response): Promise<void> {
    const lastEventId = request.header('last-event-id');
    const call = await this.calls.findOwned(user.id, id, TERMINAL_CALL_STATUSES);
    if (!call) throw Errors.callNotFound();
    if (call.finished && lastEventId === undefined) throw Errors.callFinished();
    await this.streams.follow(request, response, {
      accountId: user.id,
      callId: call.id,
      lastEventId,
      types: null,
      render: (event) => ({ event: event.type, data: toCallEventResponse(event) }),
    });
  }
}
