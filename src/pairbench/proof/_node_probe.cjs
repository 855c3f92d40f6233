'use strict';
// pairbench's mounted-byte probe for Node (pbprobe-node/1): preloaded into every Node process
// of a trial by NODE_OPTIONS="--require <this file>" (children inherit it), it appends one
// JSON line per module file Node compiles to $PAIRBENCH_MOUNTED_LOG, in the records the
// Python probe writes (pairbench/proof/_records.py): "start" once per process, "source" with
// the SHA-256 of exactly the text compiled, "error" when the probe itself failed. CommonJS
// modules (the main script included) are seen through Module.prototype._compile; ES modules
// through a load hook (module.register, Node >= 20.6) in _node_probe_esm.mjs. Without the
// variable it does nothing; a failure of its own never reaches the runtime.
const fs = require('fs');
const crypto = require('crypto');
const Module = require('module');
const url = require('url');

const LOG = process.env.PAIRBENCH_MOUNTED_LOG;

function write(record) {
  try {
    const line = JSON.stringify(Object.assign({ pid: process.pid }, record)) + '\n';
    fs.appendFileSync(LOG, line); // one write of one line, O_APPEND: no interleaving
  } catch (e) {
    // nothing left to tell: the runtime goes on untouched
  }
}

function realpath(file) {
  try {
    return fs.realpathSync(file);
  } catch (e) {
    return file;
  }
}

const seen = new Set();

function record(file, text, module) {
  try {
    const data = Buffer.isBuffer(text) ? text : Buffer.from(String(text), 'utf8');
    const sha256 = crypto.createHash('sha256').update(data).digest('hex');
    const path = realpath(file);
    if (seen.has(path + '\0' + sha256)) return;
    seen.add(path + '\0' + sha256);
    write({ kind: 'source', path, sha256, size: data.length, module });
  } catch (e) {
    write({ kind: 'error', detail: 'record ' + file + ': ' + e.message });
  }
}

if (LOG && require('worker_threads').isMainThread) {
  write({ kind: 'start', ppid: process.ppid, detail: process.execPath + ' ' + process.version });
  try {
    const compile = Module.prototype._compile;
    Module.prototype._compile = function (content, filename) {
      record(filename, content, null);
      return compile.apply(this, arguments);
    };
  } catch (e) {
    write({ kind: 'error', detail: 'CommonJS hook: ' + e.message });
  }
  try {
    if (typeof Module.register === 'function') {
      Module.register('./_node_probe_esm.mjs', url.pathToFileURL(__filename));
    } else {
      write({ kind: 'error', detail: 'no module.register: ES modules are not recorded' });
    }
  } catch (e) {
    write({ kind: 'error', detail: 'ES module hook: ' + e.message });
  }
}
