// Compares memplan's default execution order (node names, ORT's naming for unnamed nodes) with the
// order ONNX Runtime writes into its generated DeviceBasedPartitioner config (CPU, optimizations off).
// usage: node ort_order.js MEMPLAN NODE_MODULES_DIR MODEL... ; exit 1 on any mismatch.
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, ...models] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));

async function ortOrder(model) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-ort-'));
  const config = path.join(dir, 'config.json');
  const staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir]).toString().trim();
  const session = await ort.InferenceSession.create(
      staged, {graphOptimizationLevel: 'disabled', extra: {session: {node_partition_config_file: config}}});
  await session.release();
  const text = fs.readFileSync(config, 'utf8');
  fs.rmSync(dir, {recursive: true});
  return JSON.parse(text).streams.flat();
}

(async () => {
  let failed = 0;
  for (const model of models) {
    const ours = JSON.parse(execFileSync(memplan, ['inspect', '--json', model])).execution_order.nodes;
    const theirs = await ortOrder(model);
    const same = ours.length === theirs.length && ours.every((n, i) => n === theirs[i]);
    if (same) {
      console.log(`ok   ${path.basename(model)}: ${ours.length} nodes in ORT's order`);
    } else {
      failed++;
      const i = ours.findIndex((n, k) => n !== theirs[k]);
      console.log(`FAIL ${path.basename(model)}: ${ours.length} vs ${theirs.length} nodes; first difference at ${i}: ` +
                  `memplan ${ours[i]} / ORT ${theirs[i]}`);
    }
  }
  console.log(`${models.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch(e => { console.error(e.message); process.exit(1); });
