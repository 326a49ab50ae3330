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
const {makeFeeds, sameOutputs} = require('./ort_common');

const [memplan, modules, ...specs] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));
const measure = path.join(__dirname, '..', '..', 'scripts', 'ort-measure');


async function run(staged, feeds, config) {
  const session = await ort.InferenceSession.create(
      staged, {graphOptimizationLevel: 'disabled', extra: {session: {node_partition_config_file: config}}});
  const out = await session.run(feeds);
  await session.release();
  return out;
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
    const feeds = makeFeeds(ort, memplan, model, dimArgs);
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
    // "live peak of ORT's default order A -> B (...); memory order C, lower bound D[ (optimal)]; ... T s"
    const m = said.match(/order ([0-9.]+ \w+) -> ([0-9.]+ \w+);.*memory order ([0-9.]+ \w+), lower bound ([0-9.]+ \w+)( \(optimal\))?;.* ([0-9.]+) s/);
    const [, ortPeak, newPeak, memPeak, bound, optimal, seconds] = m || Array(7).fill('?');
    rows.push(`| ${label} | ${ortPeak} | ${newPeak} | ${memPeak} | ${bound}${optimal ? ' (optimal)' : ''} | ${seconds} s | ` +
              `${mib(blockBefore)} | ${mib(blockAfter)} | ${(100 * (blockBefore - blockAfter) / blockBefore).toFixed(1)}% |`);
    if (problems.length) {
      failed++;
      console.log(`FAIL ${label}: ${problems.join('; ')}`);
    } else {
      console.log(`ok   ${label}: outputs bit-identical, ORT runs the predicted order, block ${blockBefore} -> ${blockAfter} B`);
    }
    fs.rmSync(dir, {recursive: true, force: true});
  }
  console.log('\n| model | live peak: ORT\'s order | ORT\'s order after reorder | --order memory | bound over all orders | ' +
              'search | ORT\'s measured block | after reorder | change |');
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) console.log(r);
  if (failed) {
    console.log(`${failed} of ${specs.length} models failed`);
    process.exit(1);
  }
})().catch(e => {
  console.error(e);
  process.exit(1);
});
