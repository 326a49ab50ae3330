// memplan reorder against ONNX Runtime 1.30 itself, for each MODEL[:dim=V,...]:
//  1. ORT runs the reordered model with the same inputs and weights (random, staged alike) to bit-identical outputs;
//  2. ORT's DEFAULT order on the reordered file is the one memplan predicted (its partition config, which lists the
//     nodes in execution order, byte-identical to `memplan partition` of the new file);
//  3. ORT's measured activation block (scripts/ort-measure) is never higher than for the original, and the table
//     prints both beside memplan's live peaks.
// usage: node ort_reorder.js MEMPLAN NODE_MODULES_DIR MODEL[:dim=V,...] ...
const {execFileSync, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, ...specs] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));
const measure = path.join(__dirname, '..', '..', 'scripts', 'ort-measure');

const fill = {
  float: n => Float32Array.from({length: n}, (_, i) => Math.sin(i) * 0.5), double: n => new Float64Array(n),
  int32: n => new Int32Array(n), int64: n => BigInt64Array.from({length: n}, (_, i) => BigInt((i * 7) % 50)),
  bool: n => Uint8Array.from({length: n}, (_, i) => i % 2), uint8: n => new Uint8Array(n),
};

async function run(staged, feeds, config) {
  const session = await ort.InferenceSession.create(
      staged, {graphOptimizationLevel: 'disabled', extra: {session: {node_partition_config_file: config}}});
  const out = await session.run(feeds);
  await session.release();
  return out;
}

function sameOutputs(a, b) {
  for (const name of Object.keys(a)) {
    if (!(name in b)) return `${name} missing`;
    const x = a[name].data, y = b[name].data;
    if (x.length !== y.length) return `${name}: length ${x.length} vs ${y.length}`;
    for (let i = 0; i < x.length; i++)
      if (x[i] !== y[i] && !(Number.isNaN(x[i]) && Number.isNaN(y[i]))) return `${name}[${i}]: ${x[i]} vs ${y[i]}`;
  }
  return null;
}

const mib = b => (b / 1048576).toFixed(2) + ' MiB';

(async () => {
  let failed = 0;
  const rows = [];
  for (const spec of specs) {
    const [model, dimText] = spec.split(':');
    const dimArgs = (dimText ? dimText.split(',') : []).flatMap(d => ['--dim', d]);
    const label = path.basename(model);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-reorder-'));
    fs.mkdirSync(path.join(dir, 'new'));
    const reordered = path.join(dir, 'new', path.basename(model));
    const reorder = spawnSync(memplan, ['reorder', model, ...dimArgs, '-o', reordered], {encoding: 'utf8'});
    if (reorder.status !== 0) throw new Error(`memplan reorder ${model} failed:\n${reorder.stderr}`);
    const said = reorder.stderr;
    const stage = (m, sub) => {
      fs.mkdirSync(path.join(dir, sub));
      return execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), m, path.join(dir, sub),
                                               '--random-weights']).toString().trim();
    };
    const before = stage(model, 'a'), after = stage(reordered, 'b');
    const info = JSON.parse(execFileSync(memplan, ['inspect', '--json', ...dimArgs, model]));
    const feeds = {};
    for (const input of info.inputs) {
      const n = input.shape.reduce((a, b) => a * b, 1);
      const ortType = {float: 'float32', double: 'float64'}[input.dtype] || input.dtype;
      feeds[input.name] = new ort.Tensor(ortType, fill[input.dtype](n), input.shape);
    }
    const problems = [];
    const config = path.join(dir, 'ort.json');
    const reference = await run(before, feeds, path.join(dir, 'ort-before.json'));
    const result = await run(after, feeds, config);
    const diff = sameOutputs(reference, result);
    if (diff) problems.push(`outputs differ: ${diff}`);
    const predicted = execFileSync(memplan, ['partition', ...dimArgs, reordered], {stdio: ['ignore', 'pipe', 'ignore']})
                          .toString().replace(/\n$/, '');
    if (predicted !== fs.readFileSync(config, 'utf8')) problems.push('ORT runs another order than memplan predicted');
    const block = m => JSON.parse(execFileSync(measure, [m, ...dimArgs, '--memplan', memplan, '--modules', modules,
                                                         '--json'], {stdio: ['ignore', 'pipe', 'inherit']})).ort_block;
    const blockBefore = block(model), blockAfter = block(reordered);
    if (blockAfter > blockBefore) problems.push(`ORT's block grew: ${blockBefore} -> ${blockAfter}`);
    const peaks = said.match(/order ([0-9.]+ [KMG]?i?B) -> ([0-9.]+ [KMG]?i?B)/);
    rows.push(`| ${label} | ${peaks ? peaks[1] : '?'} | ${peaks ? peaks[2] : '?'} | ${mib(blockBefore)} | ${mib(blockAfter)} | ` +
              `${(100 * (blockBefore - blockAfter) / blockBefore).toFixed(1)}% |`);
    if (problems.length) {
      failed++;
      console.log(`FAIL ${label}: ${problems.join('; ')}`);
    } else {
      console.log(`ok   ${label}: outputs bit-identical, ORT runs the predicted order, block ${blockBefore} -> ${blockAfter} B`);
    }
    fs.rmSync(dir, {recursive: true, force: true});
  }
  console.log('\n| model | live peak, ORT order | after reorder | ORT block | after reorder | change |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  if (failed) {
    console.log(`${failed} of ${specs.length} models failed`);
    process.exit(1);
  }
})().catch(e => {
  console.error(e);
  process.exit(1);
});
