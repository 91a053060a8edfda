// Preloaded into cn (NODE_OPTIONS=--require) by run.sh: keeps it on this
// machine. cn 1.5.47 asks https://api.continue.dev/cn/info?id=<machine id>
// for its latest version when it starts (src/version.ts), with no setting
// to turn that off; this makes every http(s) fetch and DNS lookup of a host
// other than 127.0.0.1/localhost fail at once, and notes the address (without
// its query) in $FIXTURE_BLOCKED_LOG. Node built-ins only.
'use strict';
const fs = require('fs');
const dns = require('dns');

const logFile = process.env.FIXTURE_BLOCKED_LOG || '';
const isLocal = (h) => ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(h);
const note = (s) => {
  if (logFile) fs.appendFileSync(logFile, s + '\n');
};

const realFetch = globalThis.fetch;
globalThis.fetch = function (input, init) {
  let url;
  try {
    url = new URL(typeof input === 'string' || input instanceof URL ? String(input) : input.url);
  } catch (e) {
    return realFetch.call(this, input, init);
  }
  if ((url.protocol === 'http:' || url.protocol === 'https:') && !isLocal(url.hostname)) {
    note('fetch ' + url.origin + url.pathname);
    return Promise.reject(new TypeError('fetch failed (blocked: offline fixture run)'));
  }
  return realFetch.call(this, input, init);
};

const realLookup = dns.lookup;
dns.lookup = function (host, ...args) {
  if (!isLocal(host)) {
    note('dns ' + host);
    const cb = args[args.length - 1];
    const err = Object.assign(new Error('getaddrinfo ENOTFOUND ' + host), { code: 'ENOTFOUND', hostname: host });
    process.nextTick(() => cb(err));
    return {};
  }
  return realLookup.call(this, host, ...args);
};
const realPLookup = dns.promises.lookup;
dns.promises.lookup = function (host, ...args) {
  if (!isLocal(host)) {
    note('dns ' + host);
    return Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND ' + host), { code: 'ENOTFOUND', hostname: host }));
  }
  return realPLookup.call(this, host, ...args);
};
