import { MAX_TOOL_SCHEMA_DEPTH, toolParametersSchema, toolSchemaSize } from './tool.dto';

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

describe('toolParametersSchema with richer types', () => {
  it('hands enums, lists and nested objects over as JSON Schema, each object closed', () => {
    expect(
      toolParametersSchema([
        { name: 'speed', type: 'string', description: 'Delivery', enum: ['standard', 'express'], required: true },
        {
          name: 'lines',
          type: 'array',
          description: 'What to order',
          required: false,
          items: {
            type: 'object',
            properties: [
              { name: 'sku', type: 'string', description: 'Article', required: true },
              { name: 'quantity', type: 'integer', description: 'How many', enum: [1, 2, 3], required: false },
            ],
          },
        },
      ]),
    ).toEqual({
      type: 'object',
      properties: {
        speed: { type: 'string', description: 'Delivery', enum: ['standard', 'express'] },
        lines: {
          type: 'array',
          description: 'What to order',
          items: {
            type: 'object',
            properties: {
              sku: { type: 'string', description: 'Article' },
              quantity: { type: 'integer', description: 'How many', enum: [1, 2, 3] },
            },
            required: ['sku'],
            additionalProperties: false,
          },
        },
      },
      required: ['speed'],
      additionalProperties: false,
    });
  });
});

describe('toolSchemaSize', () => {
  it('counts levels below the arguments and every value described, and stops walking past the bounds', () => {
    const nested = (depth: number): object =>
      depth === 0 ? { type: 'string' } : { type: 'array', items: nested(depth - 1) };
    expect(toolSchemaSize([{ name: 'a', ...nested(2) }])).toEqual({ depth: 3, nodes: 3 });
    expect(toolSchemaSize([{ name: 'a', ...nested(1000) }]).nodes).toBeLessThanOrEqual(MAX_TOOL_SCHEMA_DEPTH + 2);
  });
});
