#!/usr/bin/python3
"""Hand-made models, one per rule of ONNX Runtime's memory pattern that memplan plan --like ort follows
(docs/planning.md: What ONNX Runtime really reserves). Writes them into DIR and prints their paths.
usage: make_rule_models.py DIR"""
import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(name, nodes, inputs, outputs, opset=14, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    print(path)


f = lambda name, dims: h.make_tensor_value_info(name, T.FLOAT, dims)

# 1. A buffer taken from the freelist is the original allocation: d takes a's freed buffer (the same shape), so ORT
#    holds those bytes from a's definition to d's last read, across the gap where w (the same size, another shape,
#    so not reusable) could have used them: 8 KiB, where per-value intervals would need 4 KiB.
save("rule1_reuse_chain", [
    h.make_node("Sin", ["x"], ["a"], name="n_a"),                            # 4 KiB
    h.make_node("ReduceSum", ["a"], ["s"], name="n_s", keepdims=1),          # a dies
    h.make_node("Expand", ["s", "wide"], ["w"], name="n_w"),                 # 4 KiB, [2, 512]
    h.make_node("ReduceSum", ["w"], ["t"], name="n_t", keepdims=1),          # w dies
    h.make_node("Expand", ["t", "long"], ["d"], name="n_d"),                 # [1, 1024]: reuses a's buffer
    h.make_node("Sin", ["d"], ["y"], name="n_y"),
], [f("x", [1, 1024])], [f("y", [1, 1024])], opset=13,
    inits=[h.make_tensor("wide", T.INT64, [2], [2, 512]), h.make_tensor("long", T.INT64, [2], [1, 1024])])

# 2. An output nobody reads gets no release action: TopK's indices stay allocated to the end of the run.
save("rule2_unread_output", [
    h.make_node("TopK", ["x", "k"], ["v", "i"], name="topk"),
    h.make_node("Sin", ["v"], ["s"], name="sin"),
    h.make_node("Concat", ["s", "s"], ["w"], name="cat", axis=1),
    h.make_node("Cos", ["w"], ["y"], name="cos"),
], [f("x", [1, 1024])], [f("y", [1, 1024])], inits=[h.make_tensor("k", T.INT64, [1], [512])])

# 3. Clip runs in place at every opset on ORT's CPU provider (ReLU6 in a model importing opset 14).
save("rule3_clip_inplace", [
    h.make_node("Conv", ["x", "wt"], ["c"], name="conv"),
    h.make_node("Clip", ["c", "lo", "hi"], ["r"], name="relu6"),
    h.make_node("Conv", ["r", "wt"], ["y"], name="conv2"),
], [f("x", [1, 8, 16, 16])], [f("y", [1, 8, 16, 16])],
    inits=[h.make_tensor("wt", T.FLOAT, [8, 8, 1, 1], [0.0] * 64), h.make_tensor("lo", T.FLOAT, [], [0.0]),
           h.make_tensor("hi", T.FLOAT, [], [6.0])])

# 4. ORT decides in-place from the shapes it knows at load time: the Reshape's target comes from the input's
#    runtime shape, so ORT has no static shape for q4 and Softmax does not run in place of it.
save("rule4_runtime_shape", [
    h.make_node("Sin", ["x"], ["q"], name="sin"),
    h.make_node("Shape", ["q"], ["qs"], name="shape"),
    h.make_node("Gather", ["qs", "zero"], ["b"], name="gather", axis=0),
    h.make_node("Unsqueeze", ["b", "axes"], ["b1"], name="unsq"),
    h.make_node("Concat", ["b1", "tail"], ["ns"], name="cat", axis=0),
    h.make_node("Reshape", ["q", "ns"], ["q4"], name="reshape"),
    h.make_node("Softmax", ["q4"], ["p"], name="softmax"),
    h.make_node("Reshape", ["p", "back"], ["y"], name="back"),
], [f("x", ["batch", 64])], [f("y", ["batch", 64])],
    inits=[h.make_tensor("zero", T.INT64, [], [0]), h.make_tensor("axes", T.INT64, [1], [0]),
           h.make_tensor("tail", T.INT64, [2], [4, 16]), h.make_tensor("back", T.INT64, [2], [-1, 64])])

# 5. ORT's placement counts the room between the top of the live blocks and the peak so far as a gap like any
#    other. ORT runs n4 r4 n3 r3 n2 r2 n1 n0: when r2 (4 B) is placed, the live blocks are r3 at 0, r4 at 5,632
#    and t2 at 5,888-13,056 under a peak of 15,616; the room above t2 wastes less than the hole at 256, so r2
#    goes to 13,056, and t1 (7,936 B) then fits nowhere below the peak: 21,248 B, where a best fit over the holes
#    alone needs 15,616 B. (The ReduceSums free their inputs; the lengths differ, so ORT reuses nothing.)
lengths = [640, 1984, 1792, 2432, 1408]
nodes = []
for k in range(5):
    nodes.append(h.make_node("Sin", [f"i{k}"], [f"t{k}"], name=f"n{k}"))
    if k >= 2:
        nodes.append(h.make_node("ReduceSum", [f"t{k}"], [f"r{k}"], name=f"r{k}", keepdims=1))
nodes.append(h.make_node("Concat", ["r3", "r2", "t1", "r4", "t0"], ["out"], name="cat", axis=0))
save("rule5_top_gap", nodes, [f(f"i{k}", [n]) for k, n in enumerate(lengths)], [f("out", [2627])], opset=13)
