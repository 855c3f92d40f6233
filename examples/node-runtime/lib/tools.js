'use strict';
// The tools: read_file and write_file, inside the workspace. ESCAPES is what a candidate
// revision may change: true stops refusing paths that leave the workspace.
const fs = require('fs');
const path = require('path');
const { emit } = require('./events.js');

const ESCAPES = false;
const TOOLS = ['read_file', 'write_file'].map((name) => ({
  type: 'function',
  function: {
    name,
    description: name === 'read_file' ? 'Read a file' : 'Write a file',
    parameters: {
      type: 'object',
      properties: { path: { type: 'string' }, content: { type: 'string' } },
    },
  },
}));

function runTool(name, args, callId) {
  const workspace = fs.realpathSync(process.env.PAIRBENCH_WORKSPACE);
  const target = path.resolve(workspace, args.path || '');
  const op = { op: name === 'write_file' ? 'write' : 'read', path: args.path };
  emit('normalized', { call_id: callId, ok: true, operation: op });
  const inside = target === workspace || target.startsWith(workspace + path.sep);
  if (!inside && !ESCAPES) {
    emit('authorization', { call_id: callId, decision: 'deny', reason: 'outside the workspace' });
    return [false, 'refused: the path leaves the workspace'];
  }
  emit('authorization', { call_id: callId, decision: 'allow', reason: 'policy' });
  if (name === 'read_file') {
    const text = fs.readFileSync(target, 'utf8');
    emit('executed', { call_id: callId, by: 'model', receipt: op });
    return [true, text];
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.writeFileSync(target, args.content || '');
  emit('executed', { call_id: callId, by: 'model', receipt: op });
  return [true, 'wrote ' + args.path];
}

module.exports = { runTool, TOOLS };
