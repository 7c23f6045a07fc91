/** The only Redis eviction policy under which queued jobs cannot silently disappear. */
export const SAFE_EVICTION_POLICY = 'noeviction';

/** Reads `maxmemory_policy` from the text of `INFO memory` (works where `CONFIG GET` is disabled). */
export function evictionPolicyOf(info: string): string | undefined {
  return /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
}

/** The message that stops a process whose Redis may evict keys, or undefined when the policy is safe. */
export function evictionPolicyProblem(info: string): string | undefined {
  const policy = evictionPolicyOf(info);
  if (policy === undefined || policy === SAFE_EVICTION_POLICY) return undefined;
  return (
    `Redis evicts keys under memory pressure (maxmemory-policy ${policy}): queued jobs and schedules could be ` +
    `lost. Set "maxmemory-policy ${SAFE_EVICTION_POLICY}" on the Redis server (or use a separate Redis for the queues).`
  );
}
