// Drives the A2A endpoints of `deepagents serve` with the official A2A
// JavaScript client (@a2a-js/sdk), as another agent would. Usage: node
// a2a.mjs URL KEY [URL2], URL2 a second server on the same database. The
// server's model is replay:inline: each task's message is its script.
// Exits non-zero on the first failed check.
import assert from "node:assert/strict";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotCancelableError,
  createAuthenticatingFetchWithRetry,
} from "@a2a-js/sdk/client";

const [, , url, key, other] = process.argv;
const deepagentID = "bd9d7831-8cd0-52cf-b4ff-e0a75afee4f5";

// The server's key, sent as the card's security scheme says.
const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ "X-Api-Key": key }),
  shouldRetryWithHeaders: async () => undefined,
});

async function connect(base) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: authFetch }),
    }),
  );
  // LangGraph's path for an assistant's card.
  return factory.createFromUrl(`${base}/.well-known/agent-card.json?assistant_id=deepagent`, "");
}

const script = (...turns) => JSON.stringify({ turns });
const message = (text, more = {}) => ({ kind: "message", role: "user", messageId: crypto.randomUUID(), parts: [{ kind: "text", text }], ...more });
const answer = (task) => task.artifacts?.[0]?.parts?.[0]?.text;
const step = (name) => console.log(`a2a: ${name}`);

step("the card, with the key");
const bare = await fetch(`${url}/.well-known/agent-card.json?assistant_id=deepagent`);
assert.equal(bare.status, 401, "the card without the key");
const client = await connect(url);
const card = await client.getAgentCard();
assert.equal(card.name, "deepagent");
assert.equal(card.url, `${url}/a2a/${deepagentID}`);
assert.equal(card.preferredTransport, "JSONRPC");
assert.equal(card.capabilities.streaming, true);
assert.equal(card.securitySchemes.apiKey.type, "apiKey");
assert.equal(card.securitySchemes.apiKey.name, "X-Api-Key");

step("message/send to the answer");
const done = await client.sendMessage({ message: message(script({ content: "Hello from A2A." })) });
assert.equal(done.kind, "task");
assert.equal(done.status.state, "completed");
assert.equal(answer(done), "Hello from A2A.");
assert.ok(done.contextId);

step("message/stream: the task, working, the steps, the answer, the end");
const events = [];
for await (const ev of client.sendMessageStream({
  message: message(
    script(
      { content: "Planning.", tool_calls: [{ name: "write_todos", args: { todos: [{ content: "Answer", status: "in_progress" }] } }] },
      { content: "Streamed." },
    ),
  ),
})) {
  events.push(ev);
}
assert.equal(events[0].kind, "task");
assert.equal(events[0].status.state, "submitted");
const statuses = events.filter((e) => e.kind === "status-update");
assert.equal(statuses[0].status.state, "working");
const calls = statuses.flatMap((e) => e.status.message?.parts ?? []).filter((p) => p.kind === "data" && p.data.tool_calls);
assert.equal(calls[0].data.tool_calls[0].name, "write_todos");
const plans = statuses.flatMap((e) => e.status.message?.parts ?? []).filter((p) => p.kind === "data" && p.data.todos);
assert.deepEqual(plans[0].data.todos, [{ content: "Answer", status: "in_progress" }]);
const chunks = events.filter((e) => e.kind === "artifact-update");
assert.equal(chunks.map((c) => c.artifact.parts[0].text).join(""), "Streamed.");
assert.equal(chunks.at(-1).lastChunk, true);
assert.equal(events.at(-1).kind, "status-update");
assert.equal(events.at(-1).status.state, "completed");
assert.equal(events.at(-1).final, true);

step("tasks/get");
const got = await client.getTask({ id: events[0].id });
assert.equal(got.status.state, "completed");
assert.equal(answer(got), "Streamed.");
assert.equal(got.contextId, events[0].contextId);

step("input-required, answered on the task");
const writeFile = { tool_calls: [{ name: "write_file", args: { file_path: "/a.md", content: "hello" } }] };
const asked = await client.sendMessage({ message: message(script(writeFile, { content: "Written." })) });
assert.equal(asked.status.state, "input-required");
const question = asked.status.message.parts.find((p) => p.kind === "data");
assert.equal(question.data.action_requests[0].name, "write_file");
const approved = await client.sendMessage({ message: message("approve", { taskId: asked.id, contextId: asked.contextId }) });
assert.equal(approved.id, asked.id);
assert.equal(approved.status.state, "completed");
assert.equal(answer(approved), "Written.");

step("tasks/cancel");
const slow = await client.sendMessage({ message: message(script({ content: "thinking", delay_ms: 60000 })), configuration: { blocking: false } });
assert.ok(["submitted", "working"].includes(slow.status.state), slow.status.state);
const cancelled = await client.cancelTask({ id: slow.id });
assert.equal(cancelled.status.state, "canceled");
await assert.rejects(client.cancelTask({ id: slow.id }), (err) => err instanceof TaskNotCancelableError);

step("tasks/resubscribe");
const watched = await client.sendMessage({ message: message(script({ content: "thinking", delay_ms: 60000 })), configuration: { blocking: false } });
const again = [];
for await (const ev of client.resubscribeTask({ id: watched.id })) {
  again.push(ev);
  if (again.length === 1) await client.cancelTask({ id: watched.id });
}
assert.equal(again[0].kind, "task");
assert.equal(again.at(-1).status.state, "canceled");
assert.equal(again.at(-1).final, true);

console.log("a2a: ok");

// With a second server on the same database: a task started through one
// is read, answered and cancelled through the other.
if (other) {
  step("two replicas");
  const b = await connect(other);
  const waiting = await client.sendMessage({ message: message(script(writeFile, { content: "Written on the other." })) });
  assert.equal((await b.getTask({ id: waiting.id })).status.state, "input-required");
  const answered = await b.sendMessage({ message: message("approve", { taskId: waiting.id }) });
  assert.equal(answered.status.state, "completed");
  assert.equal(answer(await client.getTask({ id: waiting.id })), "Written on the other.");
  const far = await client.sendMessage({ message: message(script({ content: "thinking", delay_ms: 60000 })), configuration: { blocking: false } });
  for (let i = 0; (await b.getTask({ id: far.id })).status.state !== "working"; i++) {
    assert.ok(i < 100, "the task never worked");
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal((await b.cancelTask({ id: far.id })).status.state, "canceled");
  assert.equal((await client.getTask({ id: far.id })).status.state, "canceled");
  console.log("a2a: replicas ok");
}
