/**
 * How long a number has no inbound trunk while its trunk is replaced (a change of username, password, authorisation
 * or allowed addresses), with SIP_PROVISIONER=livekit against the strict fake of LiveKit's Twirp API given a
 * network round trip of 0, 20 and 80 ms. LiveKit lets one inbound trunk carry a number, so the old trunk releases
 * it before the new one is created: the window runs from the release taking effect to the create taking effect
 * (no trunk), and on to the dispatch rule taking effect (no route to the agent). Not a timed test.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/sip-reprovision-window.ts [changes]
 */
import { FakeLiveKit } from '../test/support/livekit-twirp.fake';
import { ApiClient, startBenchStack } from './support/stack';
import { fixed, percentile, printTable, runMain } from './support/report';

async function measure(roundTripMs: number, changes: number) {
  const fake = await FakeLiveKit.start();
  const stack = await startBenchStack({
    SIP_PROVISIONER: 'livekit',
    LIVEKIT_URL: fake.url,
    LIVEKIT_API_KEY: fake.apiKey,
    LIVEKIT_API_SECRET: fake.apiSecret,
  });
  try {
    fake.latencyMs = roundTripMs;
    const client = await ApiClient.register(stack.baseUrl);
    const trunk = await client.request(
      'POST',
      '/api/user/phone-numbers/sip-trunks',
      {
        sip_trunk_type: 'number',
        phone_number: '+14155550142',
        sip_username: 'bench',
        sip_password: 'bench-password-0',
        sip_address: 'sip.carrier.example.com',
      },
      201,
    );
    const noTrunk: number[] = [];
    const noRoute: number[] = [];
    for (let change = 1; change <= changes; change++) {
      const mark = fake.calls.length;
      await client.request('PUT', `/api/user/phone-numbers/sip-trunks/${trunk.data.id}`, {
        sip_password: `bench-password-${change}`,
      });
      const calls = fake.calls.slice(mark);
      const at = (method: string) => calls.find((call) => call.method === method)!.at;
      noTrunk.push(at('SIP/CreateSIPInboundTrunk') - at('SIP/UpdateSIPInboundTrunk'));
      noRoute.push(at('SIP/CreateSIPDispatchRule') - at('SIP/UpdateSIPInboundTrunk'));
    }
    return { noTrunk, noRoute };
  } finally {
    await stack.close();
    await fake.close();
  }
}

async function main(): Promise<void> {
  const changes = Number(process.argv[2] ?? 30);
  const rows: (string | number)[][] = [];
  for (const roundTripMs of [0, 20, 80]) {
    const { noTrunk, noRoute } = await measure(roundTripMs, changes);
    rows.push([
      roundTripMs,
      fixed(percentile(noTrunk, 50)),
      fixed(percentile(noTrunk, 95)),
      fixed(Math.max(...noTrunk)),
      fixed(percentile(noRoute, 50)),
      fixed(percentile(noRoute, 95)),
    ]);
  }
  printTable(
    `Inbound trunk replaced on the same number, ${changes} password changes per round trip`,
    ['round trip ms', 'no trunk p50', 'no trunk p95', 'no trunk max', 'no route p50', 'no route p95'],
    rows,
    ['ms from the release taking effect to the new trunk (then its dispatch rule) taking effect at the fake'],
  );
}

runMain(main);
