import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { Rule } from '../validation';
import { RequestExample } from './request-example';

export const DOCUMENT_TYPES = ['website', 'pdf', 'txt', 'docx'] as const;
export const FILE_DOCUMENT_TYPES: readonly string[] = ['pdf', 'txt', 'docx'];
export const MAX_DOCUMENT_FILE_BYTES = 20 * 1024 * 1024;
export const DEFAULT_RELATIVE_LINKS_LIMIT = 10;
export const MAX_DOCUMENT_LINKS = 50;
export const MIN_REFRESH_INTERVAL_HOURS = 24;
export const MAX_REFRESH_INTERVAL_HOURS = 720;

const typeLabels: Record<string, string> = { website: 'Website', pdf: 'PDF', txt: 'Text', docx: 'Word document' };
const statusLabels: Record<string, string> = { processing: 'Processing', active: 'Active', failed: 'Failed' };

/** An uploaded file as the upload interceptor hands it to validation. */
export interface UploadedDocumentFile {
  originalName: string;
  size: number;
  buffer: Buffer;
}

export class DocumentLinkItem {
  @ApiProperty({ format: 'uri', maxLength: 2048 })
  @Rule.RequiredText(2048)
  @Rule.HttpUrl()
  link: string;
}

const isWebsite = (request: CreateDocumentRequest) => request.type === 'website';
const isFileType = (request: CreateDocumentRequest) => FILE_DOCUMENT_TYPES.includes(request.type);

/**
 * `website` documents come as JSON (`url` or `links`); file documents as multipart with `file`. Multipart
 * fields arrive as strings, hence the number conversion.
 */
export class CreateDocumentRequest {
  @ApiProperty({ maxLength: 255 })
  @Rule.RequiredText()
  name: string;

  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true })
  @Rule.OptionalText()
  description?: string | null;

  @ApiProperty({ enum: DOCUMENT_TYPES })
  @Rule.Required()
  @Rule.OneOf(DOCUMENT_TYPES)
  type: string;

  @ApiPropertyOptional({
    format: 'uri',
    maxLength: 2048,
    description: 'Website: the page to start crawling from (required without `links`)',
  })
  @ValidateIf(
    (request: CreateDocumentRequest) =>
      isWebsite(request) && (request.links === undefined || request.url !== undefined),
  )
  @Rule.RequiredWithout('links')
  @Rule.String()
  @Rule.MaxChars(2048)
  @Rule.HttpUrl()
  url?: string;

  @ApiPropertyOptional({
    type: [DocumentLinkItem],
    maxItems: MAX_DOCUMENT_LINKS,
    description: 'Website: exactly these pages (required without `url`)',
  })
  @ValidateIf(
    (request: CreateDocumentRequest) =>
      isWebsite(request) && (request.url === undefined || request.links !== undefined),
  )
  @Rule.RequiredWithout('url')
  @Rule.ArrayMax(MAX_DOCUMENT_LINKS)
  @Rule.EachNested(() => DocumentLinkItem)
  links?: DocumentLinkItem[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 50, default: DEFAULT_RELATIVE_LINKS_LIMIT })
  @ValidateIf(isWebsite)
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(1, 50)
  relative_links_limit?: number;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_REFRESH_INTERVAL_HOURS,
    maximum: MAX_REFRESH_INTERVAL_HOURS,
    description: 'Website: re-crawl it this often',
  })
  @ValidateIf(isWebsite)
  @Rule.Optional()
  @Rule.DecimalInteger()
  @Rule.Between(MIN_REFRESH_INTERVAL_HOURS, MAX_REFRESH_INTERVAL_HOURS)
  refresh_interval_hours?: number;

  @ApiPropertyOptional({ type: 'string', format: 'binary', description: 'pdf, txt, docx: the file, at most 20 MB' })
  @ValidateIf(isFileType)
  @Transform(({ obj }) => obj.file, { toClassOnly: true })
  @Rule.Required()
  file?: UploadedDocumentFile;
}

/** OpenAPI only: the JSON form of document creation (websites). Validation uses CreateDocumentRequest. */
@RequestExample({ name: 'Opening hours', type: 'website', url: 'https://example.com/hours' })
export class CreateWebsiteDocumentBody {
  @ApiProperty({ type: String, maxLength: 255 }) name: string;
  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true }) description?: string | null;
  @ApiProperty({ enum: ['website'] }) type: string;
  @ApiPropertyOptional({
    type: String,
    format: 'uri',
    maxLength: 2048,
    description: 'The page to start crawling from (required without `links`)',
  })
  url?: string;
  @ApiPropertyOptional({
    type: [DocumentLinkItem],
    maxItems: MAX_DOCUMENT_LINKS,
    description: 'Exactly these pages (required without `url`)',
  })
  links?: DocumentLinkItem[];
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 50,
    default: DEFAULT_RELATIVE_LINKS_LIMIT,
    description: 'Further same-site links to follow from `url`',
  })
  relative_links_limit?: number;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: MIN_REFRESH_INTERVAL_HOURS,
    maximum: MAX_REFRESH_INTERVAL_HOURS,
    description: 'Re-crawl the website this often; unchanged pages keep their passages',
  })
  refresh_interval_hours?: number;
}

