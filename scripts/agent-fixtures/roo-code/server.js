// A scripted Anthropic-compatible model server (POST /v1/messages) for
// generating agent fixtures. It replays fixed replies (script.json beside
// it): the script is a list of tasks {"match": "<words of the task's first
// prompt>", "replies": [...]}; a request goes to the task whose match its
// first user message contains, and gets the reply numbered by how many
// assistant messages the request already carries, so a rerun of the same
// prompts gives the same conversation. Node built-ins only.
//
//   node server.js <port> [script.json] [logdir]
//
// A reply is {"thinking": "...", "text": "...", "tool_calls": [{"name":
// "...", "arguments": {...}}]} (all optional): an extended-thinking block
// (with a made-up signature), text and native tool_use blocks. The port it
// listens on is printed on stdout (0: any free port).
"use strict";
const http = require("http");
const fs = require("fs");
const path = require("path");

const port = Number(process.argv[2] || 0);
const scriptFile = process.argv[3] || path.join(__dirname, "script.json");
const logDir = process.argv[4] || "";
const script = JSON.parse(fs.readFileSync(scriptFile, "utf8"));
let seq = 0;

function textOf(content) {
  if (typeof content === "string") return content;
  return (content || []).map((b) => b.text || (b.type === "tool_result" ? textOf(b.content) : "")).join("\n");
}

function firstUserText(messages) {
  const m = (messages || []).find((m) => m.role === "user");
  return m ? textOf(m.content) : "";
}

function send(res, body, reply, model) {
  const id = "msg_fixture_" + String(seq).padStart(4, "0");
  const blocks = [];
  if (reply.thinking) blocks.push({ type: "thinking", thinking: reply.thinking, signature: "fixture-signature-" + String(seq).padStart(4, "0") });
  if (reply.text) blocks.push({ type: "text", text: reply.text });
  (reply.tool_calls || []).forEach((c, i) =>
    blocks.push({ type: "tool_use", id: "toolu_fixture_" + String(seq).padStart(4, "0") + "_" + i, name: c.name, input: c.arguments || {} }));
  const stop = reply.tool_calls && reply.tool_calls.length ? "tool_use" : "end_turn";
  const usage = { input_tokens: 1000, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (!body.stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id, type: "message", role: "assistant", model, content: blocks, stop_reason: stop, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const ev = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  ev("message_start", { message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === "thinking") {
      ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: b.thinking } });
      ev("content_block_delta", { index, delta: { type: "signature_delta", signature: b.signature } });
    } else if (b.type === "text") {
      ev("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (let i = 0; i < b.text.length; i += 64) ev("content_block_delta", { index, delta: { type: "text_delta", text: b.text.slice(i, i + 64) } });
    } else {
      ev("content_block_start", { index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } });
      const json = JSON.stringify(b.input);
      for (let i = 0; i < json.length; i += 64) ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: json.slice(i, i + 64) } });
    }
    ev("content_block_stop", { index });
  });
  ev("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 50 } });
  ev("message_stop", {});
  res.end();
}

const server = http.createServer((req, res) => {
  let data = "";
  req.on("data", (d) => (data += d));
  req.on("end", () => {
    seq++;
    if (logDir) fs.writeFileSync(path.join(logDir, `req-${String(seq).padStart(3, "0")}.json`), JSON.stringify({ method: req.method, url: req.url, body: data }, null, 1));
    const url = req.url.split("?")[0];
    if (req.method === "POST" && url.endsWith("/messages/count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: 1000 }));
      return;
    }
    if (!(req.method === "POST" && url.endsWith("/messages"))) {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: "not found: " + req.url } }));
      return;
    }
    let body = {};
    try { body = JSON.parse(data); } catch (e) {}
    const first = firstUserText(body.messages);
    const task = script.find((t) => first.includes(t.match));
    if (!task) {
      process.stderr.write(`request ${seq}: no task matches ${JSON.stringify(first.slice(0, 80))}\n`);
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "the script has no task for this prompt" } }));
      return;
    }
    const turns = (body.messages || []).filter((m) => m.role === "assistant").length;
    const n = Math.min(turns, task.replies.length - 1);
    process.stderr.write(`request ${seq}: task ${JSON.stringify(task.match)} reply ${n}\n`);
    send(res, body, task.replies[n], body.model || "fixture-model");
  });
});
server.listen(port, "127.0.0.1", () => {
  process.stdout.write(String(server.address().port) + "\n");
});
