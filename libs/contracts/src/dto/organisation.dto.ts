import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

export const COLORS = ['gray', 'slate', 'red', 'orange', 'amber', 'green', 'teal', 'blue', 'purple', 'pink'] as const;

/** Create and update of a folder or a label (update: every field optional). */
export class CreateNamedColourRequest {
  @ApiProperty({
    type: String,
    maxLength: 255,
    example: 'Priority',
    description: 'Unique within the account, whatever the letter case',
  })
  @Rule.RequiredText()
  name: string;

  @ApiPropertyOptional({ enum: COLORS, nullable: true, description: '`null` clears it' })
  @Rule.Optional()
  @Rule.OneOf(COLORS)
  color?: string | null;
}

export class UpdateNamedColourRequest {
  @ApiPropertyOptional({ type: String, maxLength: 255 })
  @Rule.Sometimes()
  @Rule.RequiredText()
  name?: string;

  @ApiPropertyOptional({ enum: COLORS, nullable: true, description: '`null` clears it' })
  @Rule.Optional()
  @Rule.OneOf(COLORS)
  color?: string | null;
}

export class NamedColourResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty({ type: String }) name: string;
  @ApiProperty({ enum: COLORS, nullable: true }) color: string | null;
  @ApiProperty({ type: 'integer' }) assistants_count: number;
}

export class NamedColourMessageEnvelope {
  @ApiProperty({ type: String }) message: string;
  @ApiProperty({ type: NamedColourResponse }) data: NamedColourResponse;
}

export interface NamedColourRow {
  id: number;
  name: string;
  color: string | null;
  assistants_count: number;
}

export function toNamedColourResponse(row: NamedColourRow): NamedColourResponse {
  return { id: row.id, name: row.name, color: row.color, assistants_count: Number(row.assistants_count) };
}
