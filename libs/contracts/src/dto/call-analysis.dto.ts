import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Rule } from '../validation';

/** How a call's success is graded: passed or not, a score from 1 to 10, or a grade of a descriptive scale. */
export const SUCCESS_RUBRICS = ['pass_fail', 'score_1_10', 'descriptive'] as const;
export type SuccessRubric = (typeof SUCCESS_RUBRICS)[number];
/** The descriptive scale, best first. */
export const DESCRIPTIVE_GRADES = ['excellent', 'good', 'fair', 'poor'] as const;
/** A score from here up counts as a success (the upper half of 1-10), for the list's `success` filter. */
export const PASSING_SCORE = 6;
/** The grades of the descriptive scale that count as a success. */
export const PASSING_GRADES: readonly string[] = ['excellent', 'good'];
export const ANALYSIS_STATUSES = ['pending', 'done', 'failed', 'skipped'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];
/** The longest summary prompt or success criteria an assistant may give. */
export const MAX_ANALYSIS_INSTRUCTIONS = 4000;

/** An assistant's post-call analysis plan, complete (what is stored, and what a read shows). */
export interface AnalysisPlan {
  summary: { enabled: boolean; prompt: string | null };
  structured_data: { enabled: boolean };
  success: { enabled: boolean; rubric: SuccessRubric; criteria: string | null };
}

/**
 * What a plan left out is (Vapi's defaults): a summary, the `post_call_schema` fields extracted when there are any,
 * and a pass/fail grade.
 */
export const DEFAULT_ANALYSIS_PLAN: AnalysisPlan = {
  summary: { enabled: true, prompt: null },
  structured_data: { enabled: true },
  success: { enabled: true, rubric: 'pass_fail', criteria: null },
};

export class AnalysisSummaryPlanRequest {
  @ApiPropertyOptional({ type: Boolean, default: true })
  @Rule.Sometimes()
  @Rule.Boolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_ANALYSIS_INSTRUCTIONS,
    nullable: true,
    description: 'How to summarise, replacing the default instruction ("2-3 sentences: why the caller called, ...")',
  })
  @Rule.OptionalText(MAX_ANALYSIS_INSTRUCTIONS)
  prompt?: string | null;
}

export class AnalysisStructuredDataPlanRequest {
  @ApiPropertyOptional({
    type: Boolean,
    default: true,
    description: 'Extract the `post_call_schema` fields (nothing to do while it has none)',
  })
  @Rule.Sometimes()
  @Rule.Boolean()
  enabled?: boolean;
}

export class AnalysisSuccessPlanRequest {
  @ApiPropertyOptional({ type: Boolean, default: true })
  @Rule.Sometimes()
  @Rule.Boolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    enum: SUCCESS_RUBRICS,
    default: 'pass_fail',
    description:
      '`pass_fail`: true or false; `score_1_10`: an integer, 6 and up a success; `descriptive`: `excellent`, ' +
      '`good` (a success), `fair` or `poor`',
  })
  @Rule.Sometimes()
  @Rule.OneOf(SUCCESS_RUBRICS)
  rubric?: SuccessRubric;

  @ApiPropertyOptional({
    type: String,
    maxLength: MAX_ANALYSIS_INSTRUCTIONS,
    nullable: true,
    description: 'What a successful call achieves; none: the assistant’s system prompt says what it is for',
  })
  @Rule.OptionalText(MAX_ANALYSIS_INSTRUCTIONS)
  criteria?: string | null;
}

/** The plan as a request gives it: it replaces the stored one, and what it leaves out takes its default. */
export class AnalysisPlanRequest {
  @ApiPropertyOptional({ type: AnalysisSummaryPlanRequest })
  @Rule.Sometimes()
  @Rule.Nested(() => AnalysisSummaryPlanRequest)
  summary?: AnalysisSummaryPlanRequest;

  @ApiPropertyOptional({ type: AnalysisStructuredDataPlanRequest })
  @Rule.Sometimes()
  @Rule.Nested(() => AnalysisStructuredDataPlanRequest)
  structured_data?: AnalysisStructuredDataPlanRequest;

  @ApiPropertyOptional({ type: AnalysisSuccessPlanRequest })
  @Rule.Sometimes()
  @Rule.Nested(() => AnalysisSuccessPlanRequest)
  success?: AnalysisSuccessPlanRequest;
}

/** The complete plan of a request (null or absent: the defaults). */
export function analysisPlanOf(request: AnalysisPlanRequest | null | undefined): AnalysisPlan {
  const defaults = DEFAULT_ANALYSIS_PLAN;
  return {
    summary: {
      enabled: request?.summary?.enabled ?? defaults.summary.enabled,
      prompt: request?.summary?.prompt ?? null,
    },
    structured_data: { enabled: request?.structured_data?.enabled ?? defaults.structured_data.enabled },
    success: {
      enabled: request?.success?.enabled ?? defaults.success.enabled,
      rubric: request?.success?.rubric ?? defaults.success.rubric,
      criteria: request?.success?.criteria ?? null,
    },
  };
}

