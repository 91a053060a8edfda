// Scripted model server for generating a GitHub Copilot CLI fixture.
//
// Copilot CLI's BYOK mode (COPILOT_PROVIDER_BASE_URL) sends OpenAI chat
// completions to <base>/chat/completions (type "openai") or Anthropic
// Messages to <base>/v1/messages (type "anthropic"), streamed. This server
// answers them from a fixed script: each prompt of run.sh has a list of
// steps, and the step is the number of assistant messages the request
// already has after that prompt. A request with no tools (a title or a
// summary) gets a short text. Node built-ins only.
//
// usage: node server.js PORT PROJECT_DIR LOG_FILE
'use strict';
const http = require('http');
const fs = require('fs');
const path = require('path');

const port = Number(process.argv[2] || 18321);
const project = process.argv[3] || '/tmp/git-mem-fixture/copilot-cli/project';
const logFile = process.argv[4] || '';
const p = (f) => path.join(project, f);

function call(name, args) {
  return { tools: [{ name, args }] };
}

// key: a phrase of the prompt; steps: one reply per model call.
const script = [
  {
    key: 'What does notes.md say',
    steps: [
      // Reasoning, then two reads at once.
      {
        reasoning: 'The user asks about notes.md; read it, and hello.sh which it names.',
        tools: [
          { name: 'view', args: { path: p('notes.md') } },
          { name: 'view', args: { path: p('hello.sh') } },
        ],
      },
      { text: 'notes.md lists two tasks: fix the greeting in hello.sh (it prints "Helo world") and add a test script.' },
    ],
  },
  {
    key: 'Fix the greeting',
    steps: [
      // The first edit names a string that is not there: the tool fails.
      call('edit', { path: p('hello.sh'), old_str: 'echo "Helo, world"', new_str: 'echo "Hello, world"' }),
      call('edit', { path: p('hello.sh'), old_str: 'echo "Helo world"', new_str: 'echo "Hello, world"' }),
      { text: 'Fixed the greeting in hello.sh: it now prints "Hello, world".' },
    ],
  },
  {
    key: 'Add a test script',
    steps: [
      call('create', { path: p('test.sh'), file_text: '#!/bin/sh\nset -e\nout=$(sh hello.sh)\n[ "$out" = "Hello, world" ] && echo PASS\n' }),
      call('bash', { command: 'sh test.sh', description: 'Run the test script' }),
      { text: 'Added test.sh; it runs hello.sh and checks the greeting. It prints PASS.' },
    ],
  },
  {
    key: 'Have a subagent count',
    steps: [
      call('task', { name: 'line-counter', description: 'Count lines in notes.md', agent_type: 'explore', mode: 'sync', prompt: 'Count the lines of ' + p('notes.md') + ' and answer with the number only.' }),
      { text: 'The subagent counted 4 lines in notes.md.' },
    ],
  },
  {
    // A second session: run.sh interrupts the agent (SIGINT) while this
    // command runs.
    key: 'Run the slow build',
    steps: [
      call('bash', { command: 'sleep 60 && echo built', description: 'Run the slow build' }),
      { text: 'The build finished.' },
    ],
  },
  {
    // The provider refuses the request (no retry: a 400).
    key: 'Check the build log',
    steps: [{ status: 400, error: 'fixture: the model refused this request' }],
  },
  {
    key: 'Skip the build',
    steps: [{ text: 'Skipped the build; nothing else to do.' }],
  },
  {
    // A third session, through an Anthropic-compatible provider: thinking
    // blocks before the call and before the answer.
    key: 'Explain hello.sh',
    steps: [
      { reasoning: 'Read hello.sh before explaining it.', tools: [{ name: 'view', args: { path: p('hello.sh') } }] },
      { reasoning: 'It is a one-line shell script.', text: 'hello.sh is a shell script that prints "Hello, world".' },
    ],
  },
  {
    // A fourth session, typed into the interactive terminal UI.
    key: 'List the shell scripts',
    steps: [
      call('bash', { command: 'ls *.sh', description: 'List shell scripts' }),
      { text: 'There are two shell scripts: hello.sh and test.sh.' },
    ],
  },
  {
    key: 'Run test.sh',
    steps: [
      call('bash', { command: 'sh test.sh', description: 'Run the test' }),
      { text: 'test.sh passes.' },
    ],
  },
  {
    // A fifth session: two long reads fill the small context run.sh sets
    // (COPILOT_PROVIDER_MAX_PROMPT_TOKENS), so the agent compacts mid-task.
    key: 'Read big.txt',
    steps: [
      call('view', { path: p('big.txt') }),
      call('view', { path: p('big2.txt') }),
      { text: 'Both files are long lists of numbered lines.' },
    ],
  },
  {
    // The third session's second prompt: a skill (one bundled with the
    // agent) loaded by its tool.
    key: 'Set up the cloud agent',
    steps: [
      call('skill', { skill: 'customize-cloud-agent' }),
      { text: 'The cloud agent is configured by .github/workflows/copilot-setup-steps.yml.' },
    ],
  },
  {
    // A sixth session: a subagent in the background; the main agent
    // answers at once, and again when the runtime tells it the subagent is
    // done (the agent itself then calls read_agent).
    key: 'Start a background count',
    steps: [
      call('task', { name: 'bg-counter', description: 'Count lines in background', agent_type: 'task', mode: 'background', prompt: 'Count the lines of notes.md slowly.' }),
      { text: 'Started a background count.' },
      { text: 'The background count finished: 4 lines.' },
    ],
  },
  {
    // The background subagent's prompt; it outlasts the main agent's reply.
    key: 'Count the lines of notes.md slowly',
    steps: [
      call('bash', { command: 'sleep 3; wc -l < notes.md', description: 'Count lines slowly' }),
      { text: '4' },
    ],
  },
  {
    // The subagent's own prompt (the task above).
    key: 'Count the lines of',
    steps: [
      call('bash', { command: 'wc -l < notes.md', description: 'Count lines' }),
      { text: '4' },
    ],
  },
];

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c) => (c && c.text) || '').join('');
  return '';
}

