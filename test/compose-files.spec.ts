import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '@app/config';
import { readSettings } from '../examples/livekit-agent/src/settings.js';
import { readEnvTemplate } from './support/env-template';

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  network_mode?: string;
}

const FILES = ['docker-compose.yml', 'docker-compose.livekit.yml'];
const TEMPLATE = new Set(readEnvTemplate('.env.example').map((variable) => variable.name));
/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?error}`, `${NAME?error}`. */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g;

function servicesOf(file: string): Record<string, Service> {
  return (parse(readFileSync(file, 'utf8'), { merge: true }) as { services: Record<string, Service> }).services;
}

/** Every string in a service's definition. */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}

/** A service's environment as Compose would give it, the variables' values taken from `values`. */
function environmentOf(service: Service, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([name, value]) => [
      name,
      String(value).replace(
        REFERENCE,
        (_, variable: string, operator?: string, fallback?: string) =>
          values[variable] ?? (operator?.endsWith('-') ? (fallback ?? '') : ''),
      ),
    ]),
  );
}

describe.each(FILES)('%s', (file) => {
  const services = servicesOf(file);

  it('has services, each with an image or a build', () => {
    expect(Object.keys(services).length).toBeGreaterThan(0);
    for (const [name, service] of Object.entries(services))
      expect([name, Boolean(service.image || service.build)]).toEqual([name, true]);
  });

  it('uses no variable that neither has a default nor is in .env.example', () => {
    const undefinedVariables = Object.entries(services).flatMap(([name, service]) =>
      stringsOf(service).flatMap((text) =>
        [...text.matchAll(REFERENCE)]
          .filter(([, variable, operator]) => !operator?.endsWith('-') && !TEMPLATE.has(variable))
          .map(([reference]) => `${name}: ${reference}`),
      ),
    );
    expect(undefinedVariables).toEqual([]);
  });
});

describe('docker-compose.livekit.yml', () => {
  const services = servicesOf('docker-compose.livekit.yml');
  const values = {
    ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'),
    RUNTIME_API_TOKEN: 'r'.repeat(40),
    OPENAI_API_KEY: 'sk-test',
    DEEPGRAM_API_KEY: 'dg-test',
  };

  it('runs LiveKit, its SIP service, their Redis, the service and the agent', () => {
    expect(Object.keys(services).sort()).toEqual([
      'agent',
      'api',
      'livekit',
      'migrate',
      'postgres',
      'redis',
      'sip',
      'worker',
    ]);
    expect(services.livekit.image).toMatch(/^livekit\/livekit-server(:|$)/);
    expect(services.livekit.command).toContain('--dev');
    expect(services.sip.image).toMatch(/^livekit\/sip(:|$)/);
  });

  it('configures the service for LiveKit, as its configuration schema accepts', () => {
    for (const name of ['migrate', 'api', 'worker']) {
      const environment = environmentOf(services[name], values);
      expect(environment).toMatchObject({ SIP_PROVISIONER: 'livekit', CALL_DIALER: 'livekit' });
      const config = loadConfig(environment);
      expect(config.environment).toBe('production');
    }
  });

  it("configures the agent as its settings accept, with the service's LiveKit, token and agent name", () => {
    const service = environmentOf(services.api, values);
    const agent = environmentOf(services.agent, values);
    const settings = readSettings(agent);
    expect(settings.runtimeToken).toBe(service.RUNTIME_API_TOKEN);
    expect(settings.agentName).toBe(service.LIVEKIT_AGENT_NAME);
    expect(agent.LIVEKIT_URL).toBe(service.LIVEKIT_URL);
    expect(settings.serviceUrl).toBe(`http://127.0.0.1:${loadConfig(service).port}`);
  });

  it('gives LiveKit and its SIP service the same Redis and the same credentials', () => {
    const sip = parse(String(services.sip.environment?.SIP_CONFIG_BODY)) as {
      api_key: string;
      api_secret: string;
      ws_url: string;
      redis: { address: string };
      sip_port: number;
      rtp_port: string;
    };
    const livekit = services.livekit.command ?? [];
    expect(sip.redis.address).toBe(livekit[livekit.indexOf('--redis-host') + 1]);
    const service = environmentOf(services.api, values);
    expect(sip).toMatchObject({
      api_key: service.LIVEKIT_API_KEY,
      api_secret: service.LIVEKIT_API_SECRET,
      ws_url: service.LIVEKIT_URL,
      sip_port: 5060,
      rtp_port: '10000-20000',
    });
    expect(`redis://${sip.redis.address}`).toBe(service.REDIS_URL);
  });
});

/** Compose itself, where this machine has it (`docker compose` or Debian's `docker-compose`): its own parser and checks. */
function composeCommand(): string[] | undefined {
  const works = (command: string[]) =>
    spawnSync(command[0], [...command.slice(1), 'version'], { stdio: 'ignore' }).status === 0;
  return [['docker', 'compose'], ['docker-compose']].find(works);
}

const compose = composeCommand();
(compose ? describe : describe.skip)(
  `the compose files, read by ${compose?.join(' ') ?? 'Compose (not installed here)'}`,
  () => {
    it.each(FILES)('%s is valid with the variables .env.example asks to be set', (file) => {
      const directory = mkdtempSync(join(tmpdir(), 'compose-'));
      try {
        const env = join(directory, '.env');
        writeFileSync(
          env,
          `ENCRYPTION_KEY=${Buffer.alloc(32, 7).toString('base64')}\nRUNTIME_API_TOKEN=${'r'.repeat(40)}\n`,
        );
        execFileSync(compose![0], [...compose!.slice(1), '--env-file', env, '-f', file, 'config', '-q'], {
          stdio: 'pipe',
        });
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    });
  },
);
