// A background subagent's request for approval through A2A, with the
// official A2A JavaScript client (@a2a-js/sdk): the context's task is
// input-required while it waits, a reply that decides nothing is refused,
// "approve" answers it, and the context's next task collects the
// subagent's result. Usage: node a2abg.mjs URL KEY. The server's model is
// replay:inline: each message (and each background task's description) is
// the script of its answer. Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from "@a2a-js/sdk/client";

const [, , url, key] = process.argv;
const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ "X-Api-Key": key }),
  shouldRetryWithHeaders: async () => undefined,
});
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
  }),
);
const client = await factory.createFromUrl(`${url}/.well-known/agent-card.json?assistant_id=deepagent`, "");

const script = (...turns) => JSON.stringify({ turns });
const call = (name, args) => ({ tool_calls: [{ name, args }] });
const message = (text, more = {}) => ({ kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text }], ...more });
const answer = (task) => task.artifacts?.[0]?.parts?.[0]?.text;
const step = (name) => console.log(`a2a background: ${name}`);

step("a task starts a background writer, which stops to ask");
const writer = script(call("write_file", { file_path: "/note.txt", content: "hello from the writer\n" }), { content: "note written" });
const asked = await client.sendMessage({
  message: message(script(
    call("start_async_task", { description: writer, subagent_type: "writer" }),
    call("wait_async_task", { task_id: "task-1" }),
    { content: "The writer waits for your approval." },
  )),
});
assert.equal(asked.kind, "task");
assert.equal(asked.status.state, "input-required");
const text = asked.status.message.parts.filter((p) => p.kind === "text").map((p) => p.text).join("\n");
assert.match(text, /Background task task-1 \(subagent writer/);
const data = asked.status.message.parts.find((p) => p.kind === "data");
assert.equal(data.data.background_tasks[0].interrupt_id, "bg:task-1");
assert.equal(data.data.background_tasks[0].action_requests[0].name, "write_file");
assert.equal((await client.getTask({ id: asked.id })).status.state, "input-required");

step("a reply that decides nothing is refused, and the task still waits");
await assert.rejects(client.sendMessage({ message: message("maybe later", { taskId: asked.id, contextId: asked.contextId }) }));
assert.equal((await client.getTask({ id: asked.id })).status.state, "input-required");

step("approve answers the background task");
const approved = await client.sendMessage({ message: message("approve", { taskId: asked.id, contextId: asked.contextId }) });
assert.equal(approved.id, asked.id);
assert.equal(approved.status.state, "completed");
assert.match(answer(approved), /background task task-1/);

step("the context's next task collects the result");
const next = await client.sendMessage({
  message: message(script(
    call("wait_async_task", { task_id: "task-1" }),
    { content: "Collected.", expect: { last_message_contains: ['"status":"success"', "note written"] } },
  ), { contextId: asked.contextId }),
});
assert.equal(next.status.state, "completed");
assert.equal(answer(next), "Collected.");
console.log("a2a background: ok");
