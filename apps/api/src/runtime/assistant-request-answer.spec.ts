import { readAssistantRequestAnswer } from './assistant-request-answer';

const read = (body: string) => readAssistantRequestAnswer(Buffer.from(body));

describe('readAssistantRequestAnswer', () => {
  it('reads the assistant, the variables and a refusal, ignoring fields it does not know', () => {
    expect(read('{"assistant_id": 12, "variables": {"name": "Ada", "vip": true, "visits": 3}, "x": 1}')).toEqual({
      answer: { assistantId: 12, variables: { name: 'Ada', vip: true, visits: 3 } },
    });
    expect(read('{"reject": {"message": "  Sorry, we are closed.  "}}')).toEqual({
      answer: { reject: { message: 'Sorry, we are closed.' } },
    });
    expect(read('{"reject": {"message": "   "}}')).toEqual({ answer: { reject: { message: null } } });
  });

  it('takes an empty body, an empty object and nulls as an answer that changes nothing', () => {
    for (const body of [
      '',
      '  \n',
      '{}',
      '{"assistant_id": null, "variables": null, "reject": null}',
      '{"reject": false}',
    ]) {
      expect({ body, read: read(body) }).toEqual({ body, read: { answer: {} } });
    }
  });

  it('says why an answer cannot be used', () => {
    const cases: [string, string][] = [
      ['<html>', 'it is not JSON'],
      ['[1]', 'it is not a JSON object'],
      ['"text"', 'it is not a JSON object'],
      ['null', 'it is not a JSON object'],
      ['{"assistant_id": "12"}', 'assistant_id is not an assistant’s id'],
      ['{"assistant_id": 1.5}', 'assistant_id is not an assistant’s id'],
      ['{"assistant_id": 0}', 'assistant_id is not an assistant’s id'],
      ['{"assistant_id": 99999999999}', 'assistant_id is not an assistant’s id'],
      ['{"variables": [1]}', expect.stringMatching(/^variables is not an object of at most 100/) as unknown as string],
      [
        '{"variables": {"a": {"nested": 1}}}',
        expect.stringMatching(/^variables is not an object/) as unknown as string,
      ],
      [`{"variables": {"${'k'.repeat(65)}": 1}}`, expect.stringMatching(/^variables is not/) as unknown as string],
      [`{"variables": {"a": "${'x'.repeat(4097)}"}}`, expect.stringMatching(/^variables is not/) as unknown as string],
      ['{"variables": {"__proto__": {"polluted": true}}}', expect.stringMatching(/^variables/) as unknown as string],
      ['{"variables": {"__proto__": "x"}}', 'variables may not name __proto__'],
      ['{"variables": {"constructor": "x"}}', 'variables may not name constructor'],
      ['{"reject": "yes"}', 'reject is not an object'],
      ['{"reject": {"message": 42}}', 'reject.message is not text'],
      [`{"reject": {"message": "${'x'.repeat(1001)}"}}`, 'reject.message is longer than 1000 characters'],
    ];
    for (const [body, invalid] of cases) {
      expect({ body: body.slice(0, 60), read: read(body) }).toEqual({ body: body.slice(0, 60), read: { invalid } });
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
