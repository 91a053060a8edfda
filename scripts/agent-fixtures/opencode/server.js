#!/usr/bin/env node
// A scripted OpenAI-compatible model server for OpenCode (node built-ins
// only). It answers POST /v1/chat/completions (stream: true, SSE) by
// replaying a fixed script: the step is chosen from the last user prompt
// of the request and how many assistant messages follow it, so the same
// prompts always get the same replies, tool calls included. A request
// without tools (OpenCode's title request) gets a fixed title.
//
//   PORT=0 PROJECT=/abs/project LOG=/tmp/requests.jsonl node server.js
//
// It prints "listening <port>" on stdout once it is ready.
"use strict"
const http = require("node:http")
const fs = require("node:fs")
const path = require("node:path")

const project = process.env.PROJECT || "/tmp/git-mem-fixture/opencode/project"
const log = process.env.LOG || ""
const p = (f) => path.join(project, f)

// Each prompt (matched by its start) gets its steps in order; a step is
// a tool call {tool, args}, after optional reasoning and text, or the
// final text {text}.
const script = [
  {
    prompt: "Read README.md",
    steps: [
      { reasoning: "The user wants a summary; the README says what the project is.", text_before: "I'll read the README first.", tool: "read", args: { filePath: p("README.md") } },
      { text: "This project is a tiny shell calculator: `add.sh` adds two numbers and `test.sh` checks it." },
    ],
  },
  {
    prompt: "Fix the bug in add.sh",
    steps: [
      { tool: "read", args: { filePath: p("add.sh") } },
      // A wrong oldString: the edit fails, as a model's sometimes does.
      { tool: "edit", args: { filePath: p("add.sh"), oldString: "echo $(($1 * $2))", newString: "echo $(($1 + $2))" } },
      { tool: "edit", args: { filePath: p("add.sh"), oldString: "echo $(($1 - $2))", newString: "echo $(($1 + $2))" } },
      { text: "Fixed: add.sh subtracted instead of adding." },
    ],
  },
  {
    prompt: "Run the tests",
    steps: [
      { tool: "bash", args: { command: "sh test.sh", description: "Run the test script" } },
      { text: "The tests pass: `ok 2+3=5`." },
    ],
  },
  {
    prompt: "Write a CHANGELOG.md",
    steps: [
      { tool: "write", args: { filePath: p("CHANGELOG.md"), content: "# Changelog\n\n- add.sh adds instead of subtracting.\n" } },
      { text: "Wrote CHANGELOG.md with the fix." },
    ],
  },
]

function textOf(content) {
  if (typeof content === "string") return content
  if (Array.isArray(content)) return content.map((c) => (c && typeof c.text === "string" ? c.text : "")).join("\n")
  return ""
}

// pick returns the step for a request: the last user message with a
// scripted prompt, and the number of assistant messages after it.
function pick(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m.role !== "user") continue
    const text = textOf(m.content)
    const entry = script.find((s) => text.includes(s.prompt))
    if (!entry) continue
    const n = messages.slice(i + 1).filter((x) => x.role === "assistant").length
    const k = script.indexOf(entry)
    return { step: entry.steps[Math.min(n, entry.steps.length - 1)], id: `call_${k + 1}_${n + 1}` }
  }
  return { step: { text: "I have no scripted reply for that." }, id: "call_0_0" }
}

let created = 1767225600 // fixed, so the stream is the same on every run

function sse(res, model, deltas, finish) {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
  const chunk = (delta, fin) =>
    res.write(
      "data: " +
        JSON.stringify({ id: "chatcmpl-fixture", object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: fin }] }) +
        "\n\n",
    )
  chunk({ role: "assistant", content: "" }, null)
  for (const d of deltas) chunk(d, null)
  chunk({}, finish)
  res.write(
    "data: " +
      JSON.stringify({ id: "chatcmpl-fixture", object: "chat.completion.chunk", created, model, choices: [], usage: { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 } }) +
      "\n\n",
  )
  res.write("data: [DONE]\n\n")
  res.end()
}

const server = http.createServer((req, res) => {
  let body = ""
  req.on("data", (d) => (body += d))
  req.on("end", () => {
    if (log) fs.appendFileSync(log, JSON.stringify({ method: req.method, url: req.url, body: body ? JSON.parse(body) : null }) + "\n")
    if (req.method === "GET" && req.url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ object: "list", data: [{ id: "fixture-model", object: "model", owned_by: "fixture" }] }))
      return
    }
    if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "not found: " + req.url } }))
      return
    }
    const r = JSON.parse(body)
    const model = r.model || "fixture-model"
    if (!Array.isArray(r.tools) || r.tools.length === 0) {
      sse(res, model, [{ content: "Fixture session" }], "stop")
      return
    }
    const { step, id } = pick(r.messages || [])
    if (step.tool) {
      const deltas = []
      if (step.reasoning) deltas.push({ reasoning_content: step.reasoning })
      if (step.text_before) deltas.push({ content: step.text_before })
      const args = JSON.stringify(step.args)
      deltas.push({ tool_calls: [{ index: 0, id, type: "function", function: { name: step.tool, arguments: "" } }] })
      // The arguments in two pieces, as real models stream them.
      const half = Math.floor(args.length / 2)
      deltas.push({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, half) } }] })
      deltas.push({ tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] })
      sse(res, model, deltas, "tool_calls")
      return
    }
    sse(res, model, [{ content: step.text }], "stop")
  })
})

server.listen(Number(process.env.PORT || 0), "127.0.0.1", () => {
  console.log("listening " + server.address().port)
})