const served = new Map(); // prompt key -> the last step answered

function reply(body) {
  const msgs = body.messages || [];
  if (!body.tools || body.tools.length === 0) return { text: 'Fixture session' };
  // The agent's own request for a summary (/compact, or a full context).
  const last = msgs[msgs.length - 1];
  if (last && last.role === 'user' && textOf(last.content).startsWith('Please create a detailed summary')) {
    return { text: 'Summary: the user asked about the shell scripts and hello.sh; both were explained.' };
  }
  // The last user message that is one of the script's prompts.
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i].role !== 'user') continue;
    const t = textOf(msgs[i].content);
    const s = script.find((s) => t.includes(s.key));
    if (!s) continue;
    // After a compaction the history restarts from a summary that quotes
    // the prompt: go on from the last step served, not from the start.
    let step = msgs.slice(i + 1).filter((m) => m.role === 'assistant').length;
    step = step === 0 ? 0 : Math.max(step, (served.get(s.key) ?? -1) + 1);
    served.set(s.key, step);
    return s.steps[Math.min(step, s.steps.length - 1)];
  }
  return { text: 'Done.' };
}

let n = 0;
function log(o) {
  if (logFile) fs.appendFileSync(logFile, JSON.stringify(o) + '\n');
}

// openai answers a chat completion (streamed when asked).
function openai(res, body, r) {
  if (r.status) {
    // A provider error, as an OpenAI-compatible server sends it.
    res.writeHead(r.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { message: r.error, type: 'invalid_request_error', code: null } }));
    return;
  }
  const id = 'chatcmpl-fixture-' + n;
  const base = { id, object: 'chat.completion.chunk', created: 1764748800, model: body.model || 'gpt-4.1' };
  const usage = { prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240 };
  let delta, finish;
  if (r.tools) {
    delta = {
      role: 'assistant',
      content: null,
      tool_calls: r.tools.map((t, i) => ({ index: i, id: 'call_fixture_' + n + '_' + i, type: 'function', function: { name: t.name, arguments: JSON.stringify(t.args) } })),
    };
    finish = 'tool_calls';
  } else {
    delta = { role: 'assistant', content: r.text };
    finish = 'stop';
  }
  if (r.reasoning) delta.reasoning_text = r.reasoning;
  if (body.stream) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('data: ' + JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: null }] }) + '\n\n');
    res.write('data: ' + JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }) + '\n\n');
    res.end('data: [DONE]\n\n');
    return;
  }
  const message = { role: 'assistant', content: delta.content };
  if (delta.reasoning_text) message.reasoning_text = delta.reasoning_text;
  if (delta.tool_calls) message.tool_calls = delta.tool_calls.map(({ index, ...t }) => t);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
}

// anthropic answers an Anthropic Messages request (streamed when asked):
// reasoning as a thinking block, then text or tool_use blocks.
function anthropic(res, body, r) {
  if (r.status) {
    res.writeHead(r.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: r.error } }));
    return;
  }
  const blocks = [];
  if (r.reasoning) blocks.push({ type: 'thinking', thinking: r.reasoning, signature: 'fixture-signature-' + n });
  if (r.text) blocks.push({ type: 'text', text: r.text });
  for (const [i, t] of (r.tools || []).entries()) blocks.push({ type: 'tool_use', id: 'toolu_fixture_' + n + '_' + i, name: t.name, input: t.args });
  const stop = r.tools ? 'tool_use' : 'end_turn';
  const msg = { id: 'msg_fixture_' + n, type: 'message', role: 'assistant', model: body.model || 'claude-sonnet-4.5', stop_sequence: null };
  const usage = { input_tokens: 1200, output_tokens: 40 };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...msg, content: blocks, stop_reason: stop, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const ev = (type, data) => res.write('event: ' + type + '\ndata: ' + JSON.stringify({ type, ...data }) + '\n\n');
  ev('message_start', { message: { ...msg, content: [], stop_reason: null, usage: { input_tokens: 1200, output_tokens: 1 } } });
  blocks.forEach((b, index) => {
    if (b.type === 'thinking') {
      ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: b.thinking } });
      ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: b.signature } });
    } else if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
    } else {
      ev('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } });
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 40 } });
  ev('message_stop', {});
  res.end();
}

http
  .createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      n++;
      const kind = req.method !== 'POST' ? '' : req.url.endsWith('/chat/completions') ? 'openai' : req.url.split('?')[0].endsWith('/messages') ? 'anthropic' : '';
      if (!kind) {
        log({ n, method: req.method, url: req.url, status: 404 });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      let body = {};
      try {
        body = JSON.parse(raw);
      } catch (e) {}
      const r = reply(body);
      const msgs = body.messages || [];
      const last = msgs.length ? textOf(msgs[msgs.length - 1].content).slice(0, 80) : '';
      log({ n, url: req.url, messages: msgs.length, tools: (body.tools || []).length, last, reply: r });
      (kind === 'openai' ? openai : anthropic)(res, body, r);
    });
  })
  .listen(port, '127.0.0.1', () => log({ listening: port }));