/**
 * OpenAPI only: the multipart form of document creation (PDF, TXT, Word files). A form is filled field by field (and
 * the file chosen), so its examples are the fields'.
 */
export class CreateFileDocumentBody {
  @ApiProperty({ type: String, maxLength: 255, example: 'Opening hours' }) name: string;
  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true, description: 'Empty means none' }) description?:
    string | null;
  @ApiProperty({ enum: FILE_DOCUMENT_TYPES, example: 'txt' }) type: string;
  @ApiProperty({ type: 'string', format: 'binary', description: 'The file, at most 20 MB' }) file: unknown;
}

export class DocumentResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: DOCUMENT_TYPES }) type: string;
  @ApiProperty({ example: 'Website' }) type_label: string;
  @ApiProperty({ enum: ['processing', 'active', 'failed'] }) status: string;
  @ApiProperty({ example: 'Processing' }) status_label: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class DocumentPageResponse {
  @ApiProperty() url: string;
  @ApiProperty({ enum: ['fetched', 'failed', 'skipped'] }) status: string;
  @ApiPropertyOptional({ type: String }) title?: string;
  @ApiProperty({ type: 'integer' }) characters: number;
  @ApiPropertyOptional({ type: String, description: 'Why the page was not used' }) error?: string;
}

export class DocumentRefreshResponse {
  @ApiProperty({ enum: ['succeeded', 'failed'] }) status: string;
  @ApiProperty({ format: 'date-time' }) finished_at: string;
  @ApiProperty({ type: 'integer' }) pages_added: number;
  @ApiProperty({ type: 'integer' }) pages_changed: number;
  @ApiProperty({ type: 'integer' }) pages_removed: number;
  @ApiProperty({ type: 'integer' }) pages_unchanged: number;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed; the previous content was kept' })
  error: string | null;
}

export class DocumentDetailResponse extends DocumentResponse {
  @ApiProperty({ type: String, nullable: true }) error_message: string | null;
  @ApiProperty({ type: 'integer', description: 'Characters of text extracted' }) content_length: number;
  @ApiPropertyOptional({ type: [DocumentPageResponse], description: 'Websites only' }) pages?: DocumentPageResponse[];
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'Websites only' })
  refresh_interval_hours?: number | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'Websites only' })
  last_refreshed_at?: string | null;
  @ApiPropertyOptional({
    type: DocumentRefreshResponse,
    nullable: true,
    description: 'Websites only: what the last refresh changed',
  })
  last_refresh?: DocumentRefreshResponse | null;
}

export class DocumentRefreshAcceptedResponse {
  @ApiProperty() message: string;
}

export class DocumentEnvelope {
  @ApiProperty({ type: DocumentDetailResponse }) data: DocumentDetailResponse;
}

export class CreateDocumentResponse {
  @ApiProperty() message: string;
  @ApiProperty({ type: DocumentResponse }) data: DocumentResponse;
}

export class DocumentListResponse {
  @ApiProperty({ type: [DocumentResponse] }) data: DocumentResponse[];
}

interface DocumentLike {
  id: number;
  name: string;
  description: string | null;
  type: string;
  status: string;
  createdAt: Date;
  errorMessage: string | null;
  contentLength: number;
  refreshIntervalHours?: number | null;
  lastRefreshedAt?: Date | null;
  lastRefresh?: DocumentRefreshResponse | null;
}

interface PageLike {
  url: string;
  status: string;
  title: string | null;
  characters: number;
  error: string | null;
}

export function toDocumentResponse(document: DocumentLike): DocumentResponse {
  return {
    id: document.id,
    name: document.name,
    description: document.description,
    type: document.type,
    type_label: typeLabels[document.type] ?? document.type,
    status: document.status,
    status_label: statusLabels[document.status] ?? document.status,
    created_at: document.createdAt.toISOString(),
  };
}

export function toDocumentDetailResponse(document: DocumentLike, pages: PageLike[]): DocumentDetailResponse {
  return {
    ...toDocumentResponse(document),
    error_message: document.errorMessage,
    content_length: document.contentLength,
    ...(document.type === 'website'
      ? {
          pages: pages.map((page) => ({
            url: page.url,
            status: page.status,
            ...(page.title ? { title: page.title } : {}),
            characters: page.characters,
            ...(page.error ? { error: page.error } : {}),
          })),
          refresh_interval_hours: document.refreshIntervalHours ?? null,
          last_refreshed_at: document.lastRefreshedAt?.toISOString() ?? null,
          last_refresh: document.lastRefresh ?? null,
        }
      : {}),
  };
}
