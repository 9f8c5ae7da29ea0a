// Drives the server's /mcp with the official MCP TypeScript SDK, as an MCP
// host does. Usage: node mcp.mjs URL KEY [URL2], KEY the API key ("" for
// none), sent as X-Api-Key. With URL2 (another replica on the same
// database) the decision of the approval goes through it: /mcp is
// stateless, so any replica continues a thread. The server's model is
// replay:inline: every task is its thread's script. Exits non-zero with
// the failed check's message on the first one that fails.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [, , url, key, url2 = url] = process.argv;
const headers = key ? { "X-Api-Key": key } : {};
const script = (...turns) => JSON.stringify({ turns });

function step(name) {
  console.log(`mcp: ${name}`);
}

async function connect(base, hdrs = headers) {
  const client = new Client({ name: "host", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers: hdrs } }));
  return client;
}

// api calls the LangGraph API of the same server.
async function api(base, path) {
  const res = await fetch(new URL(path, base), { headers });
  assert.equal(res.status, 200, `GET ${path}: ${res.status} ${await res.clone().text()}`);
  return res.json();
}

async function waitFor(what, cond) {
  const deadline = Date.now() + 10_000;
  while (!(await cond())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function runStatus(base, threadId) {
  const res = await fetch(new URL(`/threads/${threadId}/runs`, base), { headers });
  if (res.status !== 200) return "";
  const runs = await res.json();
  return runs.length === 1 ? runs[0].status : "";
}

try {
  if (key) {
    step("refused without the key");
    await assert.rejects(connect(url, {}), /401|Unauthorized/);
  }

  const client = await connect(url);

  step("listTools");
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === "deepagent");
  assert.ok(tool, `no tool deepagent in ${JSON.stringify(tools.map((t) => t.name))}`);
  for (const field of ["task", "thread_id", "decision", "message"]) {
    assert.ok(tool.inputSchema.properties[field], `input schema lacks ${field}: ${JSON.stringify(tool.inputSchema)}`);
  }
  assert.equal(tool.outputSchema.properties.pending.items.properties.args.type, "object");

  step("callTool: a task to its answer, with progress");
  const progress = [];
  const done = await client.callTool(
    {
      name: "deepagent",
      arguments: {
        task: script(
          { content: "Planning.", tool_calls: [{ name: "write_todos", args: { todos: [{ content: "Write", status: "in_progress" }] } }] },
          { content: "Done." },
        ),
      },
    },
    undefined,
    { onprogress: (p) => progress.push(p.message) },
  );
  assert.ok(!done.isError, `an error: ${JSON.stringify(done)}`);
  assert.equal(done.structuredContent.status, "completed");
  assert.equal(done.structuredContent.answer, "Done.");
  const threadId = done.structuredContent.thread_id;
  assert.ok(threadId, "no thread_id");
  assert.match(done.content[0].text, /Done\.[\s\S]*\[thread_id: /);
  assert.ok(progress.includes("calling write_todos"), `progress ${JSON.stringify(progress)}`);
  assert.ok(progress.includes("todos: 0 of 1 done"), `progress ${JSON.stringify(progress)}`);
  const runs = await api(url, `/threads/${threadId}/runs`);
  assert.equal(runs.length, 1, `runs ${JSON.stringify(runs)}`);
  assert.equal(runs[0].status, "success");

  step("an approval round trip");
  const asked = await client.callTool({
    name: "deepagent",
    arguments: {
      task: script({ tool_calls: [{ name: "write_file", args: { file_path: "/report.md", content: "# Report" } }] }, { content: "Written." }),
    },
  });
  assert.ok(!asked.isError, `an error: ${JSON.stringify(asked)}`);
  assert.equal(asked.structuredContent.status, "interrupted");
  const pending = asked.structuredContent.pending;
  assert.equal(pending.length, 1);
  assert.equal(pending[0].tool, "write_file");
  assert.equal(pending[0].args.file_path, "/report.md");
  const waiting = asked.structuredContent.thread_id;
  // A host may reach another replica for the next call: nothing of the
  // first is needed but the thread.
  const other = url2 === url ? client : await connect(url2);
  const approved = await other.callTool({ name: "deepagent", arguments: { thread_id: waiting, decision: "approve" } });
  assert.ok(!approved.isError, `an error: ${JSON.stringify(approved)}`);
  assert.equal(approved.structuredContent.status, "completed");
  assert.equal(approved.structuredContent.answer, "Written.");
  assert.equal(approved.structuredContent.thread_id, waiting);
  const state = await api(url2, `/threads/${waiting}/state`);
  assert.deepEqual(state.values.files["/report.md"].content, ["# Report"]);
  const nothing = await client.callTool({ name: "deepagent", arguments: { thread_id: waiting, decision: "approve" } });
  assert.ok(nothing.isError, "a decision on a thread that waits on nothing answered");
  assert.match(nothing.content[0].text, /not waiting for decisions/);
  if (other !== client) await other.close();

  step("a closed client cancels its call's run");
  const slow = client
    .callTool({ name: "deepagent", arguments: { task: script({ content: "Slow.", delay_ms: 60000 }), thread_id: "mcp-slow" } })
    .then(
      () => "answered",
      () => "failed",
    );
  await waitFor("the slow run", async () => (await runStatus(url, "mcp-slow")) === "running");
  await client.close();
  assert.equal(await slow, "failed");
  await waitFor("the run cancelled", async () => (await runStatus(url, "mcp-slow")) === "interrupted");
  console.log("mcp: ok");
} catch (err) {
  console.error(`mcp: FAILED: ${err.message}`);
  process.exit(1);
}
