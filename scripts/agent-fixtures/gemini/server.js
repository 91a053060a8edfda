// A scripted stand-in for the Gemini API on 127.0.0.1, for making real
// Gemini CLI chat files (see run.sh). No dependencies beyond Node's own
// modules.
//
//   node server.js <script.json> <port-file> [log-file]
//
// It listens on a free port of 127.0.0.1 and writes the port to
// <port-file>. Requests that offer tools (the agent's own turns) get the
// script's replies in order, one per request; any other request (the
// CLI's side calls: routing, summaries, titles) gets a short fixed
// answer, as JSON when the request asks for JSON. Every request is logged
// (method, path, a digest of the body) to [log-file] when given.
//
// The script is a JSON array of replies; a reply is an array of parts as
// the API returns them: {"text": "..."} or {"functionCall": {"name": ...,
// "args": {...}}}. When the script is used up, the server answers "(the
// script is over)" so the CLI ends instead of hanging.
'use strict';

const http = require('node:http');
const fs = require('node:fs');

const [scriptPath, portFile, logFile] = process.argv.slice(2);
if (!scriptPath || !portFile) {
  console.error('usage: node server.js <script.json> <port-file> [log-file]');
  process.exit(2);
}
const script = JSON.parse(fs.readFileSync(scriptPath, 'utf8'));
let next = 0;
let dumped = 0;

function log(line) {
  if (logFile) fs.appendFileSync(logFile, line + '\n');
}

const usage = { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 };

function candidate(parts) {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: usage,
    modelVersion: 'scripted-fixture-model',
  };
}

function hasTools(body) {
  return Array.isArray(body.tools) && body.tools.some((t) => (t.functionDeclarations || []).length > 0);
}

function wantsJSON(body) {
  const gc = body.generationConfig || body.config || {};
  return gc.responseMimeType === 'application/json' || gc.responseSchema !== undefined || gc.responseJsonSchema !== undefined;
}

// sideAnswer answers the CLI's own helper calls. The model router asks
// which model to use (JSON with a reasoning and a model choice); other
// JSON asks get an empty object's worth of fields they commonly want.
function sideAnswer(body) {
  const asked = JSON.stringify(body.contents || []);
  if (asked.includes('state_snapshot')) {
    // The history compressor (a summary, then its check): a snapshot.
    return [{ text: '<state_snapshot>\n<overall_goal>Keep notes.txt tidy.</overall_goal>\n<key_knowledge>notes.txt has two lines; count.sh counts them.</key_knowledge>\n</state_snapshot>' }];
  }
  if (!wantsJSON(body)) return [{ text: 'Scripted fixture session' }];
  const gc = body.generationConfig || {};
  const schema = gc.responseJsonSchema || gc.responseSchema || {};
  const props = schema.properties || {};
  const out = {};
  for (const [k, v] of Object.entries(props)) {
    const t = String(v.type || '').toLowerCase();
    if (Array.isArray(v.enum) && v.enum.length) out[k] = v.enum[0];
    else if (t === 'boolean') out[k] = false;
    else if (t === 'number' || t === 'integer') out[k] = 0;
    else if (t === 'array') out[k] = [];
    else out[k] = 'scripted';
  }
  return [{ text: JSON.stringify(out) }];
}

function lastUserDigest(body) {
  const contents = body.contents || [];
  const last = contents[contents.length - 1];
  if (!last) return '-';
  return (last.parts || [])
    .map((p) => (p.text !== undefined ? 'text:' + JSON.stringify(p.text.slice(0, 60)) : p.functionResponse ? 'functionResponse:' + p.functionResponse.name : Object.keys(p).join(',')))
    .join(' ');
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    } catch {
      body = {};
    }
    const url = new URL(req.url, 'http://127.0.0.1');
    const path = url.pathname;
    if (path.endsWith(':countTokens')) {
      log(`${req.method} ${path} countTokens`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ totalTokens: 100 }));
      return;
    }
    const stream = path.endsWith(':streamGenerateContent');
    if (!stream && !path.endsWith(':generateContent')) {
      log(`${req.method} ${path} unknown`);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 404, message: 'not in the script: ' + path, status: 'NOT_FOUND' } }));
      return;
    }
    if (process.env.DUMP_DIR) {
      fs.writeFileSync(`${process.env.DUMP_DIR}/req-${String(++dumped).padStart(3, '0')}.json`, JSON.stringify({ path, body }, null, 1));
    }
    let parts;
    let kind;
    let tokens;
    if (hasTools(body)) {
      kind = `agent #${next}`;
      const step = next < script.length ? script[next] : [{ text: '(the script is over)' }];
      next++;
      // A step is a list of parts, or {parts, promptTokenCount}: the
      // prompt size the reply reports (a large one makes the CLI compress
      // its history before the next request).
      parts = Array.isArray(step) ? step : step.parts;
      tokens = Array.isArray(step) ? undefined : step.promptTokenCount;
    } else {
      kind = 'side';
      parts = sideAnswer(body);
    }
    log(`${req.method} ${path} ${kind} last=[${lastUserDigest(body)}] -> ${JSON.stringify(parts).slice(0, 120)}`);
    const reply = candidate(parts);
    if (tokens !== undefined) {
      reply.usageMetadata = { promptTokenCount: tokens, candidatesTokenCount: 10, totalTokenCount: tokens + 10 };
    }
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: ' + JSON.stringify(reply) + '\r\n\r\n');
    } else {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply));
    }
  });
});

server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
