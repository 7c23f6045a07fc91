import { Logger, type Provider } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { CallIngestion } from '@app/calls';
import { DiallingRepository } from '@app/database';
import {
  CALL_DIALER,
  type CallDialer,
  type DialRequest,
  type DialRequestLog,
  LiveKitCallDialer,
  LocalCallDialer,
} from '@app/telephony';

/** The local dialer's record of dial requests, in Postgres so every worker and test sees the same. */
function postgresDialLog(dialling: DiallingRepository): DialRequestLog {
  return {
    has: (attemptId) => dialling.hasLocalDialRequest(attemptId),
    add: (request) => dialling.insertLocalDialRequest(request.attemptId, request),
  };
}

/**
 * Demo mode: the call is answered at once and completed after the configured delay, each step written through
 * the ingestion service as the voice runtime would write it. Timers live in this process only: a call whose
 * worker stops first is ended by the reaper like any call the runtime lost.
 */
function demoPlayOut(ingestion: CallIngestion, delayMs: number): (request: DialRequest) => void {
  const logger = new Logger('DemoCalls');
  const write = (request: DialRequest, status: 'in-progress' | 'completed') =>
    ingestion.write(request.attemptId, {
      assistant_id: request.assistantId,
      type: 'outbound',
      status,
      client_phone_number: request.to,
      assistant_phone_number: request.from,
      ...(status === 'completed'
        ? {
            duration: Math.max(1, Math.round(delayMs / 1000)),
            answered_by: 'human',
            transcript: 'Assistant: Hello! This is a demo call.\nCustomer: Thanks, goodbye.',
          }
        : {}),
    });
  return (request) => {
    setImmediate(() => {
      void write(request, 'in-progress')
        .then(() => new Promise((resolve) => setTimeout(resolve, delayMs).unref()))
        .then(() => write(request, 'completed'))
        .catch((error: Error) => logger.warn({ callId: request.callId, error: error.message }, 'demo call failed'));
    });
  };
}

/** The dialer adapter chosen by CALL_DIALER (`local`, the default, or `livekit`). */
export const callDialerProvider: Provider = {
  provide: CALL_DIALER,
  inject: [AppConfig, DiallingRepository, CallIngestion],
  useFactory: (config: AppConfig, dialling: DiallingRepository, ingestion: CallIngestion): CallDialer =>
    config.callDialer === 'livekit' && config.livekit
      ? new LiveKitCallDialer(config.livekit, config.livekitAgentName)
      : new LocalCallDialer({
          log: postgresDialLog(dialling),
          latencyMs: config.localDialerLatencyMs,
          playOut: config.localDialerDemoMs > 0 ? demoPlayOut(ingestion, config.localDialerDemoMs) : undefined,
        }),
};
