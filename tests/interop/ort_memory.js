// ONNX Runtime 1.30's real activation block (scripts/ort-measure: the memory pattern ORT reserves per run, read
// from its profile) against memplan's figures, for each MODEL[:dim=V,...]:
//  1. memplan's own plan never needs more than ORT reserves for the same graph;
//  2. on the models marked '=', memplan's prediction (memplan plan --like ort) equals ORT's block byte for byte, and
//     its reuse decisions are ORT's: the arena bytes in use after every kernel of ORT's run 1 equal the plan's
//     (scripts/ort-measure --trace; compared wherever ORT runs the plan's kernels, i.e. no subgraph kernels).
// On models marked '~' the block must match and the trace is printed. The others' predictions are printed, not
// required.
// With --rule-models DIR, the hand-made models of tests/interop/make_rule_models.py (one per rule of ORT's memory
// pattern) are written there and must match too; with --op-models DIR, those of make_op_models.py (one per op and
// opset: the op table's in-place facts audited against ORT itself).
// With --ort-optimize LEVEL DIR, each MODEL is first optimized by ORT at that level and saved in DIR
// (ort_optimize.js); memplan plans the saved graph in the order it lists its nodes (--order written), and ORT runs the
// original at LEVEL: the block of the graph an ORT session at that level really runs.
// usage: node ort_memory.js MEMPLAN NODE_MODULES_DIR [--rule-models DIR] [--op-models DIR] [--ort-optimize LEVEL DIR]
//        [=|~]MODEL[:dim=V,...] ...
const {execFileSync} = require('child_process');
const path = require('path');

const [memplan, modules, ...rest] = process.argv.slice(2);
const specs = [];
let optimize = null;  // {level, dir}
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--ort-optimize') {
    optimize = {level: rest[i + 1], dir: rest[i + 2]};
    i += 2;
    continue;
  }
  if (rest[i] !== '--rule-models' && rest[i] !== '--op-models') {
    specs.push(rest[i]);
    continue;
  }
  const script = rest[i] === '--rule-models' ? 'make_rule_models.py' : 'make_op_models.py';
  const made = execFileSync('/usr/bin/python3', [path.join(__dirname, script), rest[++i]]).toString().trim().split('\n');
  for (const m of made) specs.push('=' + m + (m.includes('rule4') ? ':batch=8' : ''));
}
const measure = path.join(__dirname, '..', '..', 'scripts', 'ort-measure');
let failed = 0, exact = 0, traced = 0;
for (const spec of specs) {
  // '=': the block and the kernel-by-kernel trace must match ORT's; '~': the block must (the trace is printed).
  const mustMatch = spec.startsWith('=') || spec.startsWith('~'), traceMustMatch = spec.startsWith('=');
  let [model, dimText] = (mustMatch ? spec.slice(1) : spec).split(':');
  let ortArgs = [];
  if (optimize) {
    const [optimized, staged] = execFileSync(process.execPath, [path.join(__dirname, 'ort_optimize.js'), modules, model,
                                                                optimize.level, optimize.dir]).toString().trim().split('\n');
    model = optimized;
    ortArgs = ['--ort-model', staged, '--ort-level', optimize.level, '--order', 'written'];
  }
  const dimArgs = (dimText ? dimText.split(',') : []).flatMap(d => ['--dim', d]);
  const r = JSON.parse(execFileSync(measure, [model, ...dimArgs, '--memplan', memplan, '--modules', modules, '--json', '--trace',
                                              ...ortArgs],
                                    {stdio: ['ignore', 'pipe', 'inherit']}));
  const label = path.basename(model);
  const problems = [];
  // memplan's plan holds the bodies of If/Loop/Scan in its arena; ORT allocates them outside its block.
  const ortNeeds = r.ort_block + (r.memplan_ort_bodies || 0);
  if (r.memplan_plan > ortNeeds)
    problems.push(`memplan's plan ${r.memplan_plan} > ORT's ${r.ort_block}` +
                  (r.memplan_ort_bodies ? ` + ${r.memplan_ort_bodies} for bodies` : ''));
  if (mustMatch && r.memplan_ort_imitation !== r.ort_block)
    problems.push(`imitation ${r.memplan_ort_imitation} != ORT's ${r.ort_block}`);
  if (traceMustMatch && r.trace.differences.length) {
    const d = r.trace.differences[0];
    problems.push(`${r.trace.differences.length} kernels differ in bytes in use, first #${d.index} ${d.ort_node}: ` +
                  `ORT ${d.ort}, the plan ${d.plan}`);
  }
  if (!r.trace.note) traced++;
  if (r.memplan_ort_imitation === r.ort_block) exact++;
  if (problems.length) failed++;
  const bodies = r.memplan_ort_bodies ? ` (+${r.memplan_ort_bodies} for bodies)` : '';
  const ratio = ortNeeds ? `${(r.memplan_plan / ortNeeds).toFixed(3)}x ORT` : 'ORT needs 0';
  console.log(`${problems.length ? 'FAIL' : 'ok  '} ${label}: ORT ${r.ort_block}${bodies}, imitation ` +
              `${r.memplan_ort_imitation}, memplan ${r.memplan_plan} (${ratio}), bound ${r.lower_bound}` +
              (problems.length ? ': ' + problems.join('; ') : ''));
}
console.log(`${specs.length - failed} of ${specs.length} passed; the imitation equals ORT on ${exact}; ` +
            `kernel by kernel traces compared on ${traced}`);
process.exit(failed ? 1 : 0);
