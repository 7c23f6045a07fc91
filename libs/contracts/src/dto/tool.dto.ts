import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateBy, ValidateIf } from 'class-validator';
import { Rule } from '../validation';
import { RequestExample } from './request-example';

export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export const TOOL_BODY_FORMATS = ['json', 'form'] as const;
/** JSON Schema's types (`float` is `number` under the public product's older name); `enum` limits any scalar one. */
export const TOOL_PARAMETER_TYPES = ['string', 'number', 'float', 'integer', 'boolean', 'array', 'object'] as const;
/** Levels of `array` items and `object` properties below the arguments themselves. */
export const MAX_TOOL_SCHEMA_DEPTH = 5;
/** Parameters, properties and items of one schema in all: what a model is handed stays small. */
export const MAX_TOOL_SCHEMA_NODES = 200;
export const MAX_TOOL_ENUM_VALUES = 100;
export const MAX_TOOL_ENUM_VALUE_LENGTH = 255;
export const TOOL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 10;
export const MAX_TOOL_HEADERS = 50;
export const MAX_TOOL_STATIC_FIELDS = 100;
export const MAX_TOOL_PARAMETERS = 100;
/**
 * Framing headers the client derives from the request itself; a tool setting them would either be refused by the
 * HTTP client at call time or desynchronise the message, so they are refused when the tool is saved.
 */
export const RESERVED_TOOL_HEADERS = [
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'proxy-connection',
];
/** Control characters other than tab; line breaks have their own rule and message. */
const HEADER_VALUE_WITHOUT_CONTROLS = /^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$/;
/** The validation summary the public product answers on tool create and update (compat). */
export const TOOL_VALIDATION_MESSAGE = 'Validation failed';
/** An argument the tool's schema does not name (`arguments.<name>`): refused, never forwarded. */
export const notAToolParameter = (key: string) => `The ${key} field is not a parameter of this tool.`;
/**
 * Why a tool call failed: the guarded client's kinds (an address refused, a timeout, a TLS failure, ...), and
 * `http_status` for an answer that is not a success.
 */
export const TOOL_CALL_ERROR_CODES = [
  'invalid_url',
  'unsupported_protocol',
  'blocked_address',
  'too_many_redirects',
  'redirect_refused',
  'timeout',
  'too_large',
  'tls',
  'network',
  'http_status',
] as const;
export type ToolCallErrorCode = (typeof TOOL_CALL_ERROR_CODES)[number];
/** What each error field about a tool call says of itself in the documents. */
export const TOOL_ERROR_DESCRIPTION =
  'Why no answer came, naming the endpoint’s host at most (never its path, query or a header): for logs and the ' +
  'tool’s owner, not to be put before the person on the call';
/** Names no argument can have: request input drops them everywhere else (see `normaliseInput`). */
const OBJECT_INTERNAL_NAMES = ['__proto__', 'constructor', 'prototype'];

export class ToolHeader {
  @ApiProperty({ type: String, maxLength: 255, example: 'Authorization' })
  @Rule.RequiredText()
  @Rule.HeaderName()
  @Rule.NotOneOf(RESERVED_TOOL_HEADERS, true)
  name: string;

  @ApiProperty({ type: String, maxLength: 4096, description: 'May use `{{variable}}` templates; stored encrypted' })
  @Rule.Required()
  @Rule.String()
  @Rule.MaxChars(4096)
  @Rule.WithoutLineBreaks()
  @Rule.Pattern(HEADER_VALUE_WITHOUT_CONTROLS)
  value: string;
}

export class ToolStaticField {
  @ApiProperty({ type: String, maxLength: 255 })
  @Rule.RequiredText()
  key: string;

  @ApiProperty({ type: String, maxLength: 4096, description: 'May use `{{variable}}` templates' })
  @Rule.Required()
  @Rule.String()
  @Rule.MaxChars(4096)
  value: string;
}

/** An `enum` of values of the parameter's own type: text for `string`, numbers for `number`, whole ones for `integer`. */
const enumOfType: Record<string, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string' && value.length <= MAX_TOOL_ENUM_VALUE_LENGTH,
  number: (value) => typeof value === 'number' && Number.isFinite(value),
  float: (value) => typeof value === 'number' && Number.isFinite(value),
  integer: (value) => Number.isSafeInteger(value),
};

