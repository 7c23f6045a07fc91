import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { LanguageResponse } from '@app/contracts';
import { LanguagesService } from './languages.service';

@ApiTags('Assistants')
@ApiBearerAuth()
@Controller('user/assistants/languages')
export class LanguagesController {
  constructor(private readonly languages: LanguagesService) {}

  @Get()
  @ApiOkResponse({ type: [LanguageResponse], description: 'Every language, ordered by name, as a bare array' })
  list(): Promise<LanguageResponse[]> {
    return this.languages.list();
  }
}
