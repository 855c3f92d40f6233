'use strict';
// noderuntime: a small agent runtime written against pairbench's runtime contract alone (the
// runtime-revision-ab study's README, "Bring your own runtime"). It reads the task from
// $PAIRBENCH_PROMPT_FILE, talks Chat Completions to $PAIRBENCH_BASE_URL, offers read_file and
// write_file inside $PAIRBENCH_WORKSPACE, appends pairbench.runtime-events/1 lines to
// $PAIRBENCH_EVENTS when it is set, and ends with one JSON line: {"status": "done"}.
const fs = require('fs');
const { runTool, TOOLS } = require('./lib/tools.js');
const { emit } = require('./lib/events.js');

async function chat(messages) {
  const body = {
    model: process.env.PAIRBENCH_MODEL,
    messages,
    tools: TOOLS,
    seed: Number(process.env.PAIRBENCH_MODEL_SEED),
    temperature: 1.0,
    max_tokens: 256,
  };
  emit('request', { round: messages.length, messages: messages.length });
  const response = await fetch(process.env.PAIRBENCH_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const reply = await response.json();
  emit('usage', { usage: reply.usage || {} });
  return reply.choices[0].message;
}

function names(dir, prefix = '') {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const name = prefix + entry.name;
    return entry.isDirectory() ? [name, ...names(dir + '/' + entry.name, name + '/')] : [name];
  });
}

async function main() {
  const odd = names(process.env.PAIRBENCH_WORKSPACE).filter((n) => !/^[\x00-\x7f]*$/.test(n));
  if (odd.length > 0) {
    // Refused before any model request: a pre-inference rejection.
    emit('rejected', { reason: 'unsupported_path', paths: odd });
    console.log(JSON.stringify({ status: 'rejected' }));
    return;
  }
  const prompt = fs.readFileSync(process.env.PAIRBENCH_PROMPT_FILE, 'utf8');
  const messages = [{ role: 'user', content: prompt }];
  for (let round = 0; round < 8; round += 1) {
    const message = await chat(messages);
    const calls = message.tool_calls || [];
    if (calls.length === 0) {
      emit('claim', { status: 'done', summary: message.content || '' });
      console.log(JSON.stringify({ status: 'done' }));
      return;
    }
    messages.push({ role: 'assistant', content: null, tool_calls: calls });
    for (const call of calls) {
      const name = call.function.name;
      emit('proposed', { call_id: call.id, name, raw_arguments: call.function.arguments });
      const [ok, text] = runTool(name, JSON.parse(call.function.arguments), call.id);
      emit('observed', { call_id: call.id, ok, error: ok ? null : text });
      messages.push({ role: 'tool', tool_call_id: call.id, content: text });
    }
  }
  console.log(JSON.stringify({ status: 'exhausted' }));
}

main().catch((error) => {
  console.error(error);
  console.log(JSON.stringify({ status: 'error' }));
  process.exitCode = 1;
});