const EnumOfType = () =>
  ValidateBy(
    {
      name: 'enumOfType',
      validator: {
        validate: (values, args) => {
          const check = enumOfType[(args?.object as { type?: string }).type ?? ''];
          return (
            Array.isArray(values) &&
            values.length > 0 &&
            values.length <= MAX_TOOL_ENUM_VALUES &&
            values.every((value) => check?.(value)) &&
            new Set(values).size === values.length
          );
        },
      },
    },
    {
      message:
        `The :attribute field must list 1 to ${MAX_TOOL_ENUM_VALUES} distinct values of a string, number or ` +
        `integer parameter's type.`,
    },
  );

/** The JSON Schema keywords of a value, shared by a named parameter and an array's items. */
class ToolValueSchema {
  @ApiProperty({ enum: TOOL_PARAMETER_TYPES, description: '`array` takes `items`, `object` takes `properties`' })
  @Rule.Required()
  @Rule.OneOf(TOOL_PARAMETER_TYPES)
  type: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { oneOf: [{ type: 'string', maxLength: MAX_TOOL_ENUM_VALUE_LENGTH }, { type: 'number' }] },
    minItems: 1,
    maxItems: MAX_TOOL_ENUM_VALUES,
    example: ['standard', 'express'],
    description: 'The only values allowed, of a `string`, `number` or `integer` parameter',
  })
  @Rule.Optional()
  @EnumOfType()
  enum?: (string | number)[];

  @ApiPropertyOptional({
    type: () => ToolItemSchema,
    description: 'Required with `type: array`, and only then: what it lists',
  })
  @ValidateIf((value: ToolValueSchema) => value.type === 'array' || value.items != null)
  @Rule.RequiredWhen('type', 'array')
  @Rule.ProhibitedUnless('type', 'array')
  @Rule.Nested(() => ToolItemSchema)
  // Typed by its shape: the class itself is declared below this one.
  items?: ToolValueSchema & { description?: string };

  @ApiPropertyOptional({
    type: () => [ToolParameter],
    maxItems: MAX_TOOL_PARAMETERS,
    description: 'Required with `type: object`, and only then: its named properties, as the arguments are',
  })
  @ValidateIf((value: ToolValueSchema) => value.type === 'object' || value.properties != null)
  @Rule.RequiredWhen('type', 'object')
  @Rule.ProhibitedUnless('type', 'object')
  @Rule.ArrayMin(1)
  @Rule.ArrayMax(MAX_TOOL_PARAMETERS)
  @Rule.EachNested(() => ToolParameter)
  @Rule.DistinctBy('name')
  properties?: ToolParameter[];
}

/** What an `array` parameter lists: any value schema, described or not. */
export class ToolItemSchema extends ToolValueSchema {
  @ApiPropertyOptional({ type: String, maxLength: 1000 })
  @Rule.OptionalText(1000)
  description?: string;
}

export class ToolParameter extends ToolValueSchema {
  @ApiProperty({ type: String, maxLength: 64, pattern: TOOL_NAME_PATTERN.source })
  @Rule.RequiredText(64)
  @Rule.Pattern(TOOL_NAME_PATTERN)
  @Rule.NotOneOf(OBJECT_INTERNAL_NAMES)
  name: string;

  @ApiProperty({ type: String, maxLength: 1000 })
  @Rule.RequiredText(1000)
  description: string;

  @ApiPropertyOptional({ type: Boolean, default: false })
  @Rule.Optional()
  @Rule.Boolean()
  required?: boolean;
}

/** A parameter as stored and answered: `required` always said, nested ones too. */
export interface StoredToolValue {
  type: string;
  description?: string;
  enum?: (string | number)[];
  items?: StoredToolValue;
  properties?: ToolSchemaProperty[];
}

export interface StoredToolParameter extends StoredToolValue {
  name: string;
  description: string;
  required: boolean;
}

