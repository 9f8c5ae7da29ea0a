// Drives `deepagents acp` with the official ACP client
// (@agentclientprotocol/sdk): a prompt starts a background subagent
// (writer) and ends; the subagent's write_file parks for approval, and
// the agent asks the editor while no prompt runs, naming the subagent and
// its task; the editor allows it, the write happens, and the next prompt
// collects the task's result.
// Usage: node drive_background.mjs BINARY DB WORKSPACE. Exits 1 with what failed.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [bin, db, dir] = process.argv.slice(2);

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

async function until(what, cond) {
  for (let i = 0; !cond(); i++) {
    if (i > 1500) fail("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const updates = [];
const asked = [];
const proc = spawn(bin, ["acp", "--db", db, "--model", "replay:inline"], { stdio: ["pipe", "pipe", "inherit"] });
const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
const conn = acp
  .client({ name: "drive-background" })
  .onNotification("session/update", (cx) => {
    updates.push(cx.params.update);
  })
  .onRequest("session/request_permission", (cx) => {
    asked.push(cx.params);
    return { outcome: { outcome: "selected", optionId: "allow" } };
  })
  .connect(stream);
const agent = conn.agent;

await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
const sess = await agent.request("session/new", { cwd: dir, mcpServers: [] });

const writer = JSON.stringify({
  turns: [
    { tool_calls: [{ id: "wf", name: "write_file", args: { file_path: "/note.txt", content: "from the writer\n" } }] },
    { content: "note written" },
  ],
});
let res = await agent.request("session/prompt", {
  sessionId: sess.sessionId,
  prompt: [{ type: "text", text: JSON.stringify({ turns: [
    { tool_calls: [{ id: "s", name: "start_async_task", args: { description: writer, subagent_type: "writer" } }] },
    { content: "started" },
  ] }) }],
});
if (res.stopReason !== "end_turn") fail("prompt: " + JSON.stringify(res));

await until("the background request", () => asked.some((a) => a.toolCall._meta?.deepagents?.background_task));
const req = asked.find((a) => a.toolCall._meta?.deepagents?.background_task);
const task = req.toolCall._meta.deepagents.background_task;
if (!req.toolCall.title.startsWith(`writer (background task ${task}): write_file /note.txt`)) fail("title: " + req.toolCall.title);
if (!JSON.stringify(req.toolCall.content).includes(`Background task ${task}: subagent writer asks to run write_file.`)) fail("content: " + JSON.stringify(req.toolCall.content));
const ids = req.options.map((o) => o.optionId).join(",");
if (ids !== "allow,allow_always,reject") fail("options: " + ids);

await until("note.txt", () => existsSync(join(dir, "note.txt")));
if (readFileSync(join(dir, "note.txt"), "utf8") !== "from the writer\n") fail("note.txt");
await until("the background call to end", () =>
  updates.some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === req.toolCall.toolCallId && u.status === "completed"));

res = await agent.request("session/prompt", {
  sessionId: sess.sessionId,
  prompt: [{ type: "text", text: JSON.stringify({ turns: [
    { tool_calls: [{ id: "w2", name: "wait_async_task", args: { task_id: task } }] },
    { content: "collected", expect: { last_message_contains: ['"status":"success"', "note written"] } },
  ] }) }],
});
if (res.stopReason !== "end_turn") fail("the collecting prompt: " + JSON.stringify(res));

proc.stdin.end();
const code = await new Promise((resolve) => proc.on("exit", resolve));
if (code !== 0) fail(`deepagents acp exited with ${code}`);
console.log("ok");
