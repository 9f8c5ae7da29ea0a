// Drives `deepagents acp` with the official ACP client
// (@agentclientprotocol/sdk), as an editor would: initialize offering the
// client's file system, a new session, a prompt whose read_file sees the
// client's buffer (which differs from the disk) and whose write_file asks
// permission (allowed) and goes through the client, which saves it, a
// cancelled prompt, and the session loaded by a second process.
// Usage: node drive.mjs BINARY DB WORKSPACE. Exits 1 with what failed.
import { spawn } from "node:child_process";
import { readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [bin, db, dir] = process.argv.slice(2);

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

// The editor's buffers: the text of the files it has open with changes
// not saved, by path; log is its permission requests and file system
// calls, in order.
const real = realpathSync(dir);
const buffers = new Map([[join(real, "buf.txt"), "buffer text\n"]]);
const log = [];

function start(updates, asked) {
  const proc = spawn(bin, ["acp", "--db", db, "--model", "replay:inline"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const stream = acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout));
  const conn = acp
    .client({ name: "drive" })
    .onNotification("session/update", (cx) => {
      updates.push(cx.params.update);
    })
    .onRequest("session/request_permission", (cx) => {
      asked.push(cx.params);
      log.push("permission " + cx.params.toolCall.toolCallId);
      return { outcome: { outcome: "selected", optionId: "allow" } };
    })
    .onRequest("fs/read_text_file", (cx) => {
      log.push("read " + cx.params.path);
      const text = buffers.get(cx.params.path) ?? readFileSync(cx.params.path, "utf8");
      return { content: text };
    })
    .onRequest("fs/write_text_file", (cx) => {
      log.push("write " + cx.params.path);
      // Saved, as editors do: the buffer is the disk's now.
      writeFileSync(cx.params.path, cx.params.content);
      buffers.delete(cx.params.path);
      return {};
    })
    .connect(stream);
  return { proc, agent: conn.agent, conn };
}

async function stop(c) {
  c.proc.stdin.end();
  const code = await new Promise((resolve) => c.proc.on("exit", resolve));
  if (code !== 0) fail(`deepagents acp exited with ${code}`);
}

const updates = [];
const asked = [];
const c = start(updates, asked);
writeFileSync(join(dir, "buf.txt"), "disk text\n");
const init = await c.agent.request("initialize", {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
});
if (!init.agentCapabilities?.loadSession) fail("initialize: no loadSession: " + JSON.stringify(init));

const sess = await c.agent.request("session/new", { cwd: dir, mcpServers: [] });
const script = JSON.stringify({
  turns: [
    { tool_calls: [{ id: "r1", name: "read_file", args: { file_path: "/buf.txt" } }] },
    { tool_calls: [{ id: "w1", name: "write_file", args: { file_path: "/note.txt", content: "from node\n" } }] },
    { content: "Wrote note.txt." },
  ],
});
let res = await c.agent.request("session/prompt", {
  sessionId: sess.sessionId,
  prompt: [{ type: "text", text: script }],
});
if (res.stopReason !== "end_turn") fail("prompt: " + JSON.stringify(res));
if (asked.length !== 1 || asked[0].toolCall.toolCallId !== "w1") fail("permission requests: " + JSON.stringify(asked));
if (readFileSync(join(dir, "note.txt"), "utf8") !== "from node\n") fail("note.txt not written");
const kinds = updates.map((u) => u.sessionUpdate + ":" + (u.status ?? ""));
for (const want of ["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed", "agent_message_chunk:"]) {
  if (!kinds.includes(want)) fail(`no ${want} update: ${JSON.stringify(kinds)}`);
}
const read = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "r1" && u.status === "completed");
if (!read?.rawOutput?.content?.includes("buffer text") || read.rawOutput.content.includes("disk text")) fail("read_file did not see the buffer: " + JSON.stringify(read));
const wantLog = ["read " + join(real, "buf.txt"), "permission w1", "write " + join(real, "note.txt")];
if (JSON.stringify(log) !== JSON.stringify(wantLog)) fail("the client was asked " + JSON.stringify(log) + ", want " + JSON.stringify(wantLog));
const diff = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "w1")?.content?.[0];
if (diff?.type !== "diff" || diff.newText !== "from node\n") fail("no diff: " + JSON.stringify(diff));

// Cancel a slow prompt once it has streamed.
updates.length = 0;
const slow = c.agent.request("session/prompt", {
  sessionId: sess.sessionId,
  prompt: [{ type: "text", text: JSON.stringify({ turns: [{ content: "Thinking", delay_ms: 30000 }] }) }],
});
for (let i = 0; !updates.some((u) => u.sessionUpdate === "agent_message_chunk"); i++) {
  if (i > 500) fail("the slow prompt streamed nothing");
  await new Promise((r) => setTimeout(r, 20));
}
await c.agent.notify("session/cancel", { sessionId: sess.sessionId });
res = await slow;
if (res.stopReason !== "cancelled") fail("cancelled prompt: " + JSON.stringify(res));
await stop(c);

// Load the session in another process: the conversation is replayed.
const replayed = [];
const c2 = start(replayed, []);
await c2.agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
await c2.agent.request("session/load", { sessionId: sess.sessionId, cwd: dir, mcpServers: [] });
const texts = replayed.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text);
if (!texts.includes("Wrote note.txt.")) fail("replay: " + JSON.stringify(replayed));
if (!replayed.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "w1")) fail("replay lacks w1: " + JSON.stringify(replayed));
await stop(c2);
console.log("ok");
