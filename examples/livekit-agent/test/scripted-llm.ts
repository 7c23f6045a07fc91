import { DEFAULT_API_CONNECT_OPTIONS, llm } from '@livekit/agents';

/** What the model is asked: the conversation so far and the tools it is offered. */
export interface ScriptedRequest {
  chatCtx: llm.ChatContext;
  tools: Record<string, llm.FunctionTool>;
  toolChoice?: llm.ToolChoice;
}

/** What the model answers: text, function calls, or both. */
export interface ScriptedAnswer {
  text?: string;
  toolCalls?: { name: string; args: Record<string, unknown> }[];
}

/**
 * A model for tests: the framework's LLM interface, answering each request with the next step of a script, and
 * remembering every request. A request past the end of the script fails the test that made it.
 */
export class ScriptedLLM extends llm.LLM {
  readonly requests: ScriptedRequest[] = [];

  constructor(private readonly script: ((request: ScriptedRequest) => ScriptedAnswer)[]) {
    super();
  }

  label(): string {
    return 'scripted';
  }

  chat({ chatCtx, toolCtx, connOptions, toolChoice }: Parameters<llm.LLM['chat']>[0]): llm.LLMStream {
    const request = { chatCtx, tools: llm.toToolContext(toolCtx)?.functionTools ?? {}, toolChoice };
    this.requests.push(request);
    const step = this.script[this.requests.length - 1];
    if (!step) throw new Error(`The script has no answer for request ${this.requests.length}`);
    return new ScriptedStream(
      this,
      { chatCtx, toolCtx, connOptions: connOptions ?? DEFAULT_API_CONNECT_OPTIONS },
      step(request),
    );
  }

  /** The last output of a function call in the conversation, as the model is given it. */
  static lastToolOutput(request: ScriptedRequest): string {
    const output = request.chatCtx.items.findLast((item) => item.type === 'function_call_output');
    if (!output) throw new Error('No function call output in the conversation');
    return output.output;
  }
}

class ScriptedStream extends llm.LLMStream {
  constructor(
    model: llm.LLM,
    params: ConstructorParameters<typeof llm.LLMStream>[1],
    private readonly answer: ScriptedAnswer,
  ) {
    super(model, params);
  }

  protected async run(): Promise<void> {
    if (this.answer.text) this.queue.put({ id: 'scripted', delta: { role: 'assistant', content: this.answer.text } });
    const toolCalls = (this.answer.toolCalls ?? []).map((call, index) =>
      llm.FunctionCall.create({ callId: `call_${index}`, name: call.name, args: JSON.stringify(call.args) }),
    );
    if (toolCalls.length > 0) this.queue.put({ id: 'scripted', delta: { role: 'assistant', toolCalls } });
  }
}
