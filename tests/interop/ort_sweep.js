// memplan partition against ONNX Runtime on every model of ONNX's backend test data that ORT loads:
// every config must be byte-identical (ORT's load-time function expansion included), and at least the
// expected number of models must be compared.
// usage: node ort_sweep.js MEMPLAN NODE_MODULES_DIR TESTDATA_DIR EXPECTED_IDENTICAL
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, testdata, expectedText] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));

(async () => {
  const models = execFileSync('find', [testdata, '-name', '*.onnx']).toString().trim().split('\n').sort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-sweep-'));
  let identical = 0, ortRejected = 0;
  const different = [];
  for (const model of models) {
    const config = path.join(dir, 'config.json');
    fs.rmSync(config, {force: true});
    try {
      const s = await ort.InferenceSession.create(
          model, {graphOptimizationLevel: 'disabled', extra: {session: {node_partition_config_file: config}}});
      await s.release();
    } catch (e) {
      ortRejected++;
      continue;
    }
    if (!fs.existsSync(config)) {
      ortRejected++;
      continue;
    }
    let ours;
    try {
      ours = execFileSync(memplan, ['partition', model], {stdio: ['ignore', 'pipe', 'pipe']}).toString().replace(/\n$/, '');
    } catch (e) {
      different.push(`${model}: memplan failed: ${e.stderr}`);
      continue;
    }
    const theirs = fs.readFileSync(config, 'utf8');
    if (ours === theirs) {
      identical++;
      continue;
    }
    different.push(`${model}:\n  memplan ${ours}\n  ORT     ${theirs}`);
  }
  fs.rmSync(dir, {recursive: true});
  const compared = identical + different.length;
  console.log(`libonnx-testdata: ${models.length} models, ORT loads ${compared} (${ortRejected} rejected by ORT); ` +
              `memplan's config is byte-identical on ${identical}`);
  for (const d of different) console.log(`DIFFERENT ${d}`);
  const expected = Number(expectedText);
  const ok = different.length === 0 && identical >= expected;
  if (identical < expected) console.log(`FAIL: ${identical} identical, expected at least ${expected}`);
  console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
  process.exit(ok ? 0 : 1);
})().catch(e => { console.error(e.message); process.exit(1); });
