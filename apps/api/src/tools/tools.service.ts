import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  CreateToolRequest,
  DEFAULT_TOOL_TIMEOUT_SECONDS,
  Errors,
  MessageResponse,
  TestToolRequest,
  ToolEnvelope,
  ToolHeader,
  ToolMessageEnvelope,
  ToolParameter,
  storedToolParameter,
  ToolResponse,
  ToolTestEnvelope,
  TOOL_VALIDATION_MESSAGE,
  UpdateToolRequest,
  ValidationFailed,
  toToolResponse,
  toToolTestResult,
} from '@app/contracts';
import { SecretBox, SecretContexts } from '@app/crypto';
import { InjectTenantRepository, whenUnique, TenantRepository, Tool, Transactions } from '@app/database';
import { type ToolCallResult, ToolExecutor, validateToolArguments } from '@app/tools';
import type { AuthenticatedUser } from '../auth/auth-context';
import { IdempotentCreates } from '../idempotency/idempotent-creates';

const nameTaken = () => new ValidationFailed({ name: ['The name has already been taken.'] }, TOOL_VALIDATION_MESSAGE);

@Injectable()
export class ToolsService implements OnModuleInit {
  constructor(
    @InjectTenantRepository(Tool) private readonly tools: TenantRepository<Tool>,
    private readonly transactions: Transactions,
    private readonly secrets: SecretBox,
    private readonly executor: ToolExecutor,
    private readonly creates: IdempotentCreates,
  ) {}

  onModuleInit(): void {
    this.creates.recoverWith('tool', async (user, id) => this.created(await this.find(user, id)));
  }

  /** A bare array (as the public product answers), newest first like every list. */
  async list(user: AuthenticatedUser): Promise<ToolResponse[]> {
    const tools = await this.tools.findAllNewestFirst(user.id);
    return tools.map((tool) => this.toResponse(tool));
  }

  async get(user: AuthenticatedUser, id: number): Promise<ToolEnvelope> {
    return { data: this.toResponse(await this.find(user, id)) };
  }

  async create(user: AuthenticatedUser, request: CreateToolRequest): Promise<ToolMessageEnvelope> {
    const tool = await whenUnique(
      () =>
        this.transactions.run(async (transaction) => {
          const tools = this.tools.within(transaction);
          if (await tools.exists(user.id, { name: request.name })) throw nameTaken();
          const created = await tools.create(user.id, {
            name: request.name,
            description: request.description,
            endpoint: request.endpoint,
            method: request.method,
            bodyFormat: request.body_format ?? 'json',
            timeoutSeconds: request.timeout ?? DEFAULT_TOOL_TIMEOUT_SECONDS,
            headers: [],
            staticFields: request.static_fields ?? [],
            schema: normaliseSchema(request.schema ?? []),
            automationFlowId: request.automation_flow_id ?? null,
          });
          // Header values are sealed with the tool's id, known only once the row exists.
          if (request.headers?.length) await this.storeHeaders(tools, user, created, request.headers);
          await this.creates.record(transaction, 'tool', created.id);
          return created;
        }),
      nameTaken,
    );
    return this.created(tool);
  }

  private created(tool: Tool): ToolMessageEnvelope {
    return { message: 'Tool created successfully.', data: this.toResponse(tool) };
  }

  async update(user: AuthenticatedUser, id: number, request: UpdateToolRequest): Promise<ToolMessageEnvelope> {
    const tool = await whenUnique(
      () =>
        this.transactions.run(async (transaction) => {
          const tools = this.tools.within(transaction);
          const current = await tools.findOne(user.id, id);
          if (!current) throw Errors.toolNotFound();
          if (request.name !== undefined && request.name !== current.name) {
            if (await tools.exists(user.id, { name: request.name })) throw nameTaken();
          }
          // A tool linked to an automation flow keeps the flow's endpoint, method and body format.
          const linked = current.automationFlowId !== null;
          const changes: Partial<Tool> = {
            ...(request.name !== undefined ? { name: request.name } : {}),
            ...(request.description !== undefined ? { description: request.description } : {}),
            ...(request.endpoint !== undefined && !linked ? { endpoint: request.endpoint } : {}),
            ...(request.method !== undefined && !linked ? { method: request.method } : {}),
            ...(request.body_format !== undefined && !linked ? { bodyFormat: request.body_format } : {}),
            ...(request.timeout !== undefined ? { timeoutSeconds: request.timeout } : {}),
            ...(request.static_fields !== undefined ? { staticFields: request.static_fields } : {}),
            ...(request.schema !== undefined ? { schema: normaliseSchema(request.schema) } : {}),
          };
          Object.assign(current, changes);
          if (request.headers !== undefined) current.headers = this.sealHeaders(current.id, request.headers);
          // Saving touches updated_at even when only a list changed.
          current.updatedAt = new Date();
          await tools.saveChanges(user.id, current);
          return current;
        }),
      nameTaken,
    );
    return { message: 'Tool updated successfully.', data: this.toResponse(tool) };
  }

  /** Assistants using it lose it (the join rows cascade). */
  async delete(user: AuthenticatedUser, id: number): Promise<MessageResponse> {
    if (!(await this.tools.delete(user.id, id))) throw Errors.toolNotFound();
    return { message: 'Tool deleted successfully.' };
  }

  async test(user: AuthenticatedUser, id: number, request: TestToolRequest): Promise<ToolTestEnvelope> {
    const { result } = await this.run(user.id, id, request.arguments ?? {}, request.variables ?? {});
    return { data: toToolTestResult(result) };
  }

  /**
   * Makes the tool's request as an assistant's call does: the arguments checked against its schema (422 naming the
   * field), its header values opened only here, in memory, for this request. The test route and the voice runtime's
   * invocations both come through here.
   */
  async run(
    ownerId: number,
    id: number,
    values: Record<string, unknown>,
    variables: Record<string, unknown>,
  ): Promise<{ tool: Tool; result: ToolCallResult }> {
    const tool = await this.tools.findOne(ownerId, id);
    if (!tool) throw Errors.toolNotFound();
    const errors = validateToolArguments(tool.schema, values);
    if (Object.keys(errors).length > 0) throw new ValidationFailed(errors);
    const result = await this.executor.call({ ...tool, headers: this.openHeaders(tool) }, values, variables);
    return { tool, result };
  }

  private async find(user: AuthenticatedUser, id: number): Promise<Tool> {
    const tool = await this.tools.findOne(user.id, id);
    if (!tool) throw Errors.toolNotFound();
    return tool;
  }

  private async storeHeaders(
    tools: TenantRepository<Tool>,
    user: AuthenticatedUser,
    tool: Tool,
    headers: ToolHeader[],
  ) {
    tool.headers = this.sealHeaders(tool.id, headers);
    await tools.update(user.id, tool.id, { headers: tool.headers });
  }

  private sealHeaders(toolId: number, headers: ToolHeader[]): Tool['headers'] {
    return headers.map((header) => ({
      name: header.name,
      sealedValue: this.secrets.seal(header.value, SecretContexts.toolHeader(toolId)),
    }));
  }

  private openHeaders(tool: Tool): ToolHeader[] {
    return tool.headers.map((header) => ({
      name: header.name,
      value: this.secrets.open(header.sealedValue, SecretContexts.toolHeader(tool.id)),
    }));
  }

  private toResponse(tool: Tool): ToolResponse {
    return toToolResponse(tool, this.openHeaders(tool));
  }
}

function normaliseSchema(schema: ToolParameter[]): Tool['schema'] {
  return schema.map(storedToolParameter);
}
