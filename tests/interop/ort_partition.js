// memplan's partition configs against ONNX Runtime 1.30 (CPU, graph optimizations off):
//  1. the config memplan generates is byte-identical to the one ORT writes for the same model;
//  2. memplan's multi-stream configs (--streams-per-device K) load in ORT, and the model gives the same
//     outputs as with ORT's default partition;
//  3. how many also load at optimization levels basic, extended and all (reported: ORT's rewrites may add
//     or fuse nodes the config does not name).
// With --ort-optimize LEVEL, each MODEL is first optimized by ORT at that level and saved (ort_optimize.js); memplan
// partitions the saved graph in the order it lists its nodes (--order written), and ORT runs the original at LEVEL:
// its config must be byte-identical, and memplan's multi-stream configs must load at LEVEL with identical outputs.
// usage: node ort_partition.js MEMPLAN NODE_MODULES_DIR [--ort-optimize LEVEL] MODEL[:dim=V,...][@K] ...
//        (@K: also run with K streams)
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const {makeFeeds, sameOutputs} = require('./ort_common');

const [memplan, modules, ...rest] = process.argv.slice(2);
const optimizeLevel = rest[0] === '--ort-optimize' ? rest[1] : null;
const specs = optimizeLevel ? rest.slice(2) : rest;
const ort = require(path.resolve(modules, 'onnxruntime-node'));


async function run(staged, feeds, config, level = 'disabled') {
  const options = {graphOptimizationLevel: level};
  if (config) options.extra = {session: {node_partition_config_file: config}};
  const session = await ort.InferenceSession.create(staged, options);
  const out = await session.run(feeds);
  await session.release();
  return out;
}


(async () => {
  let failed = 0, checks = 0;
  const levels = {};
  for (const spec of specs) {
    const [head, streams] = spec.split('@');
    let [model, dimText] = head.split(':');
    const dimArgs = (dimText ? dimText.split(',') : []).flatMap(d => ['--dim', d]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-partition-'));
    let staged;
    const orderArgs = optimizeLevel ? ['--order', 'written'] : [];
    if (optimizeLevel) {
      [model, staged] = execFileSync(process.execPath, [path.join(__dirname, 'ort_optimize.js'), modules, model,
                                                        optimizeLevel, path.join(dir, 'ort')]).toString().trim().split('\n');
    } else {
      staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir, '--random-weights'])
                   .toString().trim();
    }
    const label = path.basename(model);
    const level = optimizeLevel || 'disabled';
    // 1. ORT writes its config when the file is missing; compare bytes.
    const ortConfig = path.join(dir, 'ort.json');
    const feeds = makeFeeds(ort, memplan, model, dimArgs);
    const reference = await run(staged, feeds, ortConfig, level);
    const theirs = fs.readFileSync(ortConfig, 'utf8');
    const ours = execFileSync(memplan, ['partition', ...dimArgs, ...orderArgs, model], {stdio: ['ignore', 'pipe', 'ignore']})
                     .toString().replace(/\n$/, '');
    checks++;
    if (ours === theirs) {
      console.log(`ok   ${label}: config byte-identical to ORT's (${theirs.length} bytes)`);
    } else {
      failed++;
      const i = [...ours].findIndex((c, k) => c !== theirs[k]);
      console.log(`FAIL ${label}: configs differ at byte ${i}: memplan ...${ours.slice(i, i + 60)} / ORT ...${theirs.slice(i, i + 60)}`);
    }
    // 2. Multi-stream configs run in ORT with identical outputs.
    if (streams) {
      for (const k of streams.split(',')) {
        const ourConfig = path.join(dir, `k${k}.json`);
        execFileSync(memplan, ['partition', ...dimArgs, ...orderArgs, '--streams-per-device', k, '-o', ourConfig, model],
                     {stdio: 'ignore'});
        const used = JSON.parse(fs.readFileSync(ourConfig, 'utf8')).streams.length;
        const result = await run(staged, feeds, ourConfig, level);
        const diff = sameOutputs(reference, result);
        checks++;
        if (diff || used < 2) {
          failed++;
          console.log(`FAIL ${label} with ${k} streams per device (${used} used): ${diff || 'not split'}`);
        } else {
          console.log(`ok   ${label}: ORT runs memplan's ${used}-stream config, outputs identical`);
        }
        // 3. Optimization levels above 'disabled': ORT's rewrites may add or fuse nodes the config does not
        // name (ORT then fails with "Failed to find node"). Reported and tallied for the README, not required.
        for (const other of optimizeLevel ? [] : ['basic', 'extended', 'all']) {
          let error = null;
          try {
            await run(staged, feeds, ourConfig, other);
          } catch (e) {
            const m = /Failed to find node "[^"]*"/.exec(e.message);
            error = m ? m[0] : e.message.split('\n')[0];
          }
          levels[other] = levels[other] || [0, 0];
          levels[other][1]++;
          if (!error) levels[other][0]++;
          console.log(`note ${label}: ${used}-stream config at level ${other}: ${error ? 'rejected: ' + error : 'loads'}`);
        }
      }
    }
    fs.rmSync(dir, {recursive: true});
  }
  for (const [level, [ok, n]] of Object.entries(levels))
    console.log(`multi-stream configs at optimization level ${level}: ${ok} of ${n} load in ORT`);
  console.log(`${checks - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})().catch(e => { console.error(e.message); process.exit(1); });
