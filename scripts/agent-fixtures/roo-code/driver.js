// Drives the Roo Code CLI in its stdin stream mode (roo --print
// --stdin-prompt-stream --output-format stream-json): it sends each
// prompt of the plan below as an NDJSON command, the next one when the
// CLI reports the previous one's result, and "shutdown" after the last.
// Node built-ins only.
//
//   node driver.js <plan.json> <command> [args...]
//
// plan.json: [{"command": "start"|"message", "taskId"?: "...", "prompt": "..."}]
"use strict";
const { spawn } = require("child_process");
const fs = require("fs");
const readline = require("readline");

const [planFile, cmd, ...args] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
let next = 0;
let failed = false;
let pending = null;

function send(obj) {
  process.stderr.write("driver> " + JSON.stringify(obj) + "\n");
  child.stdin.write(JSON.stringify(obj) + "\n");
}

function sendNext() {
  if (next >= plan.length) {
    send({ command: "shutdown", requestId: "shutdown" });
    return;
  }
  const step = plan[next];
  pending = "req-" + (next + 1);
  next++;
  send({ ...step, requestId: pending });
}

const timer = setTimeout(() => {
  process.stderr.write("driver: timed out\n");
  failed = true;
  child.kill("SIGTERM");
}, Number(process.env.ROO_DRIVER_TIMEOUT || 240) * 1000);

readline.createInterface({ input: child.stdout }).on("line", (line) => {
  let ev;
  try { ev = JSON.parse(line); } catch (e) { process.stderr.write("cli: " + line + "\n"); return; }
  if (process.env.ROO_DRIVER_VERBOSE) process.stderr.write("event " + line.slice(0, 300) + "\n");
  if (ev.type === "system" && ev.subtype === "init" && next === 0) { sendNext(); return; }
  if (ev.type === "control" && ev.subtype === "error") {
    process.stderr.write("driver: control error: " + line + "\n");
    failed = true;
    child.kill("SIGTERM");
    return;
  }
  if (ev.type === "result" && ev.done === true && ev.requestId === pending) {
    process.stderr.write(`driver: ${pending} done: ${String(ev.content || "").slice(0, 120)}\n`);
    pending = null;
    // Let the task settle (the CLI finishes writing its files) first.
    setTimeout(sendNext, 1500);
  }
});

child.on("exit", (code, sig) => {
  clearTimeout(timer);
  if (next < plan.length || pending) failed = true;
  process.stderr.write(`driver: cli exited code=${code} signal=${sig}\n`);
  process.exit(failed ? 1 : 0);
});