/** How deep a schema nests (1: flat arguments) and how many values it describes in all. */
export function toolSchemaSize(schema: unknown, depth = 1): { depth: number; nodes: number } {
  if (!Array.isArray(schema)) return { depth: 0, nodes: 0 };
  let deepest = depth;
  let nodes = 0;
  const visit = (value: unknown, level: number) => {
    if (!value || typeof value !== 'object') return;
    nodes++;
    deepest = Math.max(deepest, level);
    // Past the bound the answer is known: a hostile schema is not walked to its end.
    if (level > MAX_TOOL_SCHEMA_DEPTH + 1 || nodes > MAX_TOOL_SCHEMA_NODES) return;
    const { items, properties } = value as { items?: unknown; properties?: unknown };
    if (items) visit(items, level + 1);
    if (Array.isArray(properties)) for (const property of properties) visit(property, level + 1);
  };
  for (const parameter of schema) visit(parameter, depth);
  return { depth: deepest, nodes };
}

/** A schema within MAX_TOOL_SCHEMA_DEPTH levels below the arguments and MAX_TOOL_SCHEMA_NODES values in all. */
const ToolSchemaBounds = () =>
  ValidateBy(
    {
      name: 'toolSchemaBounds',
      validator: {
        validate: (value) => {
          const size = toolSchemaSize(value);
          return size.depth <= MAX_TOOL_SCHEMA_DEPTH + 1 && size.nodes <= MAX_TOOL_SCHEMA_NODES;
        },
      },
    },
    {
      message:
        `The :attribute field must not nest more than ${MAX_TOOL_SCHEMA_DEPTH} levels of items and properties, ` +
        `nor describe more than ${MAX_TOOL_SCHEMA_NODES} values in all.`,
    },
  );

/** Fields shared by create (where the first four are required) and update (where everything is optional). */
class ToolFields {
  @ApiPropertyOptional({ type: String, enum: TOOL_BODY_FORMATS, default: 'json' })
  @Rule.Sometimes()
  @Rule.OneOf(TOOL_BODY_FORMATS)
  body_format?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 30, default: DEFAULT_TOOL_TIMEOUT_SECONDS })
  @Rule.Sometimes()
  @Rule.Integer()
  @Rule.Between(1, 30)
  timeout?: number;

  @ApiPropertyOptional({ type: [ToolHeader], maxItems: MAX_TOOL_HEADERS, description: 'Replaces every header' })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_TOOL_HEADERS)
  @Rule.EachNested(() => ToolHeader)
  headers?: ToolHeader[];

  @ApiPropertyOptional({
    type: [ToolStaticField],
    maxItems: MAX_TOOL_STATIC_FIELDS,
    description: 'Replaces every field',
  })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_TOOL_STATIC_FIELDS)
  @Rule.EachNested(() => ToolStaticField)
  static_fields?: ToolStaticField[];

  @ApiPropertyOptional({ type: [ToolParameter], maxItems: MAX_TOOL_PARAMETERS, description: 'Replaces the schema' })
  @Rule.Sometimes()
  @Rule.ArrayMax(MAX_TOOL_PARAMETERS)
  @Rule.EachNested(() => ToolParameter)
  @Rule.DistinctBy('name')
  @ToolSchemaBounds()
  schema?: ToolParameter[];
}

@RequestExample({
  name: 'lookup_order',
  description: 'Looks an order up by its number, or only some of its lines',
  endpoint: 'https://api.example.com/orders/{order_id}',
  method: 'GET',
  schema: [
    { name: 'order_id', type: 'string', description: 'The order number' },
    { name: 'delivery', type: 'string', description: 'How it ships', enum: ['standard', 'express'] },
    {
      name: 'lines',
      type: 'array',
      description: 'Only these lines of the order',
      items: {
        type: 'object',
        properties: [
          { name: 'sku', type: 'string', description: 'The article number', required: true },
          { name: 'quantity', type: 'integer', description: 'How many', enum: [1, 2, 3] },
        ],
      },
    },
  ],
})
export class CreateToolRequest extends ToolFields {
  @ApiProperty({ type: String, maxLength: 64, pattern: TOOL_NAME_PATTERN.source, example: 'lookup_order' })
  @Rule.RequiredText(64)
  @Rule.Pattern(TOOL_NAME_PATTERN)
  name: string;

  @ApiProperty({ type: String, maxLength: 255, description: 'When and how the assistant should use the tool' })
  @Rule.RequiredText(255)
  description: string;

  @ApiProperty({
    type: String,
    maxLength: 2048,
    example: 'https://api.example.com/orders/{order_id}',
    description: 'http(s) URL; `{param}` placeholders are filled from the arguments',
  })
  @Rule.RequiredText(2048)
  @Rule.HttpUrlTemplate()
  endpoint: string;

