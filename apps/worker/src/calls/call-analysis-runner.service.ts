import { Inject, Injectable, Logger } from '@nestjs/common';
import { Job } from 'bullmq';
import { AppConfig } from '@app/config';
import {
  type CallAnalysis,
  type CallAnalysisTokens,
  DEFAULT_ANALYSIS_PLAN,
  NO_TRANSCRIPT_TO_ANALYSE,
  PENDING_ANALYSIS,
} from '@app/contracts';
import { CallAnalysesRepository, type CallToAnalyseRow } from '@app/database';
import {
  type CallAnalysisJob,
  FailureReasons,
  HandlesJob,
  isFinalAttempt,
  type JobDefinition,
  type JobFailed,
  jobFailed,
  JobQueue,
  Jobs,
  LIVE_JOB_STATES,
} from '@app/jobs';
import { type Completion, MODEL_PROVIDER, type ModelProvider, ModelProviderError } from '@app/model-provider';
import { JobMetrics } from '../job-metrics';
import {
  type AnalysisAnswer,
  type AnalysisParts,
  analysisMessages,
  analysisParts,
  analysisSchema,
  readAnswer,
  schemaProblem,
} from './analysis-request';
import { budgetTranscript } from './transcript-budget';

/** Answers one run asks for at most: an invalid one (cut, refused, not the schema's) is asked again, twice. */
export const ANSWERS_PER_RUN = 3;
/**
 * The longest answer asked for: a summary, the fields and a grade take far less, but a reasoning model counts its
 * reasoning in it too.
 */
const MAX_ANSWER_TOKENS = 8192;
/** How the answer's schema is named to the provider. */
const SCHEMA_NAME = 'call_analysis';

/** Why one answer could not be used; asked again while answers remain. */
class InvalidAnswer extends Error {}

/**
 * Post-call analysis: one run of a call's analysis asks the model provider once (strict structured output, the
 * schema built from the assistant's plan and `post_call_schema`), checks the answer against that schema, and settles
 * the call's `analysis`: done, failed with the reason, or skipped when there is nothing to analyse. Only the run that
 * is current and pending writes, once, so a job run twice (a retry, a worker killed mid-run, a sweep) analyses
 * nothing twice. A provider that is down delays the run (the job's retries, kept in the queue across restarts); one
 * that refuses the request fails it. A settled analysis owes the assistant's webhook a `call.analyzed`.
 */
@Injectable()
export class CallAnalysisRunner {
  private readonly logger = new Logger(CallAnalysisRunner.name);

  constructor(
    private readonly analyses: CallAnalysesRepository,
    @Inject(MODEL_PROVIDER) private readonly provider: ModelProvider,
    private readonly jobs: JobQueue,
    private readonly config: AppConfig,
    private readonly metrics: JobMetrics,
  ) {}

  @HandlesJob(Jobs.analyzeCall)
  async analyse({ callId, run }: CallAnalysisJob, job: Job): Promise<{ status: string } | JobFailed> {
    const call = await this.analyses.findToAnalyse(callId);
    if (!call || call.analysis_run !== run || call.analysis?.status !== 'pending') {
      // Settled by an earlier attempt that died before it queued the delivery.
      if (call?.analysis_run === run && call.analysis_webhook_due) await this.notify(callId);
      return { status: 'skipped' };
    }
    const parts = analysisParts(call.plan ?? DEFAULT_ANALYSIS_PLAN, call.post_call_schema ?? []);
    if (!/\S/.test(call.transcript))
      return this.settle(call, run, { ...PENDING_ANALYSIS, status: 'skipped', error: NO_TRANSCRIPT_TO_ANALYSE });
    if (!parts)
      return this.settle(call, run, {
        ...PENDING_ANALYSIS,
        status: 'skipped',
        error: 'Nothing to analyse: the assistant’s analysis plan asks for nothing.',
      });
    const spent: CallAnalysisTokens = { prompt: 0, completion: 0, total: 0 };
    let model: string | null = null;
    try {
      const answer = await this.ask(call, parts, (completion) => {
        model = completion.model;
        spent.prompt += completion.usage.promptTokens;
        spent.completion += completion.usage.completionTokens;
        spent.total += completion.usage.totalTokens;
      });
      return await this.settle(call, run, { ...PENDING_ANALYSIS, ...answer, status: 'done', model, tokens: spent });
    } catch (error) {
      const failed = (message: string) => ({
        ...PENDING_ANALYSIS,
        status: 'failed' as const,
        model,
        tokens: spent.total > 0 ? spent : null,
        error: message,
      });
      if (error instanceof InvalidAnswer) {
        await this.settle(call, run, failed(error.message));
        return jobFailed(FailureReasons.invalidAnalysis);
      }
      if (!(error instanceof ModelProviderError)) {
        if (!isFinalAttempt(job)) throw error;
        await this.settle(call, run, failed('The analysis failed unexpectedly.'));
        return jobFailed(FailureReasons.unexpected(error));
      }
      // The job's retries wait a provider's outage out; on the last one the run fails, and the owner may re-run it.
      if (error.transient && !isFinalAttempt(job)) throw error;
      if (error.transient) {
        const attempts = job.attemptsMade + 1;
        await this.settle(call, run, failed(`${error.message} (gave up after ${attempts} attempts)`));
        return jobFailed(FailureReasons.afterAttempts(attempts, FailureReasons.modelUnavailable));
      }
      await this.settle(call, run, failed(error.message));
      return jobFailed(FailureReasons.modelRefusedRequest(error.status));
    }
  }

