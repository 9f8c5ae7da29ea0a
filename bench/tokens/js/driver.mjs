// The deepagents-js side of bench/tokens: createDeepAgent with its defaults
// (npm deepagents 1.14.1: its state backend, the general-purpose subagent,
// its middleware and the harness profile it picks for the model), the model
// being LangChain's ChatAnthropic or ChatOpenAI pointed at the Go program's
// recording stand-in of the provider's API, which plays the scripted task.
//
//   node driver.mjs < input.json
//
// The input (written by bench/tokens -js): {"provider": "anthropic"|"openai",
// "model", "base_url", "prompt", "files": {path: content}, "time"}.
// The output, one JSON line on stdout: {"final": the agent's last message's
// text, "files": {path: content} of the state at the end, "errors": [the
// text of every tool result that reports an error]}.
import { readFileSync } from "node:fs";
import { ChatAnthropic } from "@langchain/anthropic";
import { ChatOpenAI } from "@langchain/openai";
import { HumanMessage, ToolMessage } from "@langchain/core/messages";
import { createDeepAgent } from "deepagents";

// A streamed completion makes ChatOpenAI estimate its usage with tiktoken,
// whose vocabulary @langchain/core downloads (tiktoken.pages.dev), retrying
// for minutes when offline. The same vocabulary is served from js-tiktoken's
// copy instead. It is client-side bookkeeping only: no request holds it.
const fetch0 = globalThis.fetch;
globalThis.fetch = async (url, init) => {
  const m = /^https:\/\/tiktoken\.pages\.dev\/js\/(\w+)\.json$/.exec(String(url));
  if (!m) return fetch0(url, init);
  const ranks = (await import(`js-tiktoken/ranks/${m[1]}`)).default;
  return new Response(JSON.stringify(ranks));
};

const input = JSON.parse(readFileSync(0, "utf8"));

// text returns a message content's text.
const text = (c) => (typeof c === "string" ? c : c.map((p) => (typeof p === "string" ? p : p.text ?? "")).join(""));

// The stand-ins answer streaming requests only, so the clients stream; they
// do not retry, so that a refused request fails the run. Neither changes
// what a request holds.
function model() {
  switch (input.provider) {
    case "anthropic":
      return new ChatAnthropic({
        model: input.model,
        apiKey: "bench",
        anthropicApiUrl: input.base_url,
        streaming: true,
        maxRetries: 0,
      });
    case "openai": {
      const m = new ChatOpenAI({
        model: input.model,
        apiKey: "bench",
        configuration: { baseURL: input.base_url },
        streaming: true,
        maxRetries: 0,
        // The stand-in speaks Chat Completions, the API the Go client uses.
        useResponsesApi: false,
      });
      return m;
    }
    default:
      throw new Error(`unknown provider ${input.provider}`);
  }
}

// The task's files as deepagents-js's StateBackend keeps them (its v2 file
// format): the content as one string, fixed times so that nothing shown
// depends on when the bench runs.
const files = {};
for (const [path, content] of Object.entries(input.files)) {
  files[path] = { content, mimeType: "text/plain", created_at: input.time, modified_at: input.time };
}

const agent = createDeepAgent({ model: model() });
const result = await agent.invoke(
  { messages: [new HumanMessage(input.prompt)], files },
  { recursionLimit: 1000 },
);

const errors = [];
for (const m of result.messages) {
  if (!ToolMessage.isInstance(m)) continue;
  const t = text(m.content);
  if (m.status === "error" || /^Error/.test(t)) errors.push(`${m.name}: ${t}`);
}
const out = {};
for (const [path, f] of Object.entries(result.files ?? {})) {
  out[path] = Array.isArray(f.content) ? f.content.join("\n") : f.content;
}
const last = result.messages[result.messages.length - 1];
process.stdout.write(JSON.stringify({ final: text(last.content), files: out, errors }) + "\n");
