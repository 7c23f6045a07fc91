import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { waitFor } from './wait-for';

const run = promisify(execFile);

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

/** Redis Cluster's bus listens at the client port plus this; both must be free. */
const BUS_OFFSET = 10_000;

async function bindable(port: number): Promise<boolean> {
  const server = createServer();
  server.once('error', () => undefined);
  server.listen(port, '127.0.0.1');
  const listening = await Promise.race([
    once(server, 'listening').then(() => true),
    once(server, 'error').then(() => false),
  ]);
  if (listening) await new Promise((resolve) => server.close(resolve));
  return listening;
}

/** Loopback ports whose bus ports are free as well; never 6379, which belongs to the machine's Redis. */
async function freeClusterPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) {
    // Bus ports too below the usual ephemeral range (32768+), where outgoing connections take their local ports.
    const port = 10_000 + Math.floor(Math.random() * 12_000);
    if (ports.includes(port) || ports.includes(port + BUS_OFFSET)) continue;
    if ((await bindable(port)) && (await bindable(port + BUS_OFFSET))) ports.push(port);
  }
  return ports;
}

class PortTakenError extends Error {}

/** What one node says of the cluster: `CLUSTER INFO` as a record. */
function clusterInfo(port: number): Promise<Record<string, string>> {
  return nodeInfo(port, 'CLUSTER', 'INFO');
}

/** A node's answer to an INFO-like command (`field:value` lines) as a record. */
async function nodeInfo(port: number, ...command: [string, string]): Promise<Record<string, string>> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const text = (await client.call(...command)) as string;
    return Object.fromEntries(
      text
        .split(/\r?\n/)
        .filter(Boolean)
        .map((line) => line.split(':') as [string, string]),
    );
  } finally {
    client.disconnect();
  }
}

/**
 * A Redis Cluster of 3 masters with a replica each, from the machine's `redis-server`, on free loopback ports and in a
 * temporary directory that `stop` removes with the processes. Nodes time out after a second, so a killed master's
 * replica takes over within a few seconds; a cluster missing a master keeps serving the slots it still has.
 */
export class LocalRedisCluster {
  private readonly processes = new Map<number, ChildProcess>();

  private constructor(
    readonly directory: string,
    readonly ports: number[],
  ) {
    // Should the run end without `stop` (a hook timed out, Jest forced its exit), the nodes go with it all the same.
    process.once('exit', this.killNow);
  }

  private readonly killNow = () => {
    for (const child of this.processes.values()) child.kill('SIGKILL');
    rmSync(this.directory, { recursive: true, force: true });
  };

  /** The seed nodes, as REDIS_CLUSTER_NODES takes them. */
  get seedNodes(): string {
    return this.ports.map((port) => `127.0.0.1:${port}`).join(',');
  }

