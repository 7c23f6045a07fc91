import { once } from 'node:events';
import { AppProcess } from './support/app-process';
import { UNTIL_STALLED, waitFor } from './support/wait-for';

describe('Shutdown behind a load balancer', () => {
  let api: AppProcess | undefined;
  afterEach(() => api?.stop());

  it(
    'answers readiness 503 at once on SIGTERM, keeps serving for the drain delay, then exits',
    async () => {
      api = await AppProcess.start({ SHUTDOWN_DRAIN_SECONDS: '3' });
      const status = (path: string) =>
        fetch(`${api!.baseUrl}${path}`).then(
          (response) => response.status,
          () => 'refused' as const,
        );
      const exit = once(api.child, 'exit');
      const signalledAt = Date.now();
      api.child.kill('SIGTERM');
      await waitFor(async () => ((await status('/health/ready')) === 503 ? true : undefined), 2_000, 50);
      expect(Date.now() - signalledAt).toBeLessThan(2_000);
      // Still serving while the balancer notices: liveness and ordinary routes answer.
      expect(await status('/health')).toBe(200);
      expect(await status('/user/me')).toBe(401);

      const [code, signal] = (await exit) as [number | null, string | null];
      expect(Date.now() - signalledAt).toBeGreaterThanOrEqual(3_000);
      // Nest re-raises the signal once it has closed everything: a clean exit "by SIGTERM", not a crash.
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGTERM' });
      expect(await status('/health')).toBe('refused');
    },
    UNTIL_STALLED,
  );
});