  @ApiProperty({ enum: TOOL_METHODS })
  @Rule.Required()
  @Rule.OneOf(TOOL_METHODS)
  method: string;

  @ApiPropertyOptional({
    type: String,
    maxLength: 255,
    nullable: true,
    description: 'Links the tool to an automation-platform flow; `endpoint`, `method` and `body_format` are then fixed',
  })
  @Rule.OptionalText(255)
  automation_flow_id?: string | null;
}

export class UpdateToolRequest extends ToolFields {
  @ApiPropertyOptional({ type: String, maxLength: 64, pattern: TOOL_NAME_PATTERN.source })
  @Rule.Sometimes()
  @Rule.RequiredText(64)
  @Rule.Pattern(TOOL_NAME_PATTERN)
  name?: string;

  @ApiPropertyOptional({ type: String, maxLength: 255 })
  @Rule.Sometimes()
  @Rule.RequiredText(255)
  description?: string;

  @ApiPropertyOptional({ type: String, maxLength: 2048 })
  @Rule.Sometimes()
  @Rule.RequiredText(2048)
  @Rule.HttpUrlTemplate()
  endpoint?: string;

  @ApiPropertyOptional({ enum: TOOL_METHODS })
  @Rule.Sometimes()
  @Rule.OneOf(TOOL_METHODS)
  method?: string;
}

export class ToolResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ type: String }) description: string;
  @ApiProperty({ enum: ['http'] }) type: 'http';
  @ApiProperty({ type: String }) endpoint: string;
  @ApiProperty({ enum: TOOL_METHODS }) method: string;
  @ApiProperty({ enum: TOOL_BODY_FORMATS }) body_format: string;
  @ApiProperty({ type: 'integer' }) timeout: number;
  @ApiProperty({ type: [ToolHeader] }) headers: ToolHeader[];
  @ApiProperty({ type: [ToolStaticField] }) static_fields: ToolStaticField[];
  @ApiProperty({ type: [ToolParameter] }) schema: StoredToolParameter[];
  @ApiProperty({ type: String, nullable: true }) automation_flow_id: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class ToolEnvelope {
  @ApiProperty({ type: ToolResponse }) data: ToolResponse;
}

export class ToolMessageEnvelope extends ToolEnvelope {
  @ApiProperty({ type: String }) message: string;
}

export class TestToolRequest {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'What the assistant would fill in, checked against the tool schema; a name it lacks is refused',
  })
  @Rule.Optional()
  @Rule.PlainObject()
  @Rule.DataKeys(notAToolParameter)
  arguments?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'Call variables for `{{variable}}` templates',
  })
  @Rule.Optional()
  @Rule.PlainObject()
  variables?: Record<string, unknown>;
}

export class ToolTestRequestSent {
  @ApiProperty({ enum: TOOL_METHODS }) method: string;
  @ApiProperty({ type: String }) url: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) headers: Record<string, string>;
  @ApiProperty({ type: String, nullable: true, description: 'The encoded body, or null for GET and DELETE' })
  body: string | null;
}

export class ToolTestResponseReceived {
  @ApiProperty({ type: 'integer' }) status: number;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) headers: Record<string, string>;
  @ApiProperty({
    description: 'Parsed JSON when the response is a complete JSON object or array, else the text',
    oneOf: [{ type: 'object', additionalProperties: true }, { type: 'array', items: {} }, { type: 'string' }],
  })
  body: unknown;
  @ApiProperty({ type: Boolean, description: 'The body was cut at 64 KB' }) body_truncated: boolean;
}

export class ToolTestResult {
  @ApiProperty({ type: ToolTestRequestSent }) request: ToolTestRequestSent;
  @ApiProperty({ type: ToolTestResponseReceived, nullable: true }) response: ToolTestResponseReceived | null;
  @ApiProperty({ type: 'integer' }) duration_ms: number;
  @ApiProperty({ type: String, nullable: true, description: TOOL_ERROR_DESCRIPTION }) error: string | null;
  @ApiProperty({
    enum: TOOL_CALL_ERROR_CODES.filter((code) => code !== 'http_status'),
    nullable: true,
    description: 'The kind of failure when no answer came',
  })
  error_code: ToolCallErrorCode | null;
}

export class ToolTestEnvelope {
  @ApiProperty({ type: ToolTestResult }) data: ToolTestResult;
}