class AnalysisSummaryPlanResponse {
  @ApiProperty({ type: Boolean }) enabled: boolean;
  @ApiProperty({ type: String, nullable: true }) prompt: string | null;
}

class AnalysisStructuredDataPlanResponse {
  @ApiProperty({ type: Boolean }) enabled: boolean;
}

class AnalysisSuccessPlanResponse {
  @ApiProperty({ type: Boolean }) enabled: boolean;
  @ApiProperty({ enum: SUCCESS_RUBRICS }) rubric: SuccessRubric;
  @ApiProperty({ type: String, nullable: true }) criteria: string | null;
}

export class AnalysisPlanResponse {
  @ApiProperty({ type: AnalysisSummaryPlanResponse }) summary: AnalysisSummaryPlanResponse;
  @ApiProperty({ type: AnalysisStructuredDataPlanResponse }) structured_data: AnalysisStructuredDataPlanResponse;
  @ApiProperty({ type: AnalysisSuccessPlanResponse }) success: AnalysisSuccessPlanResponse;
}

/** A call's success, graded on its assistant's rubric. */
export interface CallSuccess {
  rubric: SuccessRubric;
  /** `true`/`false` (pass_fail), 1-10 (score_1_10) or a grade of DESCRIPTIVE_GRADES (descriptive). */
  value: boolean | number | string;
  /** What the list's `success` filter reads (see `successPassed`). */
  passed: boolean;
  /** The model's reason, in a sentence or two. */
  reason: string;
}

/** Whether a grade counts as a success: a pass, a score from PASSING_SCORE, or a grade of PASSING_GRADES. */
export function successPassed(rubric: SuccessRubric, value: boolean | number | string): boolean {
  switch (rubric) {
    case 'pass_fail':
      return value === true;
    case 'score_1_10':
      return typeof value === 'number' && value >= PASSING_SCORE;
    case 'descriptive':
      return typeof value === 'string' && PASSING_GRADES.includes(value);
  }
}

export interface CallAnalysisTokens {
  prompt: number;
  completion: number;
  total: number;
}

/** A call's analysis as stored (the `analysis` column; `analyzed_at` an ISO instant). */
export interface CallAnalysis {
  status: AnalysisStatus;
  summary: string | null;
  structured_data: Record<string, unknown> | null;
  success: CallSuccess | null;
  model: string | null;
  tokens: CallAnalysisTokens | null;
  error: string | null;
  analyzed_at: string | null;
}

/** An analysis requested and not yet run. */
export const PENDING_ANALYSIS: CallAnalysis = {
  status: 'pending',
  summary: null,
  structured_data: null,
  success: null,
  model: null,
  tokens: null,
  error: null,
  analyzed_at: null,
};

/** Why a call without a transcript is not analysed (`skipped`). */
export const NO_TRANSCRIPT_TO_ANALYSE = 'Nothing to analyse: the call has no transcript.';

class CallSuccessResponse {
  @ApiProperty({ enum: SUCCESS_RUBRICS }) rubric: SuccessRubric;
  @ApiProperty({
    oneOf: [{ type: 'boolean' }, { type: 'integer', minimum: 1, maximum: 10 }, { enum: [...DESCRIPTIVE_GRADES] }],
    description: '`true`/`false` (pass_fail), 1-10 (score_1_10), or `excellent`, `good`, `fair`, `poor` (descriptive)',
  })
  value: boolean | number | string;
  @ApiProperty({
    type: Boolean,
    description: 'A pass, a score of 6 or more, or `excellent` or `good`: what the list’s `success` filter reads',
  })
  passed: boolean;
  @ApiProperty({ type: String }) reason: string;
}

class CallAnalysisTokensResponse {
  @ApiProperty({ type: 'integer' }) prompt: number;
  @ApiProperty({ type: 'integer' }) completion: number;
  @ApiProperty({ type: 'integer' }) total: number;
}

export class CallAnalysisResponse {
  @ApiProperty({
    enum: ANALYSIS_STATUSES,
    description:
      '`pending` until the worker has run it; `done`; `failed` (`error` says why); `skipped`: nothing to analyse ' +
      '(no transcript, or a plan that asks for nothing)',
  })
  status: AnalysisStatus;
  @ApiProperty({ type: String, nullable: true }) summary: string | null;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description: 'The `post_call_schema` fields, each its value or null when the call does not say',
  })
  structured_data: Record<string, unknown> | null;
  @ApiProperty({ type: CallSuccessResponse, nullable: true }) success: CallSuccessResponse | null;
  @ApiProperty({ type: String, nullable: true, description: 'The model as the provider named it' })
  model: string | null;
  @ApiProperty({
    type: CallAnalysisTokensResponse,
    nullable: true,
    description: 'Spent on this analysis, invalid answers included',
  })
  tokens: CallAnalysisTokensResponse | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why it failed or was skipped' })
  error: string | null;
  @ApiProperty({ type: String, nullable: true, example: '2026-01-02 03:04:05' }) analyzed_at: string | null;
}
