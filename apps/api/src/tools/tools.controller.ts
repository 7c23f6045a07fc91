import { Body, Controller, Delete, Get, HttpCode, Param, Put, UseInterceptors } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import {
  CreateToolRequest,
  Errors,
  MessageResponse,
  TestToolRequest,
  TOOL_VALIDATION_MESSAGE,
  ToolEnvelope,
  ToolMessageEnvelope,
  ToolResponse,
  ToolTestEnvelope,
  UpdateToolRequest,
} from '@app/contracts';
import { ApiNotFoundAs, ApiUserResource, ApiValidatedInput, ResourceIdPipe } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { ValidationMessage } from '../http/validation-message.interceptor';
import { FlowTargetFieldsInterceptor } from './flow-target-fields.interceptor';
import { ToolsService } from './tools.service';
import { UserPost } from '../idempotency/user-post.decorator';

const ToolId = () => Param('id', new ResourceIdPipe(Errors.toolNotFound));
const ApiToolNotFound = () => ApiNotFoundAs('message', 'Tool not found');

@ApiUserResource('Mid-call tools')
@Controller('user/tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Get()
  @ApiOperation({ operationId: 'listTools', summary: 'List the tools of the account (a bare array)' })
  @ApiOkResponse({ type: [ToolResponse] })
  list(@CurrentUser() user: AuthenticatedUser): Promise<ToolResponse[]> {
    return this.tools.list(user);
  }

  @UserPost()
  @UseInterceptors(ValidationMessage(TOOL_VALIDATION_MESSAGE))
  @ApiOperation({ operationId: 'createTool', summary: 'Create an HTTP tool an assistant can call during a call' })
  @ApiCreatedResponse({ type: ToolMessageEnvelope })
  @ApiValidatedInput('Validation failed')
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateToolRequest): Promise<ToolMessageEnvelope> {
    return this.tools.create(user, body);
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getTool', summary: 'Read a tool, header values included' })
  @ApiOkResponse({ type: ToolEnvelope })
  @ApiToolNotFound()
  get(@CurrentUser() user: AuthenticatedUser, @ToolId() id: number): Promise<ToolEnvelope> {
    return this.tools.get(user, id);
  }

  @Put(':id')
  @UseInterceptors(ValidationMessage(TOOL_VALIDATION_MESSAGE), FlowTargetFieldsInterceptor)
  @ApiOperation({ operationId: 'updateTool', summary: 'Update a tool; omitted fields stay, lists sent replace' })
  @ApiOkResponse({ type: ToolMessageEnvelope })
  @ApiValidatedInput('Validation failed')
  @ApiToolNotFound()
  update(
    @CurrentUser() user: AuthenticatedUser,
    @ToolId() id: number,
    @Body() body: UpdateToolRequest,
  ): Promise<ToolMessageEnvelope> {
    return this.tools.update(user, id, body);
  }

  @Delete(':id')
  @ApiOperation({ operationId: 'deleteTool', summary: 'Delete a tool; assistants using it lose it' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiToolNotFound()
  delete(@CurrentUser() user: AuthenticatedUser, @ToolId() id: number): Promise<MessageResponse> {
    return this.tools.delete(user, id);
  }

  @UserPost(':id/test')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'testTool',
    summary: 'Call the tool now as an assistant would, and see the request sent and the answer received',
  })
  @ApiOkResponse({ type: ToolTestEnvelope, description: 'Sent; a failure to get an answer is in `error`' })
  @ApiValidatedInput('Arguments do not match the tool schema (on `arguments.<name>`)')
  @ApiToolNotFound()
  test(
    @CurrentUser() user: AuthenticatedUser,
    @ToolId() id: number,
    @Body() body: TestToolRequest,
  ): Promise<ToolTestEnvelope> {
    return this.tools.test(user, id, body);
  }
}
