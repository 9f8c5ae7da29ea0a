// The store and crons with the official LangGraph JavaScript SDK: items
// put, read, searched, listed by namespace and deleted; crons created
// (stateless and on a thread), searched, counted and deleted, and a firing
// of the thread's cron seen as a run. Usage: node storecrons.mjs URL
// VERSION (see sdk.mjs). The server's scheduler moves a minute at each of
// its ticks, so a cron created at "* * * * *" fires at once. Exits non-zero
// on the first failed check.
import assert from "node:assert/strict";

const [, , url, version] = process.argv;
const { Client } = await import(`sdk-${version}`);
const client = new Client({ apiUrl: url });
const say = (text) => ({ messages: [{ type: "human", content: JSON.stringify({ turns: [{ content: text }] }) }] });

function step(name) {
  console.log(`${version}: ${name}`);
}

step("store: put, get, search, list namespaces, delete");
await client.store.putItem(["users", "u1", "prefs"], "theme", { color: "dark" });
await client.store.putItem(["users", "u2"], "theme", { color: "light" });
const item = await client.store.getItem(["users", "u1", "prefs"], "theme");
assert.deepEqual(item.namespace, ["users", "u1", "prefs"]);
assert.equal(item.key, "theme");
assert.deepEqual(item.value, { color: "dark" });
assert.ok(item.createdAt && item.updatedAt, "times");
assert.equal(await client.store.getItem(["users", "u1", "prefs"], "nope"), null);
const found = await client.store.searchItems(["users"], { filter: { color: "light" } });
assert.deepEqual(found.items.map((i) => i.namespace), [["users", "u2"]]);
assert.equal((await client.store.searchItems(["users"])).items.length, 2);
const { namespaces } = await client.store.listNamespaces({ prefix: ["users"], maxDepth: 2 });
assert.deepEqual(namespaces, [["users", "u1"], ["users", "u2"]]);
await client.store.deleteItem(["users", "u2"], "theme");
assert.equal(await client.store.getItem(["users", "u2"], "theme"), null);
await assert.rejects(client.store.searchItems(["deepagents", "server"]), /403|reserved/);

step("crons: create, search, count");
const stateless = await client.crons.create("deepagent", { schedule: "0 9 * * *", input: say("morning"), enabled: false, metadata: { kind: "daily" } });
assert.ok(stateless.cron_id);
assert.equal(stateless.schedule, "0 9 * * *");
// 1.0.3 does not send enabled: its cron is enabled, due at 9:00 only.
assert.equal(stateless.enabled, version === "1.0.3");
const thread = await client.threads.create();
const onThread = await client.crons.createForThread(thread.thread_id, "deepagent", { schedule: "* * * * *", input: say("tick") });
assert.equal(onThread.thread_id, thread.thread_id);
assert.ok(onThread.next_run_date);
if (version !== "1.0.3") {
  // 1.0.3 sends no metadata filter.
  const byMeta = await client.crons.search({ metadata: { kind: "daily" } });
  assert.deepEqual(byMeta.map((c) => c.cron_id), [stateless.cron_id]);
}
const byThread = await client.crons.search({ threadId: thread.thread_id });
assert.deepEqual(byThread.map((c) => c.cron_id), [onThread.cron_id]);
if (client.crons.count) assert.equal(await client.crons.count({ assistantId: "deepagent" }), 2);

step("crons: the thread's cron fires");
let runs = [];
for (let i = 0; i < 600 && !runs.some((r) => r.status === "success"); i++) {
  runs = await client.runs.list(thread.thread_id);
  await new Promise((r) => setTimeout(r, 50));
}
assert.ok(runs.some((r) => r.status === "success"), `no run of the cron: ${JSON.stringify(runs)}`);
// The scheduler goes on ticking, so a later firing may have begun by now:
// its question may be the last message, but the first firing's answer is there.
const state = await client.threads.getState(thread.thread_id);
assert.ok(state.values.messages.some((m) => m.type === "ai" && m.content === "tick"), `no answer of the cron: ${JSON.stringify(state.values.messages)}`);

step("crons: delete");
await client.crons.delete(onThread.cron_id);
await client.crons.delete(stateless.cron_id);
assert.deepEqual(await client.crons.search(), []);
await assert.rejects(client.crons.delete(stateless.cron_id), /404|not found/);
console.log(`${version}: ok`);
