// Drives the Deep Agents UI in headless Chromium against `deepagents serve`
// (run by ../deep-agents-ui.sh, which builds and starts both):
//
//   node drive.mjs UI_URL API_URL OUT_DIR
//
// It configures the UI for the server, sends a message (a replay:inline
// script: a plan, a file that needs approval, the plan completed, an
// answer), waits for the todos and the approval card, approves, waits for
// the file and the answer, finds the thread in the thread list, and reloads
// the thread from its history. A screenshot is saved at each stage; the
// first check that fails ends the run with a non-zero status.
import { mkdir } from "node:fs/promises";
import puppeteer from "puppeteer-core";

const [, , ui, api, out] = process.argv;
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium";
await mkdir(out, { recursive: true });

const script = {
  turns: [
    {
      content: "I will plan the report first.",
      tool_calls: [{ name: "write_todos", args: { todos: [
        { content: "Draft the report", status: "in_progress" },
        { content: "Review the report", status: "pending" },
      ] } }],
    },
    { content: "Writing the report.", tool_calls: [{ name: "write_file", args: { file_path: "/report.md", content: "# Report\n\nAll systems nominal." } }] },
    {
      tool_calls: [{ name: "write_todos", args: { todos: [
        { content: "Draft the report", status: "completed" },
        { content: "Review the report", status: "completed" },
      ] } }],
    },
    { content: "The report is in /report.md." },
  ],
};

const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
let step = 0;
const page = await browser.newPage();
await page.setViewport({ width: 1400, height: 900 });
const logs = [];
page.on("console", (m) => logs.push(`${m.type()}: ${m.text()}`));
page.on("pageerror", (e) => logs.push(`pageerror: ${e.message}`));

async function shot(name) {
  step++;
  const path = `${out}/${String(step).padStart(2, "0")}-${name}.png`;
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot ${path}`);
}

// waitText waits until the page shows text (a string or a RegExp).
async function waitText(text, timeout = 30000) {
  const re = text instanceof RegExp ? text.source : text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  try {
    await page.waitForFunction((re) => new RegExp(re).test(document.body.innerText), { timeout, polling: 200 }, re);
  } catch (err) {
    await shot("failed");
    throw new Error(`the page never showed ${text}\n--- page text ---\n${await page.evaluate(() => document.body.innerText)}\n--- console ---\n${logs.join("\n")}`);
  }
}

async function clickButton(label) {
  const clicked = await page.evaluate((label) => {
    const b = [...document.querySelectorAll("button")].find((b) => b.innerText.trim().startsWith(label) && !b.disabled);
    if (b) b.click();
    return !!b;
  }, label);
  if (!clicked) {
    await shot("failed");
    throw new Error(`no enabled button ${label}`);
  }
}

try {
  console.log("configure the UI for the server");
  await page.goto(ui, { waitUntil: "networkidle2" });
  await page.evaluate((api) => localStorage.setItem("deep-agent-config", JSON.stringify({ deploymentUrl: api, assistantId: "deepagent" })), api);
  await page.reload({ waitUntil: "networkidle2" });
  await page.waitForSelector("textarea", { timeout: 30000 });
  await shot("configured");

  console.log("send a message; wait for the plan and the approval");
  await page.type("textarea", JSON.stringify(script));
  await page.keyboard.press("Enter");
  await waitText("Writing the report.");
  await waitText(/Task 1 of 2|1 of 2/);
  await waitText("Approve");
  await shot("approval");

  console.log("approve; wait for the file and the answer");
  await clickButton("Approve");
  await waitText("The report is in /report.md.");
  await waitText("Files (State)");
  await waitText("All tasks completed");
  await shot("done");

  console.log("the thread is in the thread list");
  const threadId = new URL(page.url()).searchParams.get("threadId");
  if (!threadId) throw new Error(`no threadId in ${page.url()}`);
  const list = new URL(page.url());
  list.searchParams.set("sidebar", "1");
  await page.goto(list.href, { waitUntil: "networkidle2" });
  await waitText("The report is in /report.md.");
  // The list shows the thread with its first answer as description: the
  // text appears in the list and in the conversation.
  await page.waitForFunction(() => document.body.innerText.split("I will plan the report first.").length > 2, { timeout: 30000 }).catch(async () => {
    await shot("failed");
    throw new Error("the thread list does not show the thread");
  });
  await shot("thread-list");

  console.log("open the file");
  await clickButton("Files (State)");
  await waitText("report.md");
  await shot("files");

  console.log("reload the thread from its history");
  await page.reload({ waitUntil: "networkidle2" });
  await waitText("The report is in /report.md.");
  await waitText("Files (State)");
  await shot("reloaded");
  console.log(`ok: thread ${threadId}`);
} finally {
  await browser.close();
}
