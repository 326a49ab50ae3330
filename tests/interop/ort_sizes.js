// Checks memplan's static shapes against the shapes ONNX Runtime produces when it runs the model.
// Every node output is made a graph output (stage_model.py --all-outputs), so ORT keeps every node
// (memplan is run with --no-ort-rewrites to match); weights are zeros, inputs
// are small integers or zeros; every value ORT returns must have exactly the shape and element type memplan inferred.
// With --ort-optimize LEVEL (basic, extended, all), ORT first optimizes each model at that level and saves the graph
// it would run (optimizedModelFilePath); that graph, full of ORT's contrib ops, is what is checked.
// usage: node ort_sizes.js MEMPLAN NODE_MODULES_DIR [--ort-optimize LEVEL] MODEL[:dim=V,dim=V] ...
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, ...rest] = process.argv.slice(2);
const level = rest[0] === '--ort-optimize' ? rest[1] : null;
const specs = level ? rest.slice(2) : rest;
const ort = require(path.resolve(modules, 'onnxruntime-node'));

const typed = {
  float: n => new Float32Array(n), double: n => new Float64Array(n), int32: n => new Int32Array(n),
  int64: n => BigInt64Array.from({length: n}, (_, i) => BigInt(i % 7)), bool: n => new Uint8Array(n),
  uint8: n => new Uint8Array(n), int8: n => new Int8Array(n), int16: n => new Int16Array(n),
};

(async () => {
  let failed = 0;
  for (const spec of specs) {
    let [model, dimText] = spec.split(':');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-sizes-'));
    if (level)
      model = execFileSync(process.execPath, [path.join(__dirname, 'ort_optimize.js'), modules, model, level,
                                              path.join(dir, 'ort')]).toString().split('\n')[0];
    const dimArgs = (dimText ? dimText.split(',') : []).flatMap(d => ['--dim', d]);
    const info = JSON.parse(execFileSync(memplan, ['inspect', '--json', '--values', '--no-ort-rewrites', ...dimArgs, model],
                                         {maxBuffer: 1 << 30}));
    const ours = new Map(info.value_list.map(v => [v.name, v]));
    const staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir, '--all-outputs'])
                       .toString().trim();
    const session = await ort.InferenceSession.create(staged, {graphOptimizationLevel: 'disabled'});
    const feeds = {};
    for (const input of info.inputs) {
      const n = input.shape.reduce((a, b) => a * b, 1);
      const ortType = {float: 'float32', double: 'float64'}[input.dtype] || input.dtype;
      feeds[input.name] = new ort.Tensor(ortType, typed[input.dtype](n), input.shape);
    }
    const results = await session.run(feeds);
    await session.release();
    fs.rmSync(dir, {recursive: true});
    let compared = 0;
    const wrong = [];
    for (const [name, tensor] of Object.entries(results)) {
      const v = ours.get(name);
      compared++;
      const ortType = {float32: 'float', float64: 'double'}[tensor.type] || tensor.type;
      const same = v && Array.isArray(v.shape) && v.shape.length === tensor.dims.length &&
                   v.shape.every((d, i) => d === tensor.dims[i]) && v.dtype === ortType;
      if (!same)
        wrong.push(`${name}: memplan ${v ? v.dtype + JSON.stringify(v.shape) : 'missing'} / ORT ${ortType}[${tensor.dims}]`);
    }
    const label = path.basename(model) + (dimText ? ` (${dimText})` : '');
    if (compared === 0) wrong.push('ORT returned no values');
    if (wrong.length) {
      failed++;
      console.log(`FAIL ${label}: ${wrong.length} of ${compared} values differ; first: ${wrong.slice(0, 3).join('; ')}`);
    } else {
      console.log(`ok   ${label}: all ${compared} values have ORT's shapes and element types`);
    }
  }
  console.log(`${specs.length - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch(e => { console.error(e.message); process.exit(1); });
