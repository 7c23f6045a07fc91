import { llm, voice } from '@livekit/agents';
import { type CallClient, type CallSession, ServiceError, type SessionTool } from './service-client.js';

/** The function the model looks facts up with, when the assistant has a knowledgebase. */
export const KNOWLEDGE_TOOL = 'search_knowledgebase';
/** Passages handed to the model per look-up: enough to answer, few enough to keep the reply quick. */
const KNOWLEDGE_PASSAGES = 3;
/** The service's longest search query. */
const MAX_QUERY_LENGTH = 500;

/** The agent that runs one call, built from nothing but the call's session. */
export function buildAgent(session: CallSession, call: CallClient, now = new Date()): voice.Agent {
  return new voice.Agent({ instructions: instructionsFor(session, now), tools: toolsFor(session, call) });
}

/**
 * The assistant's system prompt as written (the service has filled its variables in), then what the prompt cannot
 * know: which languages to speak, the date and time where the assistant works, and that its knowledgebase is
 * searched through a tool.
 */
function instructionsFor(session: CallSession, now: Date): string {
  const { assistant, knowledgebase } = session;
  const secondary = assistant.secondary_languages.map((language) => language.name);
  const lines = [
    assistant.system_prompt?.trim() ?? '',
    '',
    `Speak ${assistant.language.name}.` +
      (secondary.length > 0 ? ` If the caller speaks ${secondary.join(' or ')}, answer in that language.` : ''),
    `It is now ${localTime(now, assistant.timezone)} (${assistant.timezone}).`,
  ];
  if (knowledgebase) {
    lines.push(
      `Answer questions about facts from the "${knowledgebase.name}" knowledgebase: look them up with ` +
        `${KNOWLEDGE_TOOL} first, and say so when it has nothing on the question rather than guessing.`,
    );
  }
  return lines.join('\n').trim();
}

/** Each of the assistant's tools as a function the model can call, and the knowledge look-up. */
function toolsFor(session: CallSession, call: CallClient): llm.FunctionTool[] {
  const tools = session.tools.map((tool) => serviceTool(tool, call));
  // A tool of the assistant's own under the same name keeps it: the assistant's owner chose that name.
  if (session.knowledgebase && !session.tools.some((tool) => tool.name === KNOWLEDGE_TOOL)) {
    tools.push(knowledgeTool(call));
  }
  return tools;
}

/**
 * A tool of the assistant, run by the service: the model's arguments go to the invoke route, which checks them
 * against the same schema, makes the request with the secrets only the service holds, and records the call.
 */
function serviceTool(tool: SessionTool, call: CallClient): llm.FunctionTool {
  return llm.tool({
    name: tool.name,
    description: tool.description,
    // The service's JSON Schema as it is: the model sees exactly what the invoke route will check.
    parameters: tool.parameters,
    execute: async (args: Record<string, unknown> | undefined) => {
      const result = await call.invokeTool(tool.id, args ?? {}).catch((error: unknown) => {
        throw new llm.ToolError(refusal(error));
      });
      // Told to the model, which can tell the caller, rather than an answer it would have to make up: the kind of
      // failure only, never the service's message, which names the endpoint's host and is for the owner's eyes.
      if (result.status === null) throw new llm.ToolError(noAnswer(tool.name, result.error_code));
      return { status: result.status, body: result.body };
    },
  });
}

function knowledgeTool(call: CallClient): llm.FunctionTool {
  return llm.tool({
    name: KNOWLEDGE_TOOL,
    description: 'Searches the knowledgebase for passages that answer a question; use the caller’s own words.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to look for' } },
      required: ['query'],
    },
    execute: async ({ query }: { query: string }) => {
      const passages = await call
        .knowledge(String(query).slice(0, MAX_QUERY_LENGTH), KNOWLEDGE_PASSAGES)
        .catch((error: unknown) => {
          throw new llm.ToolError(refusal(error));
        });
      if (passages.length === 0) return 'Nothing in the knowledgebase answers this.';
      return passages.map((passage) => ({ source: passage.document_name, text: passage.content }));
    },
  });
}

/** What the model is told when a tool's endpoint gave no answer: a sentence of ours and the kind of failure. */
export function noAnswer(toolName: string, code: string | null): string {
  return (
    `${toolName} could not be reached just now (${code ?? 'no answer'}). ` +
    'Tell the caller it cannot be checked at the moment; do not guess the answer.'
  );
}

/** What the model is told when the service refused a call or could not be reached. */
function refusal(error: unknown): string {
  if (error instanceof ServiceError && error.status === 422) {
    const errors = (error.body as { errors?: Record<string, string[]> } | undefined)?.errors ?? {};
    return `The arguments were refused: ${Object.values(errors).flat().join(' ') || error.message}`;
  }
  return 'The service that runs this is not answering right now.';
}

function localTime(now: Date, timezone: string): string {
  const format = (timeZone?: string) =>
    new Intl.DateTimeFormat('en-GB', { dateStyle: 'full', timeStyle: 'short', timeZone }).format(now);
  try {
    return format(timezone);
  } catch {
    // A zone this Node's ICU does not know: the time in UTC is still better than none.
    return `${format('UTC')} UTC`;
  }
}
