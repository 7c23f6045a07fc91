import { type Completion, type Embeddings, type ModelProvider, ModelProviderError } from './model-provider';

/**
 * The port where no model provider is configured (no `LLM_BASE_URL`): the service runs as it would without the
 * features that need one. There is no local model to stand in, so this plays the part `local` adapters play for the
 * telephony ports: features check `available` and do without; a call anyway fails, permanently.
 */
export class UnconfiguredModelProvider implements ModelProvider {
  readonly available = false;
  readonly embeddingsAvailable = false;

  complete(): Promise<Completion> {
    return Promise.reject(notConfigured('LLM_BASE_URL'));
  }

  embed(): Promise<Embeddings> {
    return Promise.reject(notConfigured('LLM_BASE_URL'));
  }
}

/** The permanent error of a request for something this deployment has no model for. */
export function notConfigured(variable: 'LLM_BASE_URL' | 'EMBEDDINGS_MODEL'): ModelProviderError {
  const what = variable === 'LLM_BASE_URL' ? 'No model provider is configured' : 'No embeddings model is configured';
  return new ModelProviderError(`${what} (${variable} is not set).`, { transient: false, code: 'not_configured' });
}
