// The JavaScript DeepAgents side of bench/compare: createDeepAgent with its
// default (state) backend, driven by a scripted chat model through the
// workload of bench/workload (same calls, built here in JavaScript).
//
//   node driver.mjs N               run N tool steps, print one JSON result line
//   node driver.mjs N --checkpoint  the same with LangGraph's MemorySaver and a thread_id
//   node driver.mjs N --dump        print the workload's calls, one JSON object per line
//
// The result line: {"impl","n","checkpoint","seconds","steps_per_s","max_rss_mb"};
// seconds covers the invoke call only (the agent is built before).
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createDeepAgent } from "deepagents";

const FILES_PER_DIR = 10;
const FINAL = "done";
const dir = (w) => `/d${Math.floor(w / FILES_PER_DIR)}`;
const path = (w) => `${dir(w)}/f${w}.txt`;
const content = (w) => `file ${w}: the quick brown fox jumps over the lazy dog\n`;

// call returns step i's tool call (see bench/workload/workload.go).
function call(i) {
  const w = Math.floor(i / 3);
  const id = `call_${i}`;
  switch (i % 3) {
    case 0: return { id, name: "write_file", args: { file_path: path(w), content: content(w) } };
    case 1: return { id, name: "read_file", args: { file_path: path(w) } };
    default: return { id, name: "ls", args: { path: dir(w) } };
  }
}

const usage = { input_tokens: 100, output_tokens: 10, total_tokens: 110 };

// ScriptedModel answers each call with the next precomputed AIMessage.
class ScriptedModel extends BaseChatModel {
  constructor(turns) {
    super({});
    this.turns = turns;
    this.next = 0;
  }
  _llmType() { return "scripted"; }
  // A context window so large that summarization never triggers.
  get profile() { return { maxInputTokens: 2 ** 40, toolCalling: true }; }
  bindTools() { return this; }
  async _generate() {
    if (this.next >= this.turns.length) throw new Error(`scripted model called more than ${this.turns.length} times`);
    const message = this.turns[this.next++];
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

function turns(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const c = call(i);
    out.push(new AIMessage({ content: "", tool_calls: [{ ...c, type: "tool_call" }], usage_metadata: usage }));
  }
  out.push(new AIMessage({ content: FINAL, usage_metadata: usage }));
  return out;
}

// check mirrors workload.Check: one tool result per step, no errors, and the
// last read and listing show what was written.
function check(n, messages) {
  let results = 0, lastRead = "", lastLs = "";
  for (const m of messages) {
    if (!ToolMessage.isInstance(m)) continue;
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    if (m.status === "error" || text.startsWith("Error")) throw new Error(`tool ${m.name} (${m.tool_call_id}) failed: ${text}`);
    results++;
    if (m.name === "read_file") lastRead = text;
    if (m.name === "ls") lastLs = text;
  }
  if (results !== n) throw new Error(`${results} tool results, want ${n}`);
  if (n >= 2) {
    const want = `file ${Math.floor((n - 2) / 3)}:`;
    if (!lastRead.includes(want)) throw new Error(`last read_file result ${JSON.stringify(lastRead)} does not contain ${want}`);
  }
  if (n >= 3) {
    const want = `f${Math.floor((n - 3) / 3)}.txt`;
    if (!lastLs.includes(want)) throw new Error(`last ls result ${JSON.stringify(lastLs)} does not contain ${want}`);
  }
  const last = messages[messages.length - 1];
  if (!AIMessage.isInstance(last) || last.content !== FINAL) throw new Error("the run did not end with the final answer");
}

async function main() {
  const args = process.argv.slice(2);
  const n = Number.parseInt(args[0], 10);
  if (!Number.isInteger(n) || n < 0) {
    console.error("usage: node driver.mjs N [--checkpoint] [--dump]");
    process.exit(2);
  }
  if (args.includes("--dump")) {
    const lines = [];
    for (let i = 0; i < n; i++) lines.push(JSON.stringify(call(i)));
    lines.push(JSON.stringify({ content: FINAL }));
    process.stdout.write(lines.join("\n") + "\n");
    return;
  }
  const checkpoint = args.includes("--checkpoint");
  const model = new ScriptedModel(turns(n));
  const agent = createDeepAgent({ model, ...(checkpoint && { checkpointer: new MemorySaver() }) });
  const config = { recursionLimit: 10 * n + 100, ...(checkpoint && { configurable: { thread_id: "bench" } }) };

  const start = performance.now();
  const result = await agent.invoke({ messages: [new HumanMessage("go")] }, config);
  const seconds = (performance.now() - start) / 1000;

  check(n, result.messages);
  if (model.next !== n + 1) throw new Error(`model called ${model.next} times, want ${n + 1}`);
  process.stdout.write(JSON.stringify({
    impl: "js", n, checkpoint, seconds, steps_per_s: n / seconds,
    max_rss_mb: process.resourceUsage().maxRSS / 1024,
  }) + "\n");
}

main().catch((err) => {
  console.error(err?.stack ?? String(err));
  process.exit(1);
});
