import { Injectable } from '@nestjs/common';
import { LanguageResponse, toLanguageResponse } from '@app/contracts';
import { LanguagesRepository } from '@app/database';

@Injectable()
export class LanguagesService {
  constructor(private readonly languages: LanguagesRepository) {}

  async list(): Promise<LanguageResponse[]> {
    const languages = await this.languages.list();
    return languages.map(toLanguageResponse);
  }
}
