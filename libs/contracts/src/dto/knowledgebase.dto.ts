import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

export const KnowledgebaseStatuses = ['empty', 'processing', 'active', 'failed'] as const;
export type KnowledgebaseStatus = (typeof KnowledgebaseStatuses)[number];

const statusLabels: Record<KnowledgebaseStatus, string> = {
  empty: 'Empty',
  processing: 'Processing',
  active: 'Active',
  failed: 'Failed',
};

export class CreateKnowledgebaseRequest {
  @ApiProperty({ maxLength: 255, example: 'Support FAQ' })
  @Rule.RequiredText()
  name: string;

  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true })
  @Rule.OptionalText()
  description?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'Language of its documents (stemming, stop words); none searches word for word',
  })
  @Rule.Optional()
  @Rule.Id()
  language_id?: number | null;
}

export class UpdateKnowledgebaseRequest {
  @ApiPropertyOptional({ maxLength: 255 })
  @Rule.Sometimes()
  @Rule.RequiredText()
  name?: string;

  @ApiPropertyOptional({ type: String, maxLength: 255, nullable: true, description: '`null` clears it' })
  @Rule.OptionalText()
  description?: string | null;

  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    description: 'A change re-indexes its passages in the background; `null` clears it',
  })
  @Rule.Optional()
  @Rule.Id()
  language_id?: number | null;
}

export class KnowledgebaseResponse {
  @ApiProperty({ type: 'integer' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) language_id: number | null;
  @ApiProperty({ enum: KnowledgebaseStatuses }) status: KnowledgebaseStatus;
  @ApiProperty({ example: 'Active' }) status_label: string;
  @ApiProperty({ type: 'integer' }) documents_count: number;
  @ApiProperty({ type: 'integer' }) assistants_count: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class KnowledgebaseEnvelope {
  @ApiProperty({ type: KnowledgebaseResponse }) data: KnowledgebaseResponse;
}

export class KnowledgebaseMessageEnvelope extends KnowledgebaseEnvelope {
  @ApiProperty() message: string;
}

export class KnowledgebaseListResponse {
  @ApiProperty({ type: [KnowledgebaseResponse] }) data: KnowledgebaseResponse[];
}

/** A knowledgebase with the figures derived from its documents (see KnowledgebaseRepository). */
export interface KnowledgebaseSummary {
  id: number;
  name: string;
  description: string | null;
  languageId: number | null;
  createdAt: Date;
  updatedAt: Date;
  documentsCount: number;
  processingCount: number;
  failedCount: number;
  assistantsCount: number;
}

/** none -> empty; any processing -> processing; else any failed -> failed; else active. */
export function knowledgebaseStatus(summary: KnowledgebaseSummary): KnowledgebaseStatus {
  if (summary.documentsCount === 0) return 'empty';
  if (summary.processingCount > 0) return 'processing';
  if (summary.failedCount > 0) return 'failed';
  return 'active';
}

export function toKnowledgebaseResponse(summary: KnowledgebaseSummary): KnowledgebaseResponse {
  const status = knowledgebaseStatus(summary);
  return {
    id: summary.id,
    name: summary.name,
    description: summary.description,
    language_id: summary.languageId,
    status,
    status_label: statusLabels[status],
    documents_count: summary.documentsCount,
    assistants_count: summary.assistantsCount,
    created_at: summary.createdAt.toISOString(),
    updated_at: summary.updatedAt.toISOString(),
  };
}

export const DEFAULT_SEARCH_LIMIT = 5;

export class SearchKnowledgebaseQuery {
  @ApiProperty({
    maxLength: 500,
    description:
      'Words to look for; any of them may match (stop words ignored), rarer ones and words standing close together rank higher; "quoted phrases" are required, -word and -"phrase" exclude',
  })
  @Rule.RequiredText(500)
  query: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 50, default: DEFAULT_SEARCH_LIMIT })
  @Rule.DecimalInteger()
  @Rule.Between(1, 50)
  limit: number = DEFAULT_SEARCH_LIMIT;
}

export class SearchResult {
  @ApiProperty({ type: 'integer' }) document_id: number;
  @ApiProperty() document_name: string;
  @ApiProperty() content: string;
  @ApiProperty({ description: 'The content with the words that matched the query marked `**like this**`' })
  highlight: string;
  @ApiProperty({ description: 'Relevance; higher is better' }) score: number;
  @ApiPropertyOptional({ type: String, description: 'Page the passage comes from (websites)' }) source_url?: string;
}

export class SearchResponse {
  @ApiProperty({ type: [SearchResult] }) data: SearchResult[];
}

/** A passage a search found, as libs/database's passage search ranks it. */
export interface PassageHit {
  /** The passage's own id, for fusing rankings; never answered. */
  id: number;
  document_id: number;
  document_name: string;
  content: string;
  /** Null past the first few a fusion asked to be highlighted (it highlights what it shows). */
  highlight: string | null;
  source_url: string | null;
  score: number;
}

/** A found passage as the search answers it: its score to six decimal places, its page only when it has one. */
export function toSearchResult(hit: PassageHit): SearchResult {
  return {
    document_id: hit.document_id,
    document_name: hit.document_name,
    content: hit.content,
    highlight: hit.highlight ?? '',
    score: Math.round(hit.score * 1e6) / 1e6,
    ...(hit.source_url ? { source_url: hit.source_url } : {}),
  };
}
