import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { AppConfig } from '@app/config';
import { PassageEmbeddingsRepository } from '@app/database';
import {
  type DocumentJob,
  FailureReasons,
  HandlesJob,
  JobQueue,
  Jobs,
  type JobFailed,
  isFinalAttempt,
  jobFailed,
} from '@app/jobs';
import { MODEL_PROVIDER, type ModelProvider, ModelProviderError, embeddingsModelKey } from '@app/model-provider';

/**
 * Passages embedded per request and written per statement: within the provider's 2,048 inputs (a passage is about
 * 1,000 characters, some 250 tokens, so 128 stay far under its 300,000 tokens), and small enough that a job stopped
 * mid-document loses at most one batch's tokens.
 */
export const EMBEDDING_BATCH = 128;
/** Statuses by which a provider refuses the input itself (OpenAI: 400 for a too long or malformed input). */
const REFUSALS_OF_INPUT = new Set([400, 413, 422]);
/** Documents one sweep queues at most; the next sweep takes the rest. */
const SWEEP_DOCUMENTS = 500;

/** Unit length, so that a dot product is the cosine (OpenAI's are already; other providers' need not be). */
function normalised(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return vector.map((value) => value / norm);
}

/** The worker's side of search by meaning: each passage's vector from the model provider, once a model. */
@Injectable()
export class PassageEmbedding {
  private readonly logger = new Logger(PassageEmbedding.name);
  private readonly model: string | undefined;

  constructor(
    config: AppConfig,
    private readonly embeddings: PassageEmbeddingsRepository,
    private readonly jobs: JobQueue,
    @Inject(MODEL_PROVIDER) private readonly provider: ModelProvider,
  ) {
    this.model = provider.embeddingsAvailable ? embeddingsModelKey(config.modelProvider) : undefined;
  }

  /** Queues a document's embedding once its passages are written; nothing without an embeddings model. */
  async enqueue(documentId: number): Promise<void> {
    if (this.model) await this.jobs.enqueue(Jobs.embedDocument, { documentId });
  }

  @HandlesJob(Jobs.embedDocument)
  async embed({ documentId }: DocumentJob, job: Job): Promise<{ status: string; passages: number } | JobFailed> {
    if (!this.model) return { status: 'skipped', passages: 0 };
    let passages = 0;
    try {
      for (;;) {
        const batch = await this.embeddings.toEmbed(documentId, this.model, EMBEDDING_BATCH);
        if (batch.length === 0) break;
        // A document is one account's: its tokens are that account's.
        const answer = await this.provider.embed({
          meter: { userId: batch[0].userId, purpose: 'document_embeddings' },
          inputs: batch.map((passage) => passage.content),
        });
        await this.embeddings.write(
          this.model,
          batch.map((passage, index) => ({ id: passage.id, vector: normalised(answer.vectors[index]) })),
        );
        passages += batch.length;
      }
    } catch (error) {
      if (!(error instanceof ModelProviderError)) throw error;
      // Retried with backoff while the provider may answer later; what was written stays written.
      if (error.transient && !isFinalAttempt(job)) throw error;
      this.logger.warn({ documentId, passages, error: error.message }, 'passages not embedded');
      // A refusal of what was sent (too long, a content policy) would be refused again: the sweep leaves the document
      // until its passages or the model change. A refused key or model (401, 403, 404) is the operator's to fix, and
      // every document is embedded once it is.
      if (error.status !== undefined && REFUSALS_OF_INPUT.has(error.status))
        await this.embeddings.markRefused(documentId, this.model);
      return jobFailed(
        error.transient
          ? FailureReasons.afterAttempts(job.attemptsMade + 1, FailureReasons.modelUnavailable)
          : FailureReasons.modelRefusedRequest(error.status),
      );
    }
    await this.embeddings.markEmbedded(documentId, this.model);
    if (passages > 0) this.logger.log({ documentId, passages }, 'embedded passages');
    return { status: 'embedded', passages };
  }

  @HandlesJob(Jobs.sweepPassageEmbeddings)
  async sweep(): Promise<{ documents: number }> {
    if (!this.model) return { documents: 0 };
    const documents = await this.embeddings.documentsToEmbed(this.model, SWEEP_DOCUMENTS);
    for (const documentId of documents) await this.enqueue(documentId);
    return { documents: documents.length };
  }
}
