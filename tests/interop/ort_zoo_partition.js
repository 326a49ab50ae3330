// memplan partition against ONNX Runtime 1.30 on every model of the zoo (zoo/, see scripts/zoo-export):
// ORT loads each model (absent weights staged as sparse zeros, graph optimizations off) and writes its
// own partition config; memplan's must be byte-identical.
// usage: node ort_zoo_partition.js MEMPLAN NODE_MODULES_DIR ZOO_DIR
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, zoo] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));

(async () => {
  const models = execFileSync('find', [zoo, '-name', '*.onnx']).toString().trim().split('\n').sort();
  let identical = 0;
  const different = [];
  for (const model of models) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-zoo-'));
    try {
      const staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir])
                         .toString().trim();
      const config = path.join(dir, 'ort.json');
      const session = await ort.InferenceSession.create(
          staged, {graphOptimizationLevel: 'disabled', extra: {session: {node_partition_config_file: config}}});
      await session.release();
      const theirs = fs.readFileSync(config, 'utf8');
      const ours = execFileSync(memplan, ['partition', model], {stdio: ['ignore', 'pipe', 'ignore']})
                       .toString().replace(/\n$/, '');
      if (ours === theirs)
        identical++;
      else
        different.push(`${model}\n  memplan ${ours.slice(0, 400)}\n  ORT     ${theirs.slice(0, 400)}`);
    } catch (e) {
      different.push(`${model}: ${e.message.split('\n')[0]}`);
    } finally {
      fs.rmSync(dir, {recursive: true, force: true});
    }
  }
  console.log(`zoo: ${models.length} models; memplan's partition config is byte-identical to ORT's on ${identical}`);
  for (const d of different) console.log(`DIFFERENT ${d}`);
  const ok = different.length === 0 && identical > 0;
  console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
  process.exit(ok ? 0 : 1);
})().catch(e => { console.error(e.message); process.exit(1); });
