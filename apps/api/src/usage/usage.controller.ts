import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { UsageEnvelope, UsageQuery } from '@app/contracts';
import { ApiUserResource, ApiValidatedQuery } from '@app/platform';
import { AuthenticatedUser, CurrentUser } from '../auth/auth-context';
import { UsageService } from './usage.service';

@ApiUserResource('Usage')
@Controller('user/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({
    operationId: 'getUsage',
    summary: 'The account’s calls, minutes and model tokens per day (UTC), from counters kept as they are used',
  })
  @ApiOkResponse({ type: UsageEnvelope })
  @ApiValidatedQuery()
  get(@CurrentUser() user: AuthenticatedUser, @Query() query: UsageQuery): Promise<UsageEnvelope> {
    return this.usage.days(user, query);
  }
}
