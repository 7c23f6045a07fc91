import { Body, Controller, Delete, Get, Header, HttpCode, Param, Put, Query, Req } from '@nestjs/common';
import { ApiAcceptedResponse, ApiCreatedResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { Request } from 'express';
import {
  ApiLengthAwarePage,
  CampaignEnvelope,
  CampaignMessageEnvelope,
  CampaignResponse,
  CreateCampaignRequest,
  Errors,
  ImportLeadsRequest,
  LeadImportAcceptedResponse,
  LeadImportEnvelope,
  LengthAwarePage,
  MessageResponse,
  PageQuery,
  UpdateCampaignRequest,
} from '@app/contracts';
import {
  ApiBodyPerMediaType,
  ApiNotFoundAs,
  ApiUserResource,
  ApiValidatedInput,
  ApiValidatedQuery,
  ResourceIdPipe,
} from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { FileUpload } from '../http/file-upload.interceptor';
import { CampaignsService } from './campaigns.service';
import { LeadImportsService } from './lead-imports.service';
import { UserPost } from '../idempotency/user-post.decorator';

const CampaignId = () => Param('id', new ResourceIdPipe(Errors.campaignNotFound));
const ImportId = () => Param('importId', new ResourceIdPipe(Errors.leadImportNotFound));
const ApiCampaignNotFound = () => ApiNotFoundAs('message', 'Campaign not found.');

@ApiUserResource('Campaigns')
@Controller('user')
export class CampaignsController {
  constructor(
    private readonly campaigns: CampaignsService,
    private readonly imports: LeadImportsService,
  ) {}

  @Get('campaigns')
  @ApiOperation({ operationId: 'listCampaigns', summary: 'List campaigns, newest first' })
  @ApiLengthAwarePage(CampaignResponse)
  @ApiValidatedQuery()
  list(
    @CurrentUser() user: AuthenticatedUser,
    @Query() query: PageQuery,
    @Req() request: Request,
  ): Promise<LengthAwarePage<CampaignResponse>> {
    return this.campaigns.list(user, query, request);
  }

  @UserPost('campaign')
  @ApiOperation({ operationId: 'createCampaign', summary: 'Create a campaign (status draft)' })
  @ApiCreatedResponse({ type: CampaignMessageEnvelope })
  @ApiValidatedInput()
  create(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: CreateCampaignRequest,
  ): Promise<CampaignMessageEnvelope> {
    return this.campaigns.create(user, body);
  }

  @Get('campaign/:id')
  @ApiOperation({ operationId: 'getCampaign', summary: 'Read a campaign' })
  @ApiOkResponse({ type: CampaignEnvelope })
  @ApiCampaignNotFound()
  get(@CurrentUser() user: AuthenticatedUser, @CampaignId() id: number): Promise<CampaignEnvelope> {
    return this.campaigns.get(user, id);
  }

  @Put('campaign/:id')
  @ApiOperation({ operationId: 'updateCampaign', summary: 'Update a campaign (partial)' })
  @ApiOkResponse({ type: CampaignMessageEnvelope })
  @ApiValidatedInput()
  @ApiCampaignNotFound()
  update(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @Body() body: UpdateCampaignRequest,
  ): Promise<CampaignMessageEnvelope> {
    return this.campaigns.update(user, id, body);
  }

  @Delete('campaign/:id')
  @ApiOperation({ operationId: 'deleteCampaign', summary: 'Delete a campaign and its leads' })
  @ApiOkResponse({ type: MessageResponse })
  @ApiCampaignNotFound()
  delete(@CurrentUser() user: AuthenticatedUser, @CampaignId() id: number): Promise<MessageResponse> {
    return this.campaigns.delete(user, id);
  }

  @UserPost('campaign/:id/leads/import')
  @HttpCode(202)
  @FileUpload()
  @ApiOperation({
    operationId: 'importLeads',
    summary: 'Import leads from a CSV file (multipart `file`), on the worker',
  })
  @ApiBodyPerMediaType({ 'multipart/form-data': ImportLeadsRequest })
  @ApiAcceptedResponse({ type: LeadImportAcceptedResponse })
  @ApiValidatedInput()
  @ApiCampaignNotFound()
  importLeads(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @Body() body: ImportLeadsRequest,
  ): Promise<LeadImportAcceptedResponse> {
    return this.imports.start(user, id, body);
  }

  @Get('campaign/:id/leads/imports/:importId')
  @ApiOperation({ operationId: 'getLeadImport', summary: 'Progress of a lead import and its first errors' })
  @ApiOkResponse({ type: LeadImportEnvelope })
  @ApiNotFoundAs('message', 'Lead import not found.')
  importProgress(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @ImportId() importId: number,
  ): Promise<LeadImportEnvelope> {
    return this.imports.progress(user, id, importId);
  }

  @Get('campaign/:id/leads/imports/:importId/errors.csv')
  @Header('Content-Type', 'text/csv; charset=utf-8')
  @ApiOperation({ operationId: 'downloadLeadImportErrors', summary: 'Every row error of a lead import, as CSV' })
  @ApiOkResponse({ description: 'row,column,message', content: { 'text/csv': { schema: { type: 'string' } } } })
  @ApiNotFoundAs('message', 'Lead import not found.')
  importErrors(
    @CurrentUser() user: AuthenticatedUser,
    @CampaignId() id: number,
    @ImportId() importId: number,
  ): Promise<string> {
    return this.imports.errorsCsv(user, id, importId);
  }
}
