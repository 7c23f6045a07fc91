import { type BeforeApplicationShutdown, Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppConfig } from '@app/config';
import { Errors, TERMINAL_CALL_STATUSES, ValidationFailed } from '@app/contracts';
import { LiveCallsRepository, type StreamedCallEvent } from '@app/database';
import { LiveSignals } from '@app/jobs';

/** A comment line this often keeps proxies and load balancers from closing a quiet stream; each also reads again. */
export const STREAM_HEARTBEAT_MS = 15_000;
/** How long a client waits before reconnecting after the stream dropped (the `retry` field). */
const RECONNECT_AFTER_MS = 1000;
/** Events read at once: a reconnect after a long call catches up in a few reads. */
const READ_BATCH = 500;
/** Streams of one account's calls open at once on one API process: a few watchers per live call, not a flood. */
export const MAX_STREAMS_PER_ACCOUNT = 100;
/** When a client refused by a full process tries again. */
const STREAM_FULL_RETRY_SECONDS = 2;

export interface CallEventStream {
  /** The account whose streams it counts (null: the runtime's, which holds one per call). */
  accountId: number | null;
  callId: number;
  /** The `Last-Event-ID` header as sent: events after it are delivered. */
  lastEventId: string | undefined;
  /** Only these types (the runtime's control stream), or all. */
  types: readonly string[] | null;
  /** The event's name and its data. */
  render: (event: StreamedCallEvent) => { event: string; data: unknown };
}

/** The `Last-Event-ID` a stream resumes after: an event id this service sent, or none. */
export function parseLastEventId(value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  if (!/^\d{1,18}$/.test(value)) {
    throw ValidationFailed.field('Last-Event-ID', 'The Last-Event-ID header must be the id of an event of the stream.');
  }
  return Number(value);
}

/**
 * Server-sent event streams of a call's stored events (`text/event-stream`): each event as it is stored, with its id
 * as the event's `id`, so a client that reconnects with `Last-Event-ID` gets what it missed and nothing twice. The
 * rows in Postgres are the truth: a signal from any process (`LiveSignals`) says where to read, and the stream
 * reads the call's events after the last it sent; a late commit of a lower id is read when its own signal names it.
 * A comment line every STREAM_HEARTBEAT_MS keeps the connection open and reads again, which also covers a lost
 * signal. The stream ends once the call's status is final and everything stored before has been sent, and when the
 * process shuts down (the client reconnects to another).
 */
@Injectable()
export class CallEventStreams implements BeforeApplicationShutdown {
  private readonly open = new Set<() => void>();
  private readonly perAccount = new Map<number, number>();
  /** Set once the process shuts down: a client reconnecting meanwhile is sent elsewhere, never held open here. */
  private closing = false;

  constructor(
    private readonly calls: LiveCallsRepository,
    private readonly signals: LiveSignals,
    private readonly config: AppConfig,
  ) {}

  /** Answers the stream; the call was found and is not final. Resolves once the stream has ended. */
  async follow(request: Request, response: Response, stream: CallEventStream): Promise<void> {
    if (this.closing) throw Errors.serviceUnavailable();
    // Each stream holds a socket and a subscription: past the bound the client goes to another process (its
    // reconnect lands anywhere behind the load balancer), never taking this one's file descriptors with it.
    if (this.open.size >= this.config.liveStreamsPerProcess) throw Errors.serviceUnavailable(STREAM_FULL_RETRY_SECONDS);
    const afterId = parseLastEventId(stream.lastEventId);
    if (stream.accountId !== null) {
      const count = this.perAccount.get(stream.accountId) ?? 0;
      if (count >= MAX_STREAMS_PER_ACCOUNT) throw Errors.tooManyStreams(MAX_STREAMS_PER_ACCOUNT);
      this.perAccount.set(stream.accountId, count + 1);
    }
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // nginx and its kin would otherwise hold the events back in their buffers.
      'X-Accel-Buffering': 'no',
      // A stream's connection is not reused once the stream ends: the client opens a new one to resume.
      Connection: 'close',
    });
    response.write(`retry: ${RECONNECT_AFTER_MS}\n\n`);
    let last = afterId;
    let from = afterId;
    const sent = new Set<number>();
    let reading = false;
    let readAgain = false;
    let ended = false;
    let unsubscribe: () => void = () => undefined;
    // Created before anything can end the stream; its first tick comes long after `read` exists.
    const heartbeat = setInterval(() => {
      response.write(': keep-alive\n\n');
      void read();
    }, STREAM_HEARTBEAT_MS);
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe();
      this.open.delete(end);
      if (stream.accountId !== null) {
        const count = (this.perAccount.get(stream.accountId) ?? 1) - 1;
        if (count > 0) this.perAccount.set(stream.accountId, count);
        else this.perAccount.delete(stream.accountId);
      }
      if (!response.writableEnded) response.end();
      done();
    };
    const read = async (): Promise<void> => {
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          const batchFrom = from;
          const found = await this.calls.eventsAfter(stream.callId, batchFrom, {
            limit: READ_BATCH,
            types: stream.types,
            finalStatuses: TERMINAL_CALL_STATUSES,
          });
          if (ended) return;
          if (!found) return end();
          for (const event of found.events) {
            if (sent.has(event.id)) continue;
            sent.add(event.id);
            last = Math.max(last, event.id);
            const { event: name, data } = stream.render(event);
            response.write(`id: ${event.id}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
          }
          // Lowered meanwhile by a signal naming an earlier event: read from there again.
          if (from === batchFrom) from = last;
          if (found.events.length === READ_BATCH) readAgain = true;
          else if (found.finished) {
            response.write(`event: end\ndata: {}\n\n`);
            return end();
          }
        } while (readAgain && !ended);
      } catch {
        // The database did not answer: the client reconnects and resumes after the last event it got.
        end();
      } finally {
        reading = false;
      }
    };
    this.open.add(end);
    response.on('close', end);
    const stop = await this.signals.subscribe(stream.callId, ({ fromId }) => {
      if (fromId > 0 && fromId <= from) from = fromId - 1;
      void read();
    });
    if (ended) stop();
    else unsubscribe = stop;
    await read();
    return finished;
  }

  /** Streams end as the process goes away: their clients reconnect elsewhere with their `Last-Event-ID`. */
  beforeApplicationShutdown(): void {
    this.closing = true;
    for (const end of [...this.open]) end();
  }
}
