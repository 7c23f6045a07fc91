import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { LanguageResponse, toLanguageResponse } from '@app/contracts';
import { Language } from '@app/database';

@Injectable()
export class LanguagesService {
  constructor(@InjectRepository(Language) private readonly languages: Repository<Language>) {}

  async list(): Promise<LanguageResponse[]> {
    const languages = await this.languages.find({ order: { name: 'ASC', id: 'ASC' } });
    return languages.map(toLanguageResponse);
  }
}