  /** Starts one; a port taken between the check and the node's bind is retried on other ports. */
  static async start(nodeCount = 6): Promise<LocalRedisCluster> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await LocalRedisCluster.startOnce(nodeCount);
      } catch (error) {
        if (!(error instanceof PortTakenError) || attempt === 3) throw error;
      }
    }
  }

  private static async startOnce(nodeCount: number): Promise<LocalRedisCluster> {
    const cluster = new LocalRedisCluster(
      mkdtempSync(join(tmpdir(), 'redis-cluster-')),
      await freeClusterPorts(nodeCount),
    );
    try {
      for (const port of cluster.ports) cluster.startNode(port);
      await waitFor(
        async () => {
          // A node that exited at once could not bind its port or its bus port.
          if ([...cluster.processes.values()].some((child) => child.exitCode !== null)) throw new PortTakenError();
          const infos = await Promise.all(cluster.ports.map((port) => clusterInfo(port).catch(() => undefined)));
          return infos.every(Boolean) ? true : undefined;
        },
        20_000,
        50,
      );
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...cluster.ports.map((port) => `127.0.0.1:${port}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        {
          timeout: 60_000,
        },
      );
      await cluster.waitUntilHealthy();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** Every node sees every slot served and every other node. */
  async waitUntilHealthy(timeoutMs = 30_000): Promise<void> {
    const live = [...this.processes.keys()];
    await waitFor(
      async () => {
        const infos = await Promise.all(live.map((port) => clusterInfo(port).catch(() => undefined)));
        // A replica that has not synced with its master yet refuses to take over from it (its data is too old).
        const replication = await Promise.all(
          live.map((port) => nodeInfo(port, 'INFO', 'replication').catch(() => undefined)),
        );
        const healthy =
          infos.every(
            (info) =>
              info?.cluster_state === 'ok' &&
              info.cluster_slots_ok === '16384' &&
              Number(info.cluster_known_nodes) === this.ports.length,
          ) &&
          replication.every(
            (info) => info !== undefined && (info.role === 'master' || info.master_link_status === 'up'),
          );
        return healthy ? true : undefined;
      },
      timeoutMs,
      100,
    );
  }

  /** The hash slot of a key, as the cluster computes it. */
  async slotOf(key: string): Promise<number> {
    const client = new Redis({ host: '127.0.0.1', port: (await this.masters())[0], maxRetriesPerRequest: 1 });
    try {
      return Number(await client.call('CLUSTER', 'KEYSLOT', key));
    } finally {
      client.disconnect();
    }
  }

  /** The master that serves each key's slot now, by its client port. */
  async mastersOf(keys: string[]): Promise<number[]> {
    const port = [...this.processes.keys()][0];
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
    try {
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      return await Promise.all(
        keys.map(async (key) => {
          const slot = Number(await client.call('CLUSTER', 'KEYSLOT', key));
          const range = ranges.find(([first, last]) => slot >= first && slot <= last);
          if (!range) throw new Error(`no master serves slot ${slot}`);
          return range[2][1];
        }),
      );
    } finally {
      client.disconnect();
    }
  }

  /** The node that serves `slot` as master now, by its client port. */
  async masterOf(slot: number): Promise<number> {
    const port = [...this.processes.keys()][0];
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
    try {
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      const range = ranges.find(([first, last]) => slot >= first && slot <= last);
      if (!range) throw new Error(`no master serves slot ${slot}`);
      return range[2][1];
    } finally {
      client.disconnect();
    }
  }

  /**
   * Appends every command that names more than one key, as each master receives it (MONITOR), to `file` as JSON lines
   * `{port, args}`; returns the function that stops recording.
   */
  async recordMultiKeyCommands(file: string): Promise<() => Promise<void>> {
    const out = createWriteStream(file, { flags: 'a' });
    const monitors = await Promise.all(
      (await this.masters()).map(async (port) => {
        // As ioredis's `monitor()` does, less its rejection on the first error: ioredis takes the connection as
        // monitoring only once the reply to MONITOR has been handed on, so a command's line that the master sends
        // in the same read meets an empty command queue ("Command queue state error") and made `monitor()` reject.
        // That line is dropped (a command of the instant recording starts); every later one is read.
        const monitor = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, monitor: true });
        monitor.on('error', () => undefined);
        // Not `events.once`, which rejects on that error too.
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => {
            monitor.disconnect();
            reject(new Error(`MONITOR on port ${port} not started within 30 s`));
          }, 30_000);
          monitor.once('monitoring', () => {
            clearTimeout(timer);
            resolve();
          });
        });
        monitor.on('monitor', (_time: string, args: string[]) => {
          const keys = commandKeys(args);
          if (keys.length < 2) return;
          const command = args[0].toLowerCase();
          // A script by its SHA-1, whether it was sent by digest (EVALSHA) or in full (EVAL).
          const script = command.startsWith('evalsha')
            ? args[1]
            : command.startsWith('eval')
              ? sha1(args[1])
              : undefined;
          out.write(`${JSON.stringify({ port, command, script, keys })}\n`);
        });
        return monitor;
      }),
    );
    return async () => {
      for (const monitor of monitors) monitor.disconnect();
      await new Promise((resolve) => out.end(resolve));
    };
  }

  /** The client ports of the nodes serving as masters now. */
  async masters(): Promise<number[]> {
    const port = [...this.processes.keys()][0];
    const client = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 });
    try {
      const ranges = (await client.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
      return [...new Set(ranges.map((range) => range[2][1]))];
    } finally {
      client.disconnect();
    }
  }

  /** Kills a node at once, as a crashed machine would go: no goodbye to its clients or its replica. */
  kill(port: number): void {
    this.processes.get(port)?.kill('SIGKILL');
    this.processes.delete(port);
  }

  /** Starts a killed node again from its saved cluster configuration: it rejoins, as a replica if it was replaced. */
  restart(port: number): void {
    this.startNode(port);
  }

  async stop(): Promise<void> {
    const exits = [...this.processes.values()].map((child) =>
      child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : once(child, 'exit'),
    );
    for (const child of this.processes.values()) child.kill('SIGKILL');
    await Promise.all(exits);
    this.processes.clear();
    rmSync(this.directory, { recursive: true, force: true });
    process.removeListener('exit', this.killNow);
  }

  private startNode(port: number): void {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.directory,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '1000',
        '--cluster-require-full-coverage',
        'no',
        '--save',
        '',
        '--appendonly',
        'no',
        '--maxmemory-policy',
        'noeviction',
        '--logfile',
        join(this.directory, `${port}.log`),
      ],
      { stdio: 'ignore' },
    );
    this.processes.set(port, child);
  }
}

/** Commands whose every argument after the name is a key. */
const ALL_KEYS = new Set([
  'del',
  'unlink',
  'exists',
  'mget',
  'touch',
  'watch',
  'sunionstore',
  'sinterstore',
  'sdiffstore',
  'sunion',
  'sinter',
  'sdiff',
  'pfcount',
  'pfmerge',
]);
/** Commands whose first two arguments are keys. */
const TWO_KEYS = new Set([
  'rename',
  'renamenx',
  'smove',
  'lmove',
  'rpoplpush',
  'brpoplpush',
  'blmove',
  'copy',
  'zrangestore',
]);

/** One multi-key command a master received, as `recordMultiKeyCommands` writes it. */
export interface RecordedCommand {
  port: number;
  command: string;
  script?: string;
  keys: string[];
}

/** The keys a command names (lower-case name first), as far as the house's and BullMQ's commands go. */
export function commandKeys(args: string[]): string[] {
  const [name, ...rest] = args;
  switch (name.toLowerCase()) {
    case 'eval':
    case 'evalsha':
    case 'eval_ro':
    case 'evalsha_ro':
    case 'fcall':
    case 'fcall_ro':
      return rest.slice(2, 2 + Number(rest[1]));
    case 'zunionstore':
    case 'zinterstore':
    case 'zdiffstore':
      return [rest[0], ...rest.slice(2, 2 + Number(rest[1]))];
    case 'mset':
    case 'msetnx':
      return rest.filter((_, index) => index % 2 === 0);
    case 'blpop':
    case 'brpop':
    case 'bzpopmin':
    case 'bzpopmax':
      return rest.slice(0, -1);
    case 'xread':
    case 'xreadgroup': {
      const streams = rest.findIndex((arg) => arg.toLowerCase() === 'streams');
      if (streams < 0) return [];
      const names = rest.slice(streams + 1);
      return names.slice(0, names.length / 2);
    }
    default:
      if (ALL_KEYS.has(name.toLowerCase())) return rest;
      if (TWO_KEYS.has(name.toLowerCase())) return rest.slice(0, 2);
      return [];
  }
}