export interface ToolLike {
  id: number;
  name: string;
  description: string;
  endpoint: string;
  method: string;
  bodyFormat: string;
  timeoutSeconds: number;
  staticFields: ToolStaticField[];
  schema: StoredToolParameter[];
  automationFlowId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** `headers` are passed opened (decrypted): only the owner ever receives a tool. */
export function toToolResponse(tool: ToolLike, headers: ToolHeader[]): ToolResponse {
  return {
    id: tool.id,
    name: tool.name,
    description: tool.description,
    type: 'http',
    endpoint: tool.endpoint,
    method: tool.method,
    body_format: tool.bodyFormat,
    timeout: tool.timeoutSeconds,
    headers,
    static_fields: tool.staticFields,
    schema: tool.schema.map((parameter) => ({ ...parameter, required: parameter.required ?? false })),
    automation_flow_id: tool.automationFlowId,
    created_at: tool.createdAt.toISOString(),
    updated_at: tool.updatedAt.toISOString(),
  };
}

/** What calling a tool came to, as `@app/tools` reports it (`ToolCallResult`): read by the answers built from it. */
export interface ToolCallOutcomeLike {
  request: { method: string; url: string; headers: Record<string, string>; body: string | null };
  response: { status: number; headers: Record<string, string>; body: unknown; bodyTruncated: boolean } | null;
  durationMs: number;
  error: { code: ToolCallErrorCode; message: string } | null;
}

/** The test route's answer: the request as sent (header values included: the owner set them) and what came back. */
export function toToolTestResult(result: ToolCallOutcomeLike): ToolTestResult {
  return {
    request: result.request,
    response: result.response && {
      status: result.response.status,
      headers: result.response.headers,
      body: result.response.body,
      body_truncated: result.response.bodyTruncated,
    },
    duration_ms: result.durationMs,
    ...toolCallError(result),
  };
}

/** Why no answer came, in the two fields both the test route and the runtime's invocation answer with. */
export function toolCallError(result: Pick<ToolCallOutcomeLike, 'error'>): {
  error: string | null;
  error_code: ToolCallErrorCode | null;
} {
  return { error: result.error?.message ?? null, error_code: result.error?.code ?? null };
}

const JSON_SCHEMA_TYPES: Record<string, string> = { float: 'number' };

/** A named value of a schema as stored, `required` said or not (rows from before it was always said). */
export type ToolSchemaProperty = StoredToolValue & { name: string; required?: boolean };

/** One value's JSON Schema: its type, and its enum, items or properties as stored. */
function valueSchema(value: StoredToolValue): Record<string, unknown> {
  return {
    type: JSON_SCHEMA_TYPES[value.type] ?? value.type,
    ...(value.description ? { description: value.description } : {}),
    ...(value.enum ? { enum: value.enum } : {}),
    ...(value.items ? { items: valueSchema(value.items) } : {}),
    ...(value.properties ? objectSchema(value.properties) : {}),
  };
}

/** Named properties, the required ones listed, and no other (the invoke route refuses any other). */
function objectSchema(properties: ToolSchemaProperty[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: Object.fromEntries(properties.map((property) => [property.name, valueSchema(property)])),
    required: properties.filter((property) => property.required).map((property) => property.name),
    additionalProperties: false,
  };
}

/**
 * A tool's arguments as JSON Schema, as a model's function calling takes them: an object of the named properties,
 * each with its enum, items and nested properties, the required ones listed, and no other.
 */
export function toolParametersSchema(schema: ToolSchemaProperty[]): Record<string, unknown> {
  return objectSchema(schema);
}

/** A parameter as sent, in its stored form: `required` said at every level, keywords it does not use left out. */
export function storedToolParameter(parameter: ToolParameter): StoredToolParameter {
  return {
    name: parameter.name,
    ...storedToolValue(parameter),
    description: parameter.description,
    required: parameter.required ?? false,
  };
}

function storedToolValue(value: ToolValueSchema & { description?: string }): StoredToolValue {
  return {
    type: value.type,
    ...(value.description ? { description: value.description } : {}),
    ...(value.enum ? { enum: value.enum } : {}),
    ...(value.items ? { items: storedToolValue(value.items) } : {}),
    ...(value.properties ? { properties: value.properties.map(storedToolParameter) } : {}),
  };
}
