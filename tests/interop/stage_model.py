#!/usr/bin/python3
"""Copies a model into DIR and, when its weights live in an absent external data file, creates that file
as a sparse file of zeros of the right size, so that ONNX Runtime can load the graph.
With --random-weights, absent float weights are filled with small random values instead of zeros (so that
outputs depend on the computation). With --all-outputs, every node output also becomes a graph output, so that running the staged model
reports the shape of every value.
usage: stage_model.py MODEL DIR [--all-outputs] [--random-weights]  (prints the staged model's path)"""
import os
import shutil
import sys

import onnx

model_path, out_dir = sys.argv[1], sys.argv[2]
model = onnx.load(model_path, load_external_data=False)
ends = {}
floats = {}  # location -> [(offset, count)] of float32 tensors
for t in model.graph.initializer:
    if t.data_location != onnx.TensorProto.EXTERNAL:
        continue
    info = {e.key: e.value for e in t.external_data}
    offset, length = int(info.get("offset", 0)), int(info.get("length", 0))
    ends[info["location"]] = max(ends.get(info["location"], 0), offset + length)
    if t.data_type == onnx.TensorProto.FLOAT:
        floats.setdefault(info["location"], []).append((offset, length // 4))
staged = os.path.join(out_dir, os.path.basename(model_path))
if "--all-outputs" in sys.argv[3:]:
    have = {o.name for o in model.graph.output}
    # Sequences and other non-tensor values cannot be fetched through onnxruntime-node: leave them out.
    inferred = onnx.shape_inference.infer_shapes(model)
    non_tensor = {v.name for v in inferred.graph.value_info if not v.type.HasField("tensor_type")}
    for node in model.graph.node:
        for name in node.output:
            if name and name not in have and name not in non_tensor and node.op_type not in ("SequenceEmpty", "SequenceInsert", "SequenceConstruct", "SplitToSequence"):
                model.graph.output.append(onnx.ValueInfoProto(name=name))
                have.add(name)
    onnx.save(model, staged)
else:
    shutil.copyfile(model_path, staged)
for location, size in ends.items():
    source = os.path.join(os.path.dirname(model_path), location)
    target = os.path.join(out_dir, location)
    if os.path.exists(source):
        shutil.copyfile(source, target)
    else:
        with open(target, "wb") as f:
            f.truncate(size)
            if "--random-weights" in sys.argv[3:]:
                import numpy as np
                rng = np.random.default_rng(1)
                for offset, count in floats.get(location, []):
                    f.seek(offset)
                    f.write((rng.standard_normal(count, dtype=np.float32) * 0.05).tobytes())
print(staged)
