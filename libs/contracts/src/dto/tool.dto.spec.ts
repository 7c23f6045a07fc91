import { toolParametersSchema } from './tool.dto';

describe('toolParametersSchema', () => {
  it('offers the named parameters and no other', () => {
    expect(toolParametersSchema([{ name: 'n', type: 'float', description: 'N', required: true }])).toEqual({
      type: 'object',
      properties: { n: { type: 'number', description: 'N' } },
      required: ['n'],
      additionalProperties: false,
    });
  });
});
