import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { TokenVerifier } from 'livekit-server-sdk';
import { LiveKitSipProvisioner } from './livekit-sip-provisioner';
import { SipProvisioningError } from './sip-provisioner';

const API_KEY = 'APItestkey';
const API_SECRET = 'test-secret-that-is-long-enough-for-hs256';

interface Recorded {
  method: string;
  body: Record<string, unknown>;
  sipAdmin: boolean;
}

/** A stand-in for LiveKit's Twirp API on 127.0.0.1: checks each call's JWT and records what it was asked. */
async function startFakeLiveKit(failOn?: string) {
  const calls: Recorded[] = [];
  const verifier = new TokenVerifier(API_KEY, API_SECRET);
  let counter = 0;
  const server: Server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => (text += chunk));
    request.on('end', async () => {
      const method = (request.url ?? '').replace('/twirp/livekit.SIP/', '');
      const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
      const grants = await verifier.verify(token).catch(() => undefined);
      if (!grants) {
        response
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"code":"unauthenticated","msg":"bad token"}');
        return;
      }
      calls.push({ method, body: JSON.parse(text || '{}'), sipAdmin: grants.sip?.admin === true });
      if (method === failOn) {
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end('{"code":"invalid_argument","msg":"refused"}');
        return;
      }
      counter++;
      const replies: Record<string, object> = {
        CreateSIPInboundTrunk: { sipTrunkId: `ST_in${counter}` },
        CreateSIPOutboundTrunk: { sipTrunkId: `ST_out${counter}` },
        CreateSIPDispatchRule: { sipDispatchRuleId: `SDR_${counter}` },
        DeleteSIPTrunk: {},
        DeleteSIPDispatchRule: {},
      };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(replies[method] ?? {}));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, calls, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('LiveKitSipProvisioner against a fake of LiveKit’s Twirp API', () => {
  it('creates an inbound trunk with digest credentials and a dispatch rule scoped to it, as SIP admin', async () => {
    const fake = await startFakeLiveKit();
    try {
      const provisioner = new LiveKitSipProvisioner({ url: fake.url, apiKey: API_KEY, apiSecret: API_SECRET });
      const inbound = await provisioner.createInboundTrunk({
        name: 'trunk-7-inbound',
        numbers: ['+14155550100'],
        credentials: { username: 'acme', password: 'secret' },
      });
      expect(inbound).toEqual({ trunkId: 'ST_in1', dispatchRuleId: 'SDR_2' });
      expect(fake.calls).toEqual([
        {
          method: 'CreateSIPInboundTrunk',
          sipAdmin: true,
          body: {
            trunk: { name: 'trunk-7-inbound', numbers: ['+14155550100'], authUsername: 'acme', authPassword: 'secret' },
          },
        },
        {
          method: 'CreateSIPDispatchRule',
          sipAdmin: true,
          body: expect.objectContaining({
            trunkIds: ['ST_in1'],
            name: 'trunk-7-inbound dispatch',
            rule: { dispatchRuleIndividual: { roomPrefix: 'call-' } },
          }),
        },
      ]);
    } finally {
      await fake.close();
    }
  });

  it('creates an IP-authorised inbound trunk and an outbound trunk with address, numbers, auth and country', async () => {
    const fake = await startFakeLiveKit();
    try {
      const provisioner = new LiveKitSipProvisioner({ url: fake.url, apiKey: API_KEY, apiSecret: API_SECRET });
      await provisioner.createInboundTrunk({ name: 'in', numbers: ['+1'], allowedAddresses: ['198.51.100.0/24'] });
      const outbound = await provisioner.createOutboundTrunk({
        name: 'trunk-7-outbound',
        address: 'sip.carrier.example.com',
        numbers: ['+14155550100'],
        credentials: { username: 'acme', password: 'secret' },
        destinationCountry: 'US',
      });
      expect(outbound).toBe('ST_out3');
      expect(fake.calls[0].body).toEqual({
        trunk: { name: 'in', numbers: ['+1'], allowedAddresses: ['198.51.100.0/24'] },
      });
      expect(fake.calls[2]).toEqual({
        method: 'CreateSIPOutboundTrunk',
        sipAdmin: true,
        body: {
          trunk: {
            name: 'trunk-7-outbound',
            address: 'sip.carrier.example.com',
            numbers: ['+14155550100'],
            authUsername: 'acme',
            authPassword: 'secret',
            destinationCountry: 'US',
          },
        },
      });
    } finally {
      await fake.close();
    }
  });

  it('deletes the dispatch rule and both trunks', async () => {
    const fake = await startFakeLiveKit();
    try {
      const provisioner = new LiveKitSipProvisioner({ url: fake.url, apiKey: API_KEY, apiSecret: API_SECRET });
      await provisioner.deleteInboundTrunk({ trunkId: 'ST_a', dispatchRuleId: 'SDR_a' });
      await provisioner.deleteOutboundTrunk('ST_b');
      expect(fake.calls.map(({ method, body }) => ({ method, body }))).toEqual([
        { method: 'DeleteSIPDispatchRule', body: { sipDispatchRuleId: 'SDR_a' } },
        { method: 'DeleteSIPTrunk', body: { sipTrunkId: 'ST_a' } },
        { method: 'DeleteSIPTrunk', body: { sipTrunkId: 'ST_b' } },
      ]);
    } finally {
      await fake.close();
    }
  });

  it('takes back the inbound trunk when its dispatch rule is refused, and reports the failure', async () => {
    const fake = await startFakeLiveKit('CreateSIPDispatchRule');
    try {
      const provisioner = new LiveKitSipProvisioner({ url: fake.url, apiKey: API_KEY, apiSecret: API_SECRET });
      await expect(provisioner.createInboundTrunk({ name: 'in', numbers: ['+1'] })).rejects.toBeInstanceOf(
        SipProvisioningError,
      );
      expect(fake.calls.map(({ method }) => method)).toEqual([
        'CreateSIPInboundTrunk',
        'CreateSIPDispatchRule',
        'DeleteSIPTrunk',
      ]);
      expect(fake.calls[2].body).toEqual({ sipTrunkId: 'ST_in1' });
    } finally {
      await fake.close();
    }
  });

  it('is refused with the wrong secret, as LiveKit would refuse it', async () => {
    const fake = await startFakeLiveKit();
    try {
      const provisioner = new LiveKitSipProvisioner({
        url: fake.url,
        apiKey: API_KEY,
        apiSecret: 'another-secret-entirely-wrong!!',
      });
      await expect(provisioner.deleteOutboundTrunk('ST_x')).rejects.toThrow(
        /LiveKit could not delete the outbound trunk/,
      );
      expect(fake.calls).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});
