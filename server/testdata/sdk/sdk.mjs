// Drives `deepagents serve` with the official LangGraph JavaScript SDK, as
// its users do. Usage: node sdk.mjs URL VERSION, where VERSION is an SDK
// installed here under the alias sdk-VERSION (see package.json). The
// server's model is replay:inline: every thread's first message is its
// script. Exits non-zero on the first failed check.
import assert from "node:assert/strict";

const [, , url, version] = process.argv;
const { Client } = await import(`sdk-${version}`);
// The Deep Agents UI sends an empty key; the server must accept it.
const client = new Client({ apiUrl: url, defaultHeaders: { "X-Api-Key": "" } });
const modes = ["values", "messages-tuple"];
const script = (turns) => ({ messages: [{ type: "human", content: JSON.stringify({ turns }) }] });
const writeReport = { tool_calls: [{ name: "write_file", args: { file_path: "/report.md", content: "# Report" } }] };

async function collect(gen) {
  const out = [];
  for await (const part of gen) out.push(part);
  return out;
}

function step(name) {
  console.log(`${version}: ${name}`);
}

step("assistants");
const found = await client.assistants.search({ graphId: "deepagent", limit: 100 });
assert.equal(found.length, 1);
assert.equal(found[0].metadata.created_by, "system");
assert.equal((await client.assistants.get(found[0].assistant_id)).graph_id, "deepagent");

step("stream with todos and an approval");
const thread = await client.threads.create();
let created;
const parts = await collect(
  client.runs.stream(thread.thread_id, "deepagent", {
    input: script([
      { content: "Planning.", tool_calls: [{ name: "write_todos", args: { todos: [{ content: "Write report", status: "in_progress" }] } }] },
      writeReport,
      { content: "Done." },
    ]),
    streamMode: modes,
    streamResumable: true,
    onDisconnect: "continue",
    onRunCreated: (meta) => {
      created = meta;
    },
  }),
);
assert.equal(parts[0].event, "metadata");
assert.equal(created?.thread_id, thread.thread_id);
assert.equal(parts[0].data.run_id, created.run_id);
for (const p of parts.filter((p) => p.event === "messages")) {
  assert.equal(p.data.length, 2, "a messages event is a 2-tuple");
  assert.ok(p.data[0].id, "a streamed message has an id");
}
const values = parts.filter((p) => p.event === "values");
const interrupt = values.at(-1).data.__interrupt__;
assert.equal(interrupt.length, 1);
assert.equal(interrupt[0].value.action_requests[0].name, "write_file");
assert.deepEqual(interrupt[0].value.review_configs[0].allowedDecisions, ["approve", "edit", "reject"]);
const paused = values.at(-2).data;
assert.deepEqual(paused.todos, [{ content: "Write report", status: "in_progress" }]);
assert.equal(paused.messages.at(-1).tool_calls[0].name, "write_file");
assert.equal((await client.threads.get(thread.thread_id)).status, "interrupted");
const head = await client.threads.getState(thread.thread_id);
assert.equal(head.next.length, 1);
assert.equal(head.tasks[0].interrupts.length, 1);

step("resume: approve");
const resumed = await collect(
  client.runs.stream(thread.thread_id, "deepagent", {
    command: { resume: { decisions: [{ type: "approve" }] } },
    streamMode: modes,
    checkpoint: head.checkpoint, // as SDK 1.0.3 sends it with history on
  }),
);
const done = resumed.filter((p) => p.event === "values").at(-1).data;
assert.deepEqual(done.files["/report.md"].content, ["# Report"]);
assert.equal(done.messages.at(-1).content, "Done.");
assert.equal((await client.threads.get(thread.thread_id)).status, "idle");
assert.equal((await client.threads.getState(thread.thread_id)).next.length, 0);

for (const [decision, want] of [
  [{ type: "edit", edited_action: { name: "write_file", args: { file_path: "/report.md", content: "edited" } } }, ["edited"]],
  [{ type: "reject", message: "not now" }, undefined],
]) {
  step(`resume: ${decision.type}`);
  const t = await client.threads.create();
  const before = await client.runs.wait(t.thread_id, "deepagent", { input: script([writeReport, { content: "ok" }]) });
  assert.equal(before.__interrupt__.length, 1);
  const after = await client.runs.wait(t.thread_id, "deepagent", { command: { resume: { decisions: [decision] } } });
  assert.deepEqual(after.files["/report.md"]?.content, want);
  assert.equal(after.messages.at(-1).content, "ok");
}

