/**
 * The worker: registers with LiveKit under the agent name the service's dispatches use, and runs each dispatched
 * call of any assistant the service stores. `node dist/main.js start` (see README.md).
 */
import { type JobContext, ServerOptions, cli, defineAgent } from '@livekit/agents';
import { fileURLToPath } from 'node:url';
import { runCall } from './call.js';
import { runConsultation } from './consultation.js';
import { readDispatch } from './dispatch.js';
import { LiveKitLine } from './livekit-line.js';
import { createSession } from './models.js';
import { ServiceClient } from './service-client.js';
import { type Settings, SettingsError, readSettings } from './settings.js';

// Read at import, in the worker and in each job process alike, so a bad setting stops the worker at boot: with one
// line naming every bad variable, not a stack trace.
const settings = ((): Settings => {
  try {
    return readSettings();
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
})();

export default defineAgent({
  entry: async (ctx: JobContext) => {
    const dispatch = readDispatch(ctx.job.metadata, ctx.room.name ?? ctx.job.room?.name ?? '');
    const service = new ServiceClient({ baseUrl: settings.serviceUrl }, settings.runtimeToken);
    if (dispatch.consultation) {
      // A warm transfer's person is rung in as an outbound call is: briefed once they answer.
      await runConsultation({
        externalId: dispatch.externalId,
        consultation: dispatch.consultation,
        line: await LiveKitLine.join(ctx, 'outbound'),
        service,
        createSession: () => createSession(settings.models, null),
      });
      return;
    }
    const line = await LiveKitLine.join(ctx, dispatch.type);
    const done = runCall({
      dispatch,
      line,
      service,
      createSession: (assistant) => createSession(settings.models, assistant),
      unavailableMessage: settings.unavailableMessage,
      busyMessage: settings.busyMessage,
    });
    // Hanging up deletes the room, which shuts the job down: the final write must still reach the service.
    ctx.addShutdownCallback(() => done);
    await done;
  },
});

// Only when run as the program: the framework's job processes import this file for its default export alone.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  cli.runApp(
    new ServerOptions({
      agent: fileURLToPath(import.meta.url),
      agentName: settings.agentName,
      port: settings.httpPort,
    }),
  );
}
