'use strict';
// The runtime's event stream (pairbench.runtime-events/1): one JSON line per event, seq rising.
const fs = require('fs');

let seq = 0;

function emit(kind, fields) {
  const file = process.env.PAIRBENCH_EVENTS;
  if (!file) return;
  seq += 1;
  const line = Object.assign({ schema: 'pairbench.runtime-events/1', seq, kind }, fields);
  fs.appendFileSync(file, JSON.stringify(line) + '\n');
}

module.exports = { emit };