  /**
   * The model's analysis: up to ANSWERS_PER_RUN answers, each spent answer passed to `spent`. An answer cut at the
   * token limit, refused, not JSON or not following the schema is asked again; a transcript over the model's context
   * (as the provider says) is cut to half the budget and asked again. The last answer's problem is the failure.
   */
  private async ask(
    call: CallToAnalyseRow,
    parts: AnalysisParts,
    spent: (completion: Completion) => void,
  ): Promise<AnalysisAnswer> {
    const schema = analysisSchema(parts);
    let budget = this.config.analysisTranscriptMaxTokens;
    let problem = '';
    for (let answer = 1; answer <= ANSWERS_PER_RUN; answer++) {
      const messages = analysisMessages(parts, budgetTranscript(call.transcript, budget), call.system_prompt);
      let completion: Completion;
      try {
        completion = await this.provider.complete({
          meter: { userId: call.user_id, purpose: 'analysis' },
          messages,
          // No temperature: reasoning models refuse any but their own, and the schema holds the answer's shape.
          maxTokens: MAX_ANSWER_TOKENS,
          structuredOutput: { name: SCHEMA_NAME, schema },
        });
      } catch (error) {
        if (!(error instanceof ModelProviderError)) throw error;
        if (error.code === 'context_length_exceeded') {
          budget = Math.floor(budget / 2);
          problem = `${error.message} (the transcript was cut to ${budget} tokens and asked again)`;
          continue;
        }
        if (error.code !== 'invalid_json') throw error;
        problem = error.message;
        continue;
      }
      spent(completion);
      if (completion.outcome === 'refused') problem = `The model refused to analyse the call: ${completion.refusal}`;
      else if (completion.outcome === 'truncated')
        problem = `The model's answer was cut at ${MAX_ANSWER_TOKENS} tokens (finish_reason ${completion.finishReason}).`;
      else {
        const wrong = schemaProblem(schema, completion.json);
        if (!wrong) return readAnswer(parts, completion.json as Record<string, unknown>);
        problem = `The model's answer does not follow the analysis schema: ${wrong}.`;
      }
      this.logger.warn({ callId: call.id, answer, problem }, 'invalid analysis answer; asking again');
    }
    throw new InvalidAnswer(`No valid analysis in ${ANSWERS_PER_RUN} answers. The last: ${problem}`);
  }

  /** Writes the run's outcome if it is still current and pending, and queues its `call.analyzed` when owed. */
  private async settle(call: CallToAnalyseRow, run: number, outcome: CallAnalysis): Promise<{ status: string }> {
    const analysis: CallAnalysis = { ...outcome, analyzed_at: new Date().toISOString() };
    // A skipped run owes no webhook: nothing was learnt.
    const notify = call.webhook_on && analysis.status !== 'skipped';
    const written = await this.analyses.settle(call.id, run, analysis, analysis.success?.passed ?? null, notify);
    if (!written) return { status: 'skipped' };
    if (notify) await this.notify(call.id);
    return { status: analysis.status };
  }

  /** Whether the job of this work is waiting, running or waiting to retry. */
  private async live<Payload>(definition: JobDefinition<Payload>, payload: Payload): Promise<boolean> {
    const existing = await this.jobs.queue(definition.queue).getJob(definition.jobId!(payload));
    return existing !== undefined && LIVE_JOB_STATES.has(await existing.getState());
  }

  private async notify(callId: number): Promise<void> {
    await this.jobs.enqueue(Jobs.deliverCallAnalyzedWebhook, { callId });
  }

  /**
   * Queues again the analyses still pending, and the `call.analyzed` deliveries still owed, whose job is gone (a
   * Redis master that acknowledged it and died before its replica had it, or queues lost): one settled or changed
   * WEBHOOK_STUCK_AFTER_SECONDS ago or more, whose job is not waiting, running or waiting to retry. Runs twice per
   * WEBHOOK_STUCK_AFTER_SECONDS while a model provider is configured.
   */
  @HandlesJob(Jobs.sweepCallAnalyses)
  async sweep(): Promise<{ requeued: number }> {
    const owed = await this.analyses.owed(this.config.webhookStuckAfterSeconds);
    let requeued = 0;
    for (const call of owed) {
      // A finished job is replaced (`enqueue`): it left the row owed, so it died before settling it.
      if (call.status === 'pending') {
        const payload = { callId: call.id, run: call.analysis_run };
        if (await this.live(Jobs.analyzeCall, payload)) continue;
        await this.jobs.enqueue(Jobs.analyzeCall, payload);
      } else {
        if (await this.live(Jobs.deliverCallAnalyzedWebhook, { callId: call.id })) continue;
        await this.notify(call.id);
      }
      requeued++;
    }
    if (requeued > 0) this.logger.warn({ requeued }, 'requeued analyses or their webhooks whose job was lost');
    this.metrics.jobsRequeued(Jobs.analyzeCall.name, requeued);
    return { requeued };
  }
}
