import { applyDecorators, Type as ClassType } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { Rule } from '../validation';

export const DEFAULT_PER_PAGE = 15;
export const MAX_PER_PAGE = 100;

/** Laravel treats a page that is not a whole number >= 1 as page 1. */
function toPageNumber(value: unknown): number {
  const page = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : Number.NaN;
  return Number.isSafeInteger(page) && page >= 1 ? page : 1;
}

export class PageQuery {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, default: 1 })
  @Transform(({ value }) => toPageNumber(value))
  @Rule.Integer() // always passes after the transform; declares the field so the whitelist keeps it
  page: number = 1;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE })
  @Rule.DecimalInteger()
  @Rule.Between(1, MAX_PER_PAGE)
  per_page: number = DEFAULT_PER_PAGE;
}

/** The rows a page skips: the pages before it, full. */
export function pageOffset(query: PageQuery): number {
  return (query.page - 1) * query.per_page;
}

export class PageLink {
  @ApiProperty({ type: String, nullable: true }) url: string | null;
  @ApiProperty({ example: '1' }) label: string;
  @ApiProperty() active: boolean;
}

/** Laravel's LengthAwarePaginator JSON, without `data` (added per resource). */
export class LengthAwarePageMeta {
  @ApiProperty({ type: 'integer' }) current_page: number;
  @ApiProperty() first_page_url: string;
  @ApiProperty({ type: 'integer', nullable: true }) from: number | null;
  @ApiProperty({ type: 'integer' }) last_page: number;
  @ApiProperty() last_page_url: string;
  @ApiProperty({ type: [PageLink] }) links: PageLink[];
  @ApiProperty({ type: String, nullable: true }) next_page_url: string | null;
  @ApiProperty() path: string;
  @ApiProperty({ type: 'integer' }) per_page: number;
  @ApiProperty({ type: String, nullable: true }) prev_page_url: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) to: number | null;
  @ApiProperty({ type: 'integer' }) total: number;
}

export class SlimPageMeta {
  @ApiProperty({ type: 'integer' }) current_page: number;
  @ApiProperty({ type: 'integer' }) per_page: number;
  @ApiProperty({ type: 'integer' }) total: number;
}

export type LengthAwarePage<T> = { data: T[] } & LengthAwarePageMeta;
export type SlimPage<T> = { data: T[] } & SlimPageMeta;

/** Documents a route answering the full envelope with `data` items of `model`. */
export const ApiLengthAwarePage = (model: ClassType) =>
  applyDecorators(
    ApiExtraModels(LengthAwarePageMeta, model),
    ApiOkResponse({
      schema: {
        allOf: [
          { $ref: getSchemaPath(LengthAwarePageMeta) },
          { properties: { data: { type: 'array', items: { $ref: getSchemaPath(model) } } }, required: ['data'] },
        ],
      },
    }),
  );

/** Documents a route answering the slim envelope with `data` items of `model`. */
export const ApiSlimPage = (model: ClassType) =>
  applyDecorators(
    ApiExtraModels(SlimPageMeta, model),
    ApiOkResponse({
      schema: {
        allOf: [
          { $ref: getSchemaPath(SlimPageMeta) },
          { properties: { data: { type: 'array', items: { $ref: getSchemaPath(model) } } }, required: ['data'] },
        ],
      },
    }),
  );
