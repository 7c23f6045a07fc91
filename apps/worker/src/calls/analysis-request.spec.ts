import Ajv2020 from 'ajv/dist/2020';
import { type AnalysisPlan, DEFAULT_ANALYSIS_PLAN, type PostCallField } from '@app/contracts';
import { strictSchemaProblem } from '../../../../test/support/openai.fake';
import { analysisMessages, analysisParts, analysisSchema, readAnswer, schemaProblem } from './analysis-request';

const fields: PostCallField[] = [
  { name: 'customer_name', type: 'string', description: 'The caller’s name' },
  { name: 'party_size', type: 'integer', description: 'How many people' },
  { name: 'budget', type: 'number', description: 'In euros' },
  { name: 'wants_callback', type: 'boolean', description: 'Asked to be called back' },
  { name: 'mood', type: 'enum', description: 'How they sounded', values: ['happy', 'neutral', 'angry'] },
  { name: 'dishes', type: 'array', description: 'Dishes named', items: { type: 'string' } },
  { name: 'days', type: 'array', description: 'Days asked for', items: { type: 'enum', values: ['mon', 'tue'] } },
];

const plan = (success: Partial<AnalysisPlan['success']> = {}): AnalysisPlan => ({
  ...DEFAULT_ANALYSIS_PLAN,
  success: { ...DEFAULT_ANALYSIS_PLAN.success, ...success },
});

describe('the analysis schema', () => {
  it.each(['pass_fail', 'score_1_10', 'descriptive'] as const)(
    'is one strict structured outputs accept (rubric %s), and JSON Schema agrees with its own check',
    (rubric) => {
      const parts = analysisParts(plan({ rubric }), fields)!;
      const schema = analysisSchema(parts);
      expect(strictSchemaProblem(schema)).toBeUndefined();
      const validate = new Ajv2020({ strict: false }).compile(schema);
      const value = { pass_fail: true, score_1_10: 7, descriptive: 'good' }[rubric];
      const answer = {
        summary: 'A table for four on Friday.',
        structured_data: {
          customer_name: 'Ada',
          party_size: 4,
          budget: null,
          wants_callback: false,
          mood: 'happy',
          dishes: ['soup'],
          days: null,
        },
        success: { reason: 'Booked.', value },
      };
      expect(validate(answer)).toBe(true);
      expect(schemaProblem(schema, answer)).toBeUndefined();
      expect(readAnswer(parts, answer).success).toEqual({ rubric, value, passed: true, reason: 'Booked.' });
    },
  );

  it('names where an answer breaks it, as JSON Schema would refuse it', () => {
    const parts = analysisParts(plan({ rubric: 'score_1_10' }), fields)!;
    const schema = analysisSchema(parts);
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const good = {
      summary: 's',
      structured_data: Object.fromEntries(fields.map((field) => [field.name, null])),
      success: { reason: 'r', value: 3 },
    };
    const cases: [unknown, string][] = [
      [{ ...good, success: { reason: 'r', value: 11 } }, 'the answer.success.value is 11, not one of'],
      [{ ...good, success: { reason: 'r', value: 2.5 } }, 'the answer.success.value is a number, not integer'],
      [{ ...good, extra: 1 }, 'the answer has "extra", which the schema does not name'],
      [{ summary: 's', success: good.success }, 'the answer lacks "structured_data"'],
      [
        { ...good, structured_data: { ...good.structured_data, mood: 'sad' } },
        'the answer.structured_data.mood is "sad"',
      ],
      [
        { ...good, structured_data: { ...good.structured_data, days: ['mon', 'sun'] } },
        'the answer.structured_data.days[1] is "sun"',
      ],
      [
        { ...good, structured_data: { ...good.structured_data, party_size: '4' } },
        'the answer.structured_data.party_size is a string, not integer or null',
      ],
      [[], 'the answer is an array, not object'],
    ];
    expect(schemaProblem(schema, good)).toBeUndefined();
    for (const [answer, problem] of cases) {
      expect(validate(answer)).toBe(false);
      expect(schemaProblem(schema, answer)).toContain(problem);
    }
  });

  it('asks only for the parts of the plan that have something to do; none is nothing to analyse', () => {
    const off: AnalysisPlan = {
      summary: { enabled: false, prompt: null },
      structured_data: { enabled: true },
      success: { enabled: false, rubric: 'pass_fail', criteria: null },
    };
    expect(analysisParts(off, [])).toBeUndefined();
    const parts = analysisParts(off, fields.slice(0, 1))!;
    expect(Object.keys((analysisSchema(parts) as { properties: object }).properties)).toEqual(['structured_data']);
    expect(readAnswer(parts, { structured_data: { customer_name: 'Ada' } })).toEqual({
      summary: null,
      structured_data: { customer_name: 'Ada' },
      success: null,
    });
  });

  it('grades on the rubric: 6 and up, excellent and good pass', () => {
    const grade = (rubric: AnalysisPlan['success']['rubric'], value: boolean | number | string) =>
      readAnswer(analysisParts(plan({ rubric }), [])!, { summary: 's', success: { reason: 'r', value } }).success!
        .passed;
    expect([grade('pass_fail', true), grade('pass_fail', false)]).toEqual([true, false]);
    expect([5, 6, 10].map((score) => grade('score_1_10', score))).toEqual([false, true, true]);
    expect(['excellent', 'good', 'fair', 'poor'].map((value) => grade('descriptive', value))).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe('the analysis messages', () => {
  it('carry the plan’s instructions, the criteria or else the assistant’s purpose, and say what was cut', () => {
    const custom = analysisParts(
      {
        summary: { enabled: true, prompt: 'One line, in French.' },
        structured_data: { enabled: true },
        success: { enabled: true, rubric: 'descriptive', criteria: 'A table was booked.' },
      },
      fields,
    )!;
    const [system, user] = analysisMessages(
      custom,
      { text: 'Customer: hi', turns: 40, cutTurns: 12 },
      'You book tables.',
    );
    expect(system.content).toContain('summary: One line, in French.');
    expect(system.content).toContain('What a successful call achieves: A table was booked.');
    expect(system.content).not.toContain('You book tables.');
    expect(user.content).toBe(
      'The transcript (12 of its 40 turns, in the middle, were left out to fit; a line says where):\n\nCustomer: hi',
    );
    const [purpose] = analysisMessages(
      analysisParts(plan(), [])!,
      { text: 'x', turns: 1, cutTurns: 0 },
      'You book tables.',
    );
    expect(purpose.content).toContain('You book tables.');
  });
});
