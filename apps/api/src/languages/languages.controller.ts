import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { LanguageResponse } from '@app/contracts';
import { ApiUserResource } from '@app/platform';
import { LanguagesService } from './languages.service';

@ApiUserResource('Assistants')
@Controller('user/assistants/languages')
export class LanguagesController {
  constructor(private readonly languages: LanguagesService) {}

  @Get()
  @ApiOperation({ operationId: 'listLanguages', summary: 'Languages available to assistants' })
  @ApiOkResponse({ type: [LanguageResponse], description: 'Every language, ordered by name, as a bare array' })
  list(): Promise<LanguageResponse[]> {
    return this.languages.list();
  }
}
