// Time travel with the official LangGraph JavaScript SDK, as its users do
// it: paging through a thread's history with limit and before, runs from an
// earlier checkpoint (checkpointId and checkpoint), and a state update that
// forks. Usage: node timetravel.mjs URL VERSION (see sdk.mjs). The server's
// model is replay:inline: every human message is the script of its answer.
// Exits non-zero on the first failed check.
import assert from "node:assert/strict";

const [, , url, version] = process.argv;
const { Client } = await import(`sdk-${version}`);
const client = new Client({ apiUrl: url });
const say = (text) => ({ messages: [{ type: "human", content: JSON.stringify({ turns: [{ content: text }] }) }] });
const answers = (values) => values.messages.filter((m) => m.type === "ai").map((m) => m.content);
const idOf = (state) => state.checkpoint.checkpoint_id;
const range = (from, to) => Array.from({ length: to - from + 1 }, (_, i) => `answer ${from + i}`);

function step(name) {
  console.log(`${version}: ${name}`);
}

// walk pages through the whole history, limit states at a time, with
// before = the oldest checkpoint of the page before (as the SDK types it,
// a config), and returns the checkpoint IDs in the order seen.
async function walk(threadId, limit) {
  const seen = [];
  let before;
  for (let n = 0; n < 1000; n++) {
    const page = await client.threads.getHistory(threadId, { limit, before });
    assert.ok(page.length <= limit, `a page of ${page.length} states, limit ${limit}`);
    if (page.length === 0) return seen;
    seen.push(...page.map(idOf));
    before = { configurable: { checkpoint_id: idOf(page.at(-1)) } };
  }
  assert.fail("paging never ends");
}

step("a thread of more than 10 checkpoints");
const thread = await client.threads.create();
const tid = thread.thread_id;
const heads = [];
for (let i = 1; i <= 7; i++) {
  const out = await client.runs.wait(tid, "deepagent", { input: say(`answer ${i}`) });
  assert.deepEqual(answers(out), range(1, i));
  heads.push(idOf(await client.threads.getState(tid)));
}
let all = await client.threads.getHistory(tid, { limit: 1000 });
assert.ok(all.length > 10, `${all.length} checkpoints`);
assert.equal(idOf(all[0]), heads.at(-1));
for (let i = 0; i + 1 < all.length; i++) {
  assert.equal(all[i].parent_checkpoint.checkpoint_id, idOf(all[i + 1]));
}
assert.equal(all.at(-1).parent_checkpoint, null);

step("getHistory: the default limit and paging with before");
assert.equal((await client.threads.getHistory(tid)).length, 10);
for (const limit of [1, 4, 10]) {
  const seen = await walk(tid, limit);
  assert.equal(new Set(seen).size, seen.length, `limit ${limit}: a checkpoint seen twice`);
  assert.deepEqual(seen, all.map(idOf), `limit ${limit}`);
}
// before as a checkpoint object (what a client holding a state has).
const page = await client.threads.getHistory(tid, { limit: 3, before: all[2].checkpoint });
assert.deepEqual(page.map(idOf), all.slice(3, 6).map(idOf));
// checkpoint keeps that checkpoint, as LangGraph does.
const one = await client.threads.getHistory(tid, { checkpoint: { checkpoint_id: heads[3], checkpoint_ns: "" } });
assert.deepEqual(one.map(idOf), [heads[3]]);

step("a run from an earlier checkpoint (checkpointId)");
let out = await client.runs.wait(tid, "deepagent", { input: say("answer 8"), checkpointId: heads[2] });
assert.deepEqual(answers(out), [...range(1, 3), "answer 8"]);
let head = await client.threads.getState(tid);
assert.deepEqual(answers(head.values), [...range(1, 3), "answer 8"]);
// The new branch goes back to heads[2] without passing the states after it.
all = await client.threads.getHistory(tid, { limit: 1000 });
const byId = new Map(all.map((s) => [idOf(s), s]));
let cur = idOf(head);
while (cur !== heads[2]) {
  assert.ok(!heads.slice(3).includes(cur), `the new branch passes through ${cur}`);
  cur = byId.get(cur).parent_checkpoint?.checkpoint_id;
  assert.ok(cur, "the new branch does not reach the checkpoint it started from");
}
// The abandoned branch stays: loadable by ID and by checkpoint object, and
// in the history, which pages through both branches once.
const old = await client.threads.getState(tid, heads[6]);
assert.deepEqual(answers(old.values), range(1, 7));
const oldByObject = await client.threads.getState(tid, { checkpoint_id: heads[6], checkpoint_ns: "" });
assert.equal(idOf(oldByObject), heads[6]);
assert.ok(byId.has(heads[6]));
assert.deepEqual(await walk(tid, 4), all.map(idOf));

step("a run from an earlier checkpoint (checkpoint)");
out = await client.runs.wait(tid, "deepagent", {
  input: say("answer 9"),
  checkpoint: { checkpoint_ns: "", checkpoint_id: heads[0], checkpoint_map: null },
});
assert.deepEqual(answers(out), ["answer 1", "answer 9"]);

step("a state update that forks");
const updated = await client.threads.updateState(tid, { values: { files: { "/x.txt": "x" } }, checkpointId: heads[1] });
head = await client.threads.getState(tid);
assert.equal(idOf(head), updated.checkpoint.checkpoint_id);
assert.equal(head.parent_checkpoint.checkpoint_id, heads[1]);
assert.deepEqual(answers(head.values), range(1, 2));
assert.ok(head.values.files["/x.txt"], "the update's file");
// And a run continues from there.
out = await client.runs.wait(tid, "deepagent", { input: say("answer 10") });
assert.deepEqual(answers(out), [...range(1, 2), "answer 10"]);
assert.ok(out.files["/x.txt"]);

console.log(`${version}: ok`);
