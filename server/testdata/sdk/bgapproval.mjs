// A background subagent's request for approval on its parent thread, with
// the official LangGraph JavaScript SDK: the thread reads interrupted, its
// interrupts and its state's tasks carry the request (interrupt id
// bg:TASK_ID), a wrong answer is refused, and runs.wait with
// command.resume approves it; the main agent's next run collects the
// subagent's write. Usage: node bgapproval.mjs URL VERSION (see sdk.mjs).
// The server's model is replay:inline: every human message (and every
// background task's description) is the script of its answer. Exits
// non-zero on the first failed check.
import assert from "node:assert/strict";

const [, , url, version] = process.argv;
const { Client } = await import(`sdk-${version}`);
const client = new Client({ apiUrl: url });
const script = (...turns) => JSON.stringify({ turns });
const say = (...turns) => ({ messages: [{ type: "human", content: script(...turns) }] });
const call = (name, args) => ({ tool_calls: [{ name, args }] });

function step(name) {
  console.log(`${version}: ${name}`);
}

step("a run starts a background writer, which stops to ask");
const writer = script(call("write_file", { file_path: "/note.txt", content: "hello from the writer\n" }), { content: "note written" });
const thread = await client.threads.create();
const tid = thread.thread_id;
const out = await client.runs.wait(tid, "deepagent", {
  input: say(
    call("start_async_task", { description: writer, subagent_type: "writer" }),
    call("wait_async_task", { task_id: "task-1", timeout: 2 }),
    { content: "the writer waits for your approval", expect: { last_message_contains: ['"status":"awaiting_approval"'] } },
  ),
});
assert.equal(out.messages.at(-1).content, "the writer waits for your approval");
assert.equal(out.__interrupt__?.[0]?.id, "bg:task-1");

step("the parent thread shows the request");
const checkRequest = (irq, where) => {
  assert.equal(irq.id, "bg:task-1", where);
  const [req] = irq.value.action_requests;
  assert.equal(req.name, "write_file", where);
  assert.equal(req.args.file_path, "/note.txt", where);
  assert.equal(req.task_id, "task-1", where);
  assert.equal(req.subagent, "writer", where);
  assert.match(req.description, /^Background task task-1 \(subagent writer/, where);
  assert.equal(irq.value.review_configs[0].actionName, "write_file", where);
};
const got = await client.threads.get(tid);
assert.equal(got.status, "interrupted");
checkRequest(got.interrupts["bg:task-1"][0], "thread.interrupts");
const state = await client.threads.getState(tid);
assert.deepEqual(state.next, ["background_task"]);
assert.equal(state.tasks.length, 1);
checkRequest(state.tasks.at(-1).interrupts.at(-1), "state.tasks");
const waiting = await client.threads.search({ status: "interrupted" });
assert.deepEqual(
  waiting.map((t) => t.thread_id),
  [tid],
);

step("a wrong answer is refused, and the request still waits");
await assert.rejects(
  client.runs.wait(tid, "deepagent", { command: { resume: { "bg:task-9": { decisions: [{ type: "approve" }] } } } }),
  /422|bg:task-9/,
);
assert.equal((await client.threads.get(tid)).status, "interrupted");

step("runs.wait with command.resume approves it");
const resumed = await client.runs.wait(tid, "deepagent", { command: { resume: { decisions: [{ type: "approve" }] } } });
assert.equal(resumed.__interrupt__, undefined);
assert.equal((await client.threads.get(tid)).status, "idle");
assert.deepEqual((await client.threads.getState(tid)).tasks, []);

step("the main agent collects the write");
const done = await client.runs.wait(tid, "deepagent", {
  input: say(call("wait_async_task", { task_id: "task-1" }), {
    content: "the note is written",
    expect: { last_message_contains: ['"status":"success"', "note written"] },
  }),
});
assert.equal(done.messages.at(-1).content, "the note is written");
assert.ok(done.files["/note.txt"], "the approved file is in the thread's files");
step("ok");
