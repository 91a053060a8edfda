// A scripted OpenAI-compatible model server for generating Qwen Code
// fixtures (scripts/agent-fixtures/qwen-code/run.sh). It replays fixed
// replies from script.json beside it: a list of tasks {"match": "<words of
// a prompt>", "replies": [...]}. A request goes to the task whose match its
// last user message contains (a resumed session sends the earlier prompts
// too), and gets the reply numbered by how many assistant messages follow
// that message, so a rerun of the same prompts gives the same
// conversation. Requests no task matches (the agent's own side questions)
// get a short fixed text. Node built-ins only.
//
//   node server.js <port> [script.json] [logdir]
//
// A reply is {"text": "..."} or {"tool_calls": [{"name": "...",
// "arguments": {...}}], "text": "..."}, either with "reasoning": "..."
// (streamed as reasoning_content). The port it listens on is printed
// on stdout (0: any free port).
"use strict";
const http = require("http");
const fs = require("fs");
const path = require("path");

const port = Number(process.argv[2] || 0);
const scriptFile = process.argv[3] || path.join(__dirname, "script.json");
const logDir = process.argv[4] || "";
const script = JSON.parse(fs.readFileSync(scriptFile, "utf8"));
let seq = 0;

function text(m) {
  if (typeof m.content === "string") return m.content;
  return (m.content || []).map((b) => b.text || "").join("\n");
}

// lastPrompt finds the task of the request's last user message (the
// prompt: tool results come as role "tool") and counts the assistant
// messages after it. A last user message no task matches is the agent's
// own side question.
function lastPrompt(messages) {
  messages = messages || [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== "user") continue;
    const t = text(m);
    const task = script.find((k) => t.includes(k.match));
    if (!task) return null;
    const after = messages.slice(i + 1).filter((x) => x.role === "assistant").length;
    return { task, after };
  }
  return null;
}

function send(res, body, reply, model) {
  const id = "chatcmpl-fixture-" + seq;
  const created = 1767225600;
  const calls = (reply.tool_calls || []).map((c, i) => ({
    index: i,
    id: "call_fixture_" + seq + "_" + i,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.arguments || {}) },
  }));
  const finish = calls.length ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id, object: "chat.completion", created, model,
      choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content: reply.text || null, reasoning_content: reply.reasoning || undefined, tool_calls: calls.length ? calls : undefined } }],
      usage,
    }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const chunk = (delta, finish_reason, extra) =>
    res.write("data: " + JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish_reason || null }], ...extra }) + "\n\n");
  chunk({ role: "assistant", content: "" });
  // Reasoning first, as reasoning_content deltas (DeepSeek, Qwen).
  const r = reply.reasoning || "";
  for (let i = 0; i < r.length; i += 64) chunk({ reasoning_content: r.slice(i, i + 64) });
  const t = reply.text || "";
  // Stream the text in a few pieces, as a model does.
  for (let i = 0; i < t.length; i += 64) chunk({ content: t.slice(i, i + 64) });
  calls.forEach((c) => chunk({ tool_calls: [c] }));
  chunk({}, finish);
  res.write("data: " + JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [], usage }) + "\n\n");
  res.end("data: [DONE]\n\n");
}

const server = http.createServer((req, res) => {
  let data = "";
  req.on("data", (d) => (data += d));
  req.on("end", () => {
    seq++;
    if (logDir) fs.writeFileSync(path.join(logDir, `req-${String(seq).padStart(3, "0")}.json`), JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: data }, null, 1));
    if (req.method === "GET" && req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "fixture-model", object: "model", owned_by: "fixture" }] }));
      return;
    }
    if (!req.url.endsWith("/chat/completions")) {
      process.stderr.write(`request ${seq}: ${req.method} ${req.url}: 404\n`);
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "not found: " + req.url } }));
      return;
    }
    let body = {};
    try { body = JSON.parse(data); } catch (e) {}
    const found = lastPrompt(body.messages);
    if (!found) {
      process.stderr.write(`request ${seq}: no task matches; side reply\n`);
      send(res, body, { text: "Fixture session" }, body.model || "fixture-model");
      return;
    }
    const n = Math.min(found.after, found.task.replies.length - 1);
    process.stderr.write(`request ${seq}: task ${JSON.stringify(found.task.match)} reply ${n}\n`);
    send(res, body, found.task.replies[n], body.model || "fixture-model");
  });
});
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(String(server.address().port) + "\n");
});
