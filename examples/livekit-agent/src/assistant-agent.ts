import { llm, voice } from '@livekit/agents';
import {
  type CallClient,
  type CallSession,
  ServiceError,
  type SessionAction,
  type SessionTool,
} from './service-client.js';

/** What the built-in actions do to the call itself: keys on the line, words said, and ending the session. */
export interface CallActions {
  /** Presses keys on the line (LiveKit: `publishDtmf`), recorded as the assistant's DTMF. */
  pressKeys(digits: string): Promise<void>;
  /** Says a sentence to the caller (a transfer's announcement). */
  say(text: string): void;
  /** Ends the session once what is being said is said: the assistant hung up, or the caller was handed over. */
  end(reason: 'transferred' | 'assistant_hangup'): void;
}

/** Keys a DTMF action may press: a phone's pad and `w`, a half-second pause. */
const DTMF_DIGITS = /^[0-9*#w]{1,64}$/;

/** The function the model looks facts up with, when the assistant has a knowledgebase. */
export const KNOWLEDGE_TOOL = 'search_knowledgebase';
/** Passages handed to the model per look-up: enough to answer, few enough to keep the reply quick. */
const KNOWLEDGE_PASSAGES = 3;
/** The service's longest search query. */
const MAX_QUERY_LENGTH = 500;

/** The agent that runs one call, built from nothing but the call's session. */
export function buildAgent(
  session: CallSession,
  call: CallClient,
  actions: CallActions,
  now = new Date(),
): voice.Agent {
  return new voice.Agent({
    instructions: instructionsFor(session, now),
    tools: [...toolsFor(session, call), ...builtInTools(session, call, actions)],
  });
}

/**
 * The session's built-in actions as functions the model can call: a transfer done by the service (to a destination
 * of the assistant's, by name), ending the call, and keys pressed on the line. A tool of the assistant's own under the
 * same name keeps it.
 */
function builtInTools(session: CallSession, call: CallClient, actions: CallActions): llm.FunctionTool[] {
  const taken = new Set(session.tools.map((tool) => tool.name));
  return session.actions
    .filter((action) => !taken.has(action.name))
    .map((action) => {
      switch (action.type) {
        case 'transfer_call':
          return transferTool(action, call, actions);
        case 'end_call':
          return endCallTool(action, actions);
        case 'send_dtmf':
          return dtmfTool(action, actions);
      }
    });
}

function transferTool(action: SessionAction, call: CallClient, actions: CallActions): llm.FunctionTool {
  return llm.tool({
    name: action.name,
    description: action.description,
    parameters: action.parameters,
    execute: async (args: { destination?: unknown; summary?: unknown } | undefined) => {
      const destination = action.destinations?.find((each) => each.name === args?.destination);
      if (!destination) throw new llm.ToolError('There is no such destination: choose one of those listed.');
      if (destination.message) actions.say(destination.message);
      const summary = typeof args?.summary === 'string' ? args.summary : undefined;
      const result = await call.transfer(destination.name, summary).catch((error: unknown) => {
        throw new llm.ToolError(refusal(error));
      });
      if (result.status === 'transferred') {
        actions.end('transferred');
        return 'The caller has been transferred; the call is over for you.';
      }
      return (
        `The transfer did not go through: ${result.message ?? 'it could not be connected.'} ` +
        'Tell the caller, and offer to help otherwise.'
      );
    },
  });
}

function endCallTool(action: SessionAction, actions: CallActions): llm.FunctionTool {
  return llm.tool({
    name: action.name,
    description: action.description,
    parameters: action.parameters,
    execute: async () => {
      if (action.message) actions.say(action.message);
      actions.end('assistant_hangup');
      return 'The call is ending.';
    },
  });
}

function dtmfTool(action: SessionAction, actions: CallActions): llm.FunctionTool {
  return llm.tool({
    name: action.name,
    description: action.description,
    parameters: action.parameters,
    execute: async (args: { digits?: unknown } | undefined) => {
      const digits = String(args?.digits ?? '');
      if (!DTMF_DIGITS.test(digits)) throw new llm.ToolError('Only the keys 0-9, * and # can be pressed.');
      await actions.pressKeys(digits);
      return `Pressed ${digits}.`;
    },
  });
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
