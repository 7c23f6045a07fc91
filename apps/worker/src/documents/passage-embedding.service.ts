import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'bullmq';
import { AppConfig } from '@app/config';
import { PassageEmbeddingsRepository, type PassageToEmbed } from '@app/database';
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
/**
 * Passages refused one by one in a row, with none embedded between them, that say the provider refuses the request
 * rather than what a passage holds (a parameter it does not take): the document is then left as a whole.
 */
const REFUSED_IN_A_ROW = 8;
/** Documents one sweep queues at most; the next sweep takes the rest. */
const SWEEP_DOCUMENTS = 500;

/** A refusal of what was sent (too long, malformed, a content policy), which the same input would meet again. */
function refusesInput(error: unknown): error is ModelProviderError & { status: number } {
  return error instanceof ModelProviderError && error.status !== undefined && REFUSALS_OF_INPUT.has(error.status);
}

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
    const tally = { embedded: 0, refused: 0, refusedInARow: 0 };
    try {
      for (;;) {
        const batch = await this.embeddings.toEmbed(documentId, this.model, EMBEDDING_BATCH);
        if (batch.length === 0) break;
        await this.embedBatch(documentId, this.model, batch, tally);
      }
    } catch (error) {
      if (!(error instanceof ModelProviderError)) throw error;
      // Retried with backoff while the provider may answer later; what was written stays written.
      if (error.transient && !isFinalAttempt(job)) throw error;
      this.logger.warn({ documentId, passages: tally.embedded, error: error.message }, 'passages not embedded');
      // Passages refused one after another (REFUSED_IN_A_ROW) say the request itself is refused, and it would be
      // again: the sweep leaves the document until its passages or the model change. A refused key or model (401,
      // 403, 404) is the operator's to fix, and every document is embedded once it is.
      if (refusesInput(error)) await this.embeddings.markRefused(documentId, this.model);
      return jobFailed(
        error.transient
          ? FailureReasons.afterAttempts(job.attemptsMade + 1, FailureReasons.modelUnavailable)
          : FailureReasons.modelRefusedRequest(error.status),
      );
    }
    await this.embeddings.markEmbedded(documentId, this.model);
    const { embedded: passages, refused } = tally;
    if (passages > 0) this.logger.log({ documentId, passages }, 'embedded passages');
    return { status: 'embedded', passages, ...(refused > 0 ? { refused } : {}) };
  }

  /**
   * Embeds a batch and writes its vectors. A batch the provider refuses for what it holds is halved until the
   * refused passages stand alone: each is recorded as refused (never asked for again with this model) and the rest
   * of the batch is embedded, so one passage past the model's input limit costs the document only itself.
   */
  private async embedBatch(
    documentId: number,
    model: string,
    batch: PassageToEmbed[],
    tally: { embedded: number; refused: number; refusedInARow: number },
  ): Promise<void> {
    try {
      // A document is one account's: its tokens are that account's.
      const answer = await this.provider.embed({
        meter: { userId: batch[0].userId, purpose: 'document_embeddings' },
        inputs: batch.map((passage) => passage.content),
      });
      await this.embeddings.write(
        model,
        batch.map((passage, index) => ({ id: passage.id, vector: normalised(answer.vectors[index]) })),
      );
      tally.embedded += batch.length;
      tally.refusedInARow = 0;
    } catch (error) {
      if (!refusesInput(error)) throw error;
      if (batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.embedBatch(documentId, model, batch.slice(0, half), tally);
        await this.embedBatch(documentId, model, batch.slice(half), tally);
        return;
      }
      if (++tally.refusedInARow >= REFUSED_IN_A_ROW) throw error;
      await this.embeddings.writeRefused(model, [batch[0].id]);
      tally.refused++;
      this.logger.warn({ documentId, passageId: batch[0].id, status: error.status }, 'passage refused by the model');
    }
  }

  @HandlesJob(Jobs.sweepPassageEmbeddings)
  async sweep(): Promise<{ documents: number }> {
    if (!this.model) return { documents: 0 };
    const documents = await this.embeddings.documentsToEmbed(this.model, SWEEP_DOCUMENTS);
    for (const documentId of documents) await this.enqueue(documentId);
    return { documents: documents.length };
  }
}
