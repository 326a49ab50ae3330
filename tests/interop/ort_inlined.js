// ORT's load-time function expansion, compared with memplan's on every model of ONNX's backend test data
// (and the given extra models) that holds an op ORT expands: ORT saves the graph it runs
// (optimizedModelFilePath, optimizations disabled), and memplan's main graph must have as many nodes, in the
// same execution order by op type, and every value ORT's nodes produce, under the same name.
// usage: node ort_inlined.js MEMPLAN NODE_MODULES_DIR TESTDATA_DIR [MODEL...]
const {execFileSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const [memplan, modules, testdata, ...extra] = process.argv.slice(2);
const ort = require(path.resolve(modules, 'onnxruntime-node'));
const expanded = ['HardSwish', 'CastLike', 'SoftmaxCrossEntropyLoss', 'NegativeLogLikelihoodLoss', 'Bernoulli',
                  'SequenceMap'];

function graphOf(model) {  // [op type, name, outputs] per node, through /usr/bin/python3 and python3-onnx
  const code = 'import onnx,sys,json\nm=onnx.load(sys.argv[1], load_external_data=False)\n' +
               'print(json.dumps([[n.op_type, n.name, list(n.output)] for n in m.graph.node]))';
  return JSON.parse(execFileSync('/usr/bin/python3', ['-c', code, model]).toString());
}

(async () => {
  // The backend models holding an op ORT expands, found by one python3-onnx process.
  const scan = 'import onnx,sys,glob\nfor f in sorted(glob.glob(sys.argv[1] + "/**/model.onnx", recursive=True)):\n' +
               '  m = onnx.load(f, load_external_data=False)\n' +
               '  if any(n.op_type in sys.argv[2:] for n in m.graph.node): print(f)';
  const candidates = execFileSync('/usr/bin/python3', ['-c', scan, testdata, ...expanded]).toString().trim().split('\n')
                         .filter(Boolean);  // (none: a directory without backend tests, only the extra models)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memplan-inlined-'));
  let same = 0;
  const different = [];
  for (const model of [...candidates, ...extra]) {
    const saved = path.join(dir, 'ort.onnx');
    try {
      const staged = execFileSync('/usr/bin/python3', [path.join(__dirname, 'stage_model.py'), model, dir])
                         .toString().trim();
      const s = await ort.InferenceSession.create(staged, {graphOptimizationLevel: 'disabled', optimizedModelFilePath: saved});
      await s.release();
    } catch (e) {
      continue;  // ORT rejects the model (e.g. a type it has no kernel for): nothing to compare
    }
    const theirs = graphOf(saved);
    const info = JSON.parse(execFileSync(memplan, ['inspect', '--json', '--values', model], {maxBuffer: 1 << 30}));
    const ours = new Set(info.value_list.map(v => v.name));
    // ORT saves nodes in its execution order; unnamed ones are called OpType + a per-type counter in that
    // order, as in partition configs. memplan's default order must list the same names.
    const counters = {};
    const theirOps = JSON.stringify(theirs.map(([op, name]) => name || `${op}${(counters[op] = (counters[op] ?? -1) + 1)}`));
    const ourOps = JSON.stringify(info.execution_order.nodes);
    const missing = theirs.flatMap(([, , outs]) => outs).filter(o => o && !ours.has(o));
    if (theirOps === ourOps && missing.length === 0)
      same++;
    else
      different.push(`${model}: ops ${ourOps} vs ORT ${theirOps}; ORT values memplan lacks: ${missing.slice(0, 5)}`);
  }
  fs.rmSync(dir, {recursive: true, force: true});
  console.log(`function expansion: ${same + different.length} models compared with ORT's saved graph; ` +
              `${same} identical in execution order and value names`);
  for (const d of different) console.log(`DIFFERENT ${d}`);
  const ok = different.length === 0 && same > 0;
  console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
  process.exit(ok ? 0 : 1);
})().catch(e => { console.error(e.message); process.exit(1); });
