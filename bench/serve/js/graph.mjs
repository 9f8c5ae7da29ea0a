// deepagents (npm) with a model that plays the script sent as the thread's
// last human message, as deepagents-go's replay:inline does: the same
// runs, served by @langchain/langgraph-api, for bench/serve.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";

const usage = { input_tokens: 100, output_tokens: 10, total_tokens: 110 };

class InlineModel extends BaseChatModel {
  _llmType() { return "inline"; }
  // A context window so large that summarization never triggers.
  get profile() { return { maxInputTokens: 2 ** 40, toolCalling: true }; }
  bindTools() { return this; }
  async _generate(messages) {
    let last = -1;
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i].getType() === "human") { last = i; break; }
    }
    const text = typeof messages[last]?.content === "string" ? messages[last].content : "";
    const { turns } = JSON.parse(text);
    const k = messages.slice(last + 1).filter((m) => m.getType() === "ai").length;
    const t = turns[k];
    if (!t) throw new Error(`script exhausted at call ${k + 1}`);
    if (t.delay_ms) await new Promise((r) => setTimeout(r, t.delay_ms));
    const tool_calls = (t.tool_calls ?? []).map((c, j) => ({ id: c.id ?? `call_${last}_${k + 1}_${j + 1}`, name: c.name, args: c.args ?? {}, type: "tool_call" }));
    const message = new AIMessage({ content: t.content ?? "", tool_calls, usage_metadata: usage });
    return { generations: [{ text: t.content ?? "", message }] };
  }
}

// DEEPAGENTS_INTERRUPT_ON=write_file,... asks for approval of those tools
// (to drive server/testdata/sdk/sdk.mjs against this reference server).
const interruptOn = Object.fromEntries((process.env.DEEPAGENTS_INTERRUPT_ON ?? "").split(",").filter(Boolean).map((t) => [t, true]));

export const graph = createDeepAgent({ model: new InlineModel({}), interruptOn });
