import { ApiProperty } from '@nestjs/swagger';

export class LanguageResponse {
  @ApiProperty({ type: 'integer', example: 1 }) id: number;
  @ApiProperty({ example: 'English' }) name: string;
  @ApiProperty({ example: 'en' }) iso_2: string;
}

export function toLanguageResponse(language: { id: number; name: string; iso2: string }): LanguageResponse {
  return { id: language.id, name: language.name, iso_2: language.iso2 };
}
