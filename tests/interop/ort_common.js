// What the interop scripts that run a model in ONNX Runtime share: deterministic inputs for a model's graph inputs
// (from `memplan inspect --json`) and a bit-for-bit comparison of two runs' outputs.
const {execFileSync} = require('child_process');

const fill = {
  float: n => Float32Array.from({length: n}, (_, i) => Math.sin(i) * 0.5), double: n => new Float64Array(n),
  int32: n => new Int32Array(n), int64: n => BigInt64Array.from({length: n}, (_, i) => BigInt((i * 7) % 50)),
  bool: n => Uint8Array.from({length: n}, (_, i) => i % 2), uint8: n => new Uint8Array(n),
};

// Feeds for every graph input of MODEL at the given --dim arguments, the same on every call.
function makeFeeds(ort, memplan, model, dimArgs) {
  const info = JSON.parse(execFileSync(memplan, ['inspect', '--json', ...dimArgs, model]));
  const feeds = {};
  for (const input of info.inputs) {
    const n = input.shape.reduce((a, b) => a * b, 1);
    const ortType = {float: 'float32', double: 'float64'}[input.dtype] || input.dtype;
    feeds[input.name] = new ort.Tensor(ortType, fill[input.dtype](n), input.shape);
  }
  return feeds;
}

// null when every output of `a` is in `b` with the same bits (NaN equal to NaN), else where they differ.
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

module.exports = {makeFeeds, sameOutputs};
