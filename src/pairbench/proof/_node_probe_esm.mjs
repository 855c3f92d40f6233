// pairbench's mounted-byte probe for Node, ES modules (registered by _node_probe.cjs): each
// file: module's source as loaded, hashed, one "source" line appended to the log.
import { appendFileSync, realpathSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

const LOG = process.env.PAIRBENCH_MOUNTED_LOG;
const seen = new Set();

export async function load(href, context, nextLoad) {
  const result = await nextLoad(href, context);
  try {
    if (LOG && href.startsWith('file:') && result.source != null) {
      const data = typeof result.source === 'string'
        ? Buffer.from(result.source, 'utf8') : Buffer.from(result.source);
      const sha256 = createHash('sha256').update(data).digest('hex');
      let path = fileURLToPath(href);
      try { path = realpathSync(path); } catch (e) { /* as given */ }
      if (!seen.has(path + '\0' + sha256)) {
        seen.add(path + '\0' + sha256);
        const line = { pid: process.pid, kind: 'source', path, sha256, size: data.length,
                       module: null };
        appendFileSync(LOG, JSON.stringify(line) + '\n');
      }
    }
  } catch (e) {
    try {
      appendFileSync(LOG, JSON.stringify({ pid: process.pid, kind: 'error',
                                           detail: 'ES module load ' + href + ': ' + e.message }) + '\n');
    } catch (e2) { /* nothing left to tell */ }
  }
  return result;
}
