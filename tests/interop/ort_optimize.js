// Has ONNX Runtime optimize a model at a level (basic, extended, all) and save the graph it would run
// (optimizedModelFilePath): the input for checking memplan on ORT's contrib ops. The model is staged with random
// weights first (ORT needs weights to load, and some fusions look at values). Prints the optimized model's path, and
// on a second line the staged original's (to run in ORT at LEVEL: the saved graph lists its nodes in the order that
// session ran them, which memplan follows with --order written).
// usage: node ort_optimize.js NODE_MODULES_DIR MODEL LEVEL DIR
const {execFileSync} = require('child_process');
const fs = require('fs');
const path = require('path');

const [modules, model, level, dir] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));

(async () => {
  fs.mkdirSync(dir, {recursive: true});
  const staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir, '--random-weights'])
                     .toString().trim();
  const optimized = path.join(dir, `${path.basename(model, '.onnx')}-${level}.onnx`);
  const session = await ort.InferenceSession.create(staged, {graphOptimizationLevel: level,
                                                             optimizedModelFilePath: optimized, logSeverityLevel: 3});
  await session.release();
  console.log(optimized);
  console.log(staged);
})().catch(e => { console.error(e.message); process.exit(1); });
