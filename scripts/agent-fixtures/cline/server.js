// A scripted OpenAI-compatible model server for generating agent fixtures.
// It replays fixed replies (script.json beside it): the script is a list
// of tasks {"match": "<words of the task's first prompt>", "replies":
// [...]}; a request goes to the task whose match its first user message
// contains, and gets the reply numbered by how many assistant messages the
// request already carries, so a rerun of the same prompts gives the same
// conversation. Node built-ins only.
//
//   node server.js <port> [script.json] [logdir]
//
// A reply is {"text": "..."} (the agent's XML tool calls go in the text)
// or {"tool_calls": [{"name": "...", "arguments": {...}}], "text": "..."}.
// The port it listens on is printed on stdout (0: any free port).
"use strict";
const http = require("http");
const fs = require("fs");
const path = require("path");

const port = Number(process.argv[2] || 0);
const scriptFile = process.argv[3] || path.join(__dirname, "script.json");
const logDir = process.argv[4] || "";
const script = JSON.parse(fs.readFileSync(scriptFile, "utf8"));
let seq = 0;

function firstUserText(messages) {
  const m = (messages || []).find((m) => m.role === "user");
  if (!m) return "";
  if (typeof m.content === "string") return m.content;
  return (m.content || []).map((b) => b.text || "").join("\n");
}

function assistantTurns(messages) {
  return (messages || []).filter((m) => m.role === "assistant").length;
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
      choices: [{ index: 0, finish_reason: finish, message: { role: "assistant", content: reply.text || null, tool_calls: calls.length ? calls : undefined } }],
      usage,
    }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const chunk = (delta, finish_reason, extra) =>
    res.write("data: " + JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish_reason || null }], ...extra }) + "\n\n");
  chunk({ role: "assistant", content: "" });
  const text = reply.text || "";
  // Stream the text in a few pieces, as a model does.
  for (let i = 0; i < text.length; i += 64) chunk({ content: text.slice(i, i + 64) });
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
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "not found: " + req.url } }));
      return;
    }
    let body = {};
    try { body = JSON.parse(data); } catch (e) {}
    const first = firstUserText(body.messages);
    const task = script.find((t) => first.includes(t.match));
    if (!task) {
      process.stderr.write(`request ${seq}: no task matches ${JSON.stringify(first.slice(0, 80))}\n`);
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "the script has no task for this prompt" } }));
      return;
    }
    const n = Math.min(assistantTurns(body.messages), task.replies.length - 1);
    const reply = task.replies[n];
    process.stderr.write(`request ${seq}: task ${JSON.stringify(task.match)} reply ${n}\n`);
    send(res, body, reply, body.model || "fixture-model");
  });
});
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(String(server.address().port) + "\n");
});
