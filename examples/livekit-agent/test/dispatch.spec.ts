import { readDispatch, sessionRequest } from '../src/dispatch.js';

describe('readDispatch', () => {
  const room = 'call-_+14155550199_Ab3dEf5hJk7m';

  it('takes an outbound call’s external id as the dialer wrote it', () => {
    const metadata = { external_id: 'c0ffee', call_id: 7, assistant_id: 3, campaign_id: 2, lead_id: 9, variables: {} };
    expect(readDispatch(JSON.stringify(metadata), 'c0ffee')).toEqual({
      externalId: 'c0ffee',
      type: 'outbound',
      dialledNumber: null,
    });
  });

  it('reads a web call’s dispatch as a web call, whatever else it names', () => {
    const metadata = { type: 'web', external_id: 'call-1f2e', call_id: 8, assistant_id: 3, variables: {} };
    expect(readDispatch(JSON.stringify(metadata), 'call-1f2e')).toEqual({
      externalId: 'call-1f2e',
      type: 'web',
      dialledNumber: null,
    });
  });

  it('replaces the inbound rule’s placeholder by the room’s name, and falls back to it without an external id', () => {
    const rule = { assistant_id: 3, phone_number_id: 4, phone_number: '+14155550100' };
    const inbound = { externalId: room, type: 'inbound', dialledNumber: '+14155550100' };
    expect(readDispatch(JSON.stringify({ ...rule, external_id: '{room}' }), room)).toEqual(inbound);
    // A rule made before the service named the external id.
    expect(readDispatch(JSON.stringify(rule), room)).toEqual(inbound);
    for (const nothing of [undefined, '', 'not json', '[1]', 'null']) {
      expect(readDispatch(nothing, room)).toEqual({ externalId: room, type: 'inbound', dialledNumber: null });
    }
  });
});

describe('readDispatch of a warm transfer’s consultation room', () => {
  it('names the call being transferred and what to tell the person, and nothing else for a bad one', () => {
    const metadata = { external_id: 'call-1', consultation: { destination: 'sales_lead', summary: 'Wants 12 seats.' } };
    expect(readDispatch(JSON.stringify(metadata), 'consult_1')).toMatchObject({
      externalId: 'call-1',
      consultation: { destination: 'sales_lead', summary: 'Wants 12 seats.' },
    });
    const noSummary = { external_id: 'call-1', consultation: { destination: 'sales_lead', summary: null } };
    expect(readDispatch(JSON.stringify(noSummary), 'consult_1').consultation).toEqual({
      destination: 'sales_lead',
      summary: null,
    });
    for (const consultation of [null, 'sales_lead', [], { summary: 'no destination' }]) {
      expect(readDispatch(JSON.stringify({ external_id: 'call-1', consultation }), 'consult_1')).not.toHaveProperty(
        'consultation',
      );
    }
  });
});

describe('sessionRequest', () => {
  const inbound = { externalId: 'r', type: 'inbound', dialledNumber: '+14155550100' } as const;

  it('names the number an inbound call dialled, the rule’s before the trunk’s', () => {
    expect(sessionRequest(inbound, { client: '+14155550199', trunk: '+14155550111' })).toEqual({
      type: 'inbound',
      client_phone_number: '+14155550199',
      assistant_phone_number: '+14155550100',
    });
    expect(
      sessionRequest({ ...inbound, dialledNumber: null }, { client: '+14155550199', trunk: '+14155550111' })
        .assistant_phone_number,
    ).toBe('+14155550111');
  });

  it('opens a web call’s session by its id alone: a browser has no numbers', () => {
    expect(
      sessionRequest({ externalId: 'call-1f2e', type: 'web', dialledNumber: null }, { client: null, trunk: null }),
    ).toEqual({ type: 'web' });
  });

  it('refuses a participant without numbers', () => {
    expect(() => sessionRequest(inbound, { client: null, trunk: null })).toThrow(/numbers/);
  });
});