step("history");
const history = await client.threads.getHistory(thread.thread_id, { limit: 10 });
assert.ok(history.length >= 3, `history has ${history.length} states`);
for (let i = 0; i + 1 < history.length; i++) {
  assert.equal(history[i].parent_checkpoint.checkpoint_id, history[i + 1].checkpoint.checkpoint_id);
}
assert.equal(history[0].next.length, 0);
assert.equal((await client.threads.getHistory(thread.thread_id, { limit: 1 })).length, 1);

step("thread search");
const list = await client.threads.search({ limit: 20, offset: 0, sortBy: "updated_at", sortOrder: "desc" });
assert.equal(list.length, 3);
assert.ok(list.every((t) => t.values && t.values.messages.length > 0));
for (let i = 0; i + 1 < list.length; i++) assert.ok(list[i].updated_at >= list[i + 1].updated_at);
assert.equal((await client.threads.search({ status: "interrupted" })).length, 0);
// threads.count (SDK 1.4 and later): POST /threads/count, the search's filters.
if (client.threads.count) {
  assert.equal(await client.threads.count({}), 3);
  assert.equal(await client.threads.count({ status: "interrupted" }), 0);
}

step("join a running run, rejoin with Last-Event-ID, cancel");
const slow = await client.threads.create();
const run = await client.runs.create(slow.thread_id, "deepagent", {
  input: script([{ content: "thinking", delay_ms: 60000 }]),
  streamMode: modes,
});
step("a second run on a busy thread is refused");
await assert.rejects(
  client.runs.create(slow.thread_id, "deepagent", { input: script([{ content: "x" }]) }),
  (err) => err.status === 422,
);
const seen = [];
for await (const p of client.runs.joinStream(slow.thread_id, run.run_id, { lastEventId: "-1" })) {
  seen.push(p);
  if (p.event === "messages") break;
}
assert.equal(seen[0].event, "metadata");
assert.equal(seen[1].event, "values");
const again = [];
for await (const p of client.runs.joinStream(slow.thread_id, run.run_id, { lastEventId: seen[1].id })) {
  again.push(p);
  break;
}
assert.equal(again[0].id, seen[2].id, "a rejoined stream goes on after Last-Event-ID");
assert.equal(again[0].event, seen[2].event);

await client.runs.cancel(slow.thread_id, run.run_id, true);
assert.equal((await client.runs.get(slow.thread_id, run.run_id)).status, "interrupted");
assert.notEqual((await client.threads.get(slow.thread_id)).status, "busy");

console.log(`${version}: ok`);

// With a second server on the same database: a run started through one is
// read, joined and cancelled through the other.
const other = process.argv[4];
if (other) {
  step("two replicas: a run started on one, joined and cancelled through the other");
  const b = new Client({ apiUrl: other, defaultHeaders: { "X-Api-Key": "" } });
  const t = await client.threads.create();
  const r = await client.runs.create(t.thread_id, "deepagent", { input: script([{ content: "thinking", delay_ms: 60000 }]), streamMode: modes });
  assert.equal((await b.threads.get(t.thread_id)).thread_id, t.thread_id);
  const joined = [];
  for await (const p of b.runs.joinStream(t.thread_id, r.run_id, { lastEventId: "-1" })) {
    joined.push(p);
    if (p.event === "messages") break;
  }
  assert.equal(joined[0].event, "metadata");
  assert.equal((await b.runs.get(t.thread_id, r.run_id)).status, "running");
  await assert.rejects(b.runs.create(t.thread_id, "deepagent", { input: script([{ content: "x" }]) }), (err) => err.status === 422);
  await b.runs.cancel(t.thread_id, r.run_id, true);
  assert.equal((await client.runs.get(t.thread_id, r.run_id)).status, "interrupted");
  const after = await b.runs.wait(t.thread_id, "deepagent", { input: script([{ content: "on the other replica" }]) });
  assert.equal(after.messages.at(-1).content, "on the other replica");
  console.log(`${version}: replicas ok`);
}
