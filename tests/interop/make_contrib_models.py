#!/usr/bin/python3
"""One small model per ONNX Runtime contrib op (com.microsoft, com.microsoft.nchwc, and the ops ORT adds to the ONNX
domain at opset 1), every output of the op a graph output, inputs of fixed shapes. Against ORT itself (ort_sizes.js
runs each and compares every output's shape with memplan's), this audits memplan's shape rules for these ops.
Writes them into DIR and prints their paths.
usage: make_contrib_models.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F = T.FLOAT


def arr(name, shape, dtype=np.float32, fill=0.5):
    return numpy_helper.from_array(np.full(shape, fill, dtype=dtype), name)


def save(name, op, inputs, outputs, inits=(), domain="com.microsoft", model_opset=17, **attrs):
    """inputs: [(name, elem_type, shape)] graph inputs; inits: initializers; outputs: output names."""
    node = h.make_node(op, [i if isinstance(i, str) else i[0] for i in inputs_order(inputs, inits)], outputs,
                       name="op", domain=domain, **attrs)
    g = h.make_graph([node], name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
                     [h.make_empty_tensor_value_info(o) for o in outputs if o], initializer=list(inits))
    imports = [h.make_opsetid("", model_opset)]
    if domain:
        imports.append(h.make_opsetid(domain, 1))
    m = h.make_model(g, opset_imports=imports)
    m.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    print(path)


ORDER = {}


def inputs_order(inputs, inits):
    # node inputs in the order given by ORDER[current], defaulting to graph inputs then initializers
    return ORDER.pop("next", None) or [i[0] for i in inputs] + [t.name for t in inits]


def node_inputs(*names):
    ORDER["next"] = list(names)


x3 = ("x", F, [2, 5, 16])
# Element-wise activations: the output has the input's shape.
for op, attrs in [("Gelu", {}), ("QuickGelu", {"alpha": 1.702}), ("FastGelu", {})]:
    save(f"ms_{op}", op, [x3], ["y"], **attrs)
node_inputs("x", "b")
save("ms_FastGelu_bias", "FastGelu", [x3], ["y"], inits=[arr("b", [16])])
node_inputs("x", "b")
save("ms_BiasGelu", "BiasGelu", [x3], ["y"], inits=[arr("b", [16])])

# FusedMatMul: transposes of the last two dims and of the batch dims.
for ta, tb, tba, tbb, sa, sb in [(0, 0, 0, 0, [2, 3, 4, 5], [2, 3, 5, 6]), (1, 0, 0, 0, [2, 3, 5, 4], [5, 6]),
                                 (0, 1, 0, 0, [3, 4, 5], [3, 6, 5]), (1, 1, 0, 0, [5, 4], [6, 5]),
                                 (0, 0, 0, 0, [5], [2, 5, 6]), (0, 0, 0, 0, [2, 4, 5], [5]),
                                 (0, 0, 1, 0, [4, 2, 3, 5], [2, 3, 5, 6]), (0, 0, 0, 1, [2, 3, 4, 5], [5, 2, 3, 6]),
                                 (1, 1, 1, 1, [5, 2, 3, 4], [6, 2, 3, 5])]:
    node_inputs("a", "b")
    save(f"ms_FusedMatMul_{ta}{tb}{tba}{tbb}_{len(sa)}x{len(sb)}", "FusedMatMul", [("a", F, sa), ("b", F, sb)], ["y"],
         alpha=0.5, transA=ta, transB=tb, transBatchA=tba, transBatchB=tbb)
for ta, tb in [(0, 0), (1, 0), (0, 1), (1, 1)]:
    sa = [4, 3] if ta else [3, 4]
    sb = [5, 4] if tb else [4, 5]
    node_inputs("a", "b", "c")
    save(f"ms_FusedGemm_{ta}{tb}", "FusedGemm", [("a", F, sa), ("b", F, sb)], ["y"], inits=[arr("c", [5])],
         transA=ta, transB=tb, activation="Relu")

# FusedConv: Conv's shapes, with an optional fused sum input.
node_inputs("x", "w", "b")
save("ms_FusedConv", "FusedConv", [("x", F, [1, 3, 10, 9])], ["y"], inits=[arr("w", [8, 3, 3, 3]), arr("b", [8])],
     activation="Relu", strides=[2, 1], pads=[1, 1, 1, 0])
node_inputs("x", "w", "b", "z")
save("ms_FusedConv_sum", "FusedConv", [("x", F, [1, 4, 8, 8]), ("z", F, [1, 8, 8, 8])], ["y"],
     inits=[arr("w", [8, 2, 3, 3]), arr("b", [8])], activation="Relu", group=2, auto_pad=b"SAME_UPPER")

# Layer normalizations.
for outs in (["y"], ["y", "mean", "inv"], ["y", "mean", "inv", "sum"], ["y", "", "", "sum"]):
    tag = "".join("1" if o else "0" for o in outs)
    node_inputs("x", "skip", "gamma", "beta", "bias")
    save(f"ms_SkipLayerNormalization_{tag}", "SkipLayerNormalization", [x3, ("skip", F, [2, 5, 16])], outs,
         inits=[arr("gamma", [16]), arr("beta", [16]), arr("bias", [16])], epsilon=1e-5)
    node_inputs("x", "skip", "gamma", "bias")
    save(f"ms_SkipSimplifiedLayerNormalization_{tag}", "SkipSimplifiedLayerNormalization",
         [x3, ("skip", F, [2, 5, 16])], outs, inits=[arr("gamma", [16]), arr("bias", [16])], epsilon=1e-5)
for axis in (-1, 1):
    node_inputs("x", "scale")
    save(f"onnx1_SimplifiedLayerNormalization_{axis}", "SimplifiedLayerNormalization", [x3], ["y", "inv"],
         inits=[arr("scale", [16] if axis == -1 else [5, 16])], domain="", model_opset=14, axis=axis)
    node_inputs("x", "scale", "bias")
    save(f"onnx1_LayerNormalization_{axis}", "LayerNormalization", [x3], ["y", "mean", "inv"],
         inits=[arr("scale", [16] if axis == -1 else [5, 16]), arr("bias", [16] if axis == -1 else [5, 16])],
         domain="", model_opset=14, axis=axis)

# Attention (BERT's fused self-attention): output (B, S, v_hidden), present (2, B, heads, S + past, head_size).
node_inputs("x", "w", "bias")
save("ms_Attention", "Attention", [x3], ["y"], inits=[arr("w", [16, 48]), arr("bias", [48])], num_heads=4)
node_inputs("x", "w", "bias", "", "past")
save("ms_Attention_past", "Attention", [x3, ("past", F, [2, 2, 4, 3, 4])], ["y", "present"],
     inits=[arr("w", [16, 48]), arr("bias", [48])], num_heads=4, unidirectional=1)
node_inputs("x", "w", "bias")
save("ms_Attention_qkv_sizes", "Attention", [x3], ["y"], inits=[arr("w", [16, 40]), arr("bias", [40])],
     num_heads=4, qkv_hidden_sizes=[16, 16, 8])

# MatMulNBits: A (..., K) times a 4-bit B packed as (N, K / block, block / 2) bytes.
node_inputs("a", "b", "scales")
save("ms_MatMulNBits", "MatMulNBits", [("a", F, [2, 3, 64])],
     ["y"], inits=[arr("b", [24, 2, 16], np.uint8, 0x11), arr("scales", [48], np.float32, 0.1)], K=64, N=24, bits=4,
     block_size=32)

# RotaryEmbedding: the output has the input's shape.
node_inputs("x", "pos", "cos", "sin")
save("ms_RotaryEmbedding", "RotaryEmbedding", [x3], ["y"],
     inits=[arr("pos", [2, 5], np.int64, 0), arr("cos", [8, 4]), arr("sin", [8, 4])], num_heads=2)

# NCHWc layout ops (ORT's CPU provider at level 'all'): blocked channels, padded to the block size.
N = "com.microsoft.nchwc"
save("nchwc_ReorderInput", "ReorderInput", [("x", F, [1, 20, 5, 5])], ["y"], domain=N)
save("nchwc_ReorderInput_last", "ReorderInput", [("x", F, [1, 5, 5, 20])], ["y"], domain=N, channels_last=1)
save("nchwc_ReorderOutput", "ReorderOutput", [("x", F, [1, 32, 5, 5])], ["y"], domain=N, channels=20)
save("nchwc_ReorderOutput_last", "ReorderOutput", [("x", F, [1, 32, 5, 5])], ["y"], domain=N, channels=20,
     channels_last=1)
for op, attrs in [("MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2]}),
                  ("AveragePool", {"kernel_shape": [2, 2], "pads": [1, 1, 1, 1]}), ("GlobalMaxPool", {}),
                  ("GlobalAveragePool", {})]:
    save(f"nchwc_{op}", op, [("x", F, [1, 16, 9, 9])], ["y"], domain=N, **attrs)
node_inputs("x", "w", "b")
save("nchwc_Conv", "Conv", [("x", F, [1, 16, 9, 9])], ["y"], inits=[arr("w", [32, 16, 3, 3]), arr("b", [32])],
     domain=N, strides=[2, 2], pads=[1, 1, 1, 1])
save("nchwc_Upsample", "Upsample", [("x", F, [1, 16, 4, 5])], ["y"], domain=N, scales=[1, 1, 2, 3])

# Attention without a past: present (2, B, heads, S, head).
node_inputs("x", "w", "bias")
save("ms_Attention_present", "Attention", [x3], ["y", "present"], inits=[arr("w", [16, 48]), arr("bias", [48])],
     num_heads=4)

# GroupQueryAttention (ORT's LLM format): separate K/V with a past buffer, and packed QKV without one.
i32 = np.int32
node_inputs("q", "k", "v", "past_k", "past_v", "seqlens", "total")
save("ms_GroupQueryAttention_past", "GroupQueryAttention",
     [("q", F, [1, 4, 64]), ("k", F, [1, 4, 32]), ("v", F, [1, 4, 32]), ("past_k", F, [1, 2, 3, 16]),
      ("past_v", F, [1, 2, 3, 16])], ["y", "present_k", "present_v"],
     inits=[arr("seqlens", [1], i32, 6), arr("total", [], i32, 7)], num_heads=4, kv_num_heads=2)
node_inputs("q", "", "", "", "", "seqlens", "total")
save("ms_GroupQueryAttention_packed", "GroupQueryAttention", [("q", F, [1, 4, 128])], ["y", "present_k", "present_v"],
     inits=[arr("seqlens", [1], i32, 3), arr("total", [], i32, 4)], num_heads=4, kv_num_heads=2)

# MultiHeadAttention: cross attention with separate K and V, and self attention with a past.
node_inputs("q", "k", "v")
save("ms_MultiHeadAttention", "MultiHeadAttention", [("q", F, [2, 5, 16]), ("k", F, [2, 6, 16]), ("v", F, [2, 6, 16])],
     ["y"], num_heads=4)
node_inputs("q", "k", "v", "", "", "", "past_k", "past_v")
save("ms_MultiHeadAttention_past", "MultiHeadAttention",
     [("q", F, [2, 5, 16]), ("k", F, [2, 5, 16]), ("v", F, [2, 5, 16]), ("past_k", F, [2, 4, 3, 4]),
      ("past_v", F, [2, 4, 3, 4])], ["y", "present_k", "present_v"], num_heads=4)

# EmbedLayerNormalization (BERT's embeddings fused): output, mask_index, embedding_sum.
node_inputs("ids", "segs", "word", "pos", "seg", "gamma", "beta", "mask")
save("ms_EmbedLayerNormalization", "EmbedLayerNormalization", [("ids", T.INT32, [2, 5]), ("segs", T.INT32, [2, 5]),
                                                               ("mask", T.INT32, [2, 5])],
     ["y", "mask_index", "sum"], inits=[arr("word", [10, 16]), arr("pos", [8, 16]), arr("seg", [2, 16]),
                                        arr("gamma", [16]), arr("beta", [16])])

# Quantized ops of ORT's quantization tools: uint8 tensors with float scales and uint8 zero points.
U8 = T.UINT8
u8 = np.uint8


def qparams(*names):
    return [t for n in names for t in (arr(n + "_s", [], np.float32, 0.05), arr(n + "_z", [], u8, 128))]


node_inputs("a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z")
save("ms_QLinearAdd", "QLinearAdd", [("a", U8, [2, 3, 4]), ("b", U8, [3, 1])], ["y"], inits=qparams("a", "b", "c"))
node_inputs("a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z")
save("ms_QLinearMul", "QLinearMul", [("a", U8, [4]), ("b", U8, [2, 3, 4])], ["y"], inits=qparams("a", "b", "c"))
for op, attrs in [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1}),
                  ("QLinearSoftmax", {"axis": -1, "opset": 13})]:
    node_inputs("x", "x_s", "x_z", "y_s", "y_z")
    save(f"ms_{op}", op, [("x", U8, [2, 3, 4])], ["y"], inits=qparams("x", "y"), **attrs)
for last in (0, 1):
    node_inputs("x", "x_s", "x_z", "y_s", "y_z")
    save(f"ms_QLinearGlobalAveragePool_{last}", "QLinearGlobalAveragePool", [("x", U8, [1, 8, 5, 6])], ["y"],
         inits=qparams("x", "y"), channels_last=last)
for last, shape in ((0, [1, 8, 9, 9]), (1, [1, 9, 10, 8])):
    for ceil in (0, 1):
        node_inputs("x", "x_s", "x_z", "y_s", "y_z")
        save(f"ms_QLinearAveragePool_{last}{ceil}", "QLinearAveragePool", [("x", U8, shape)], ["y"],
             inits=qparams("x", "y"), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 1], channels_last=last,
             ceil_mode=ceil)
node_inputs("y_s", "y_z", "a", "a_s", "a_z", "b", "b_s", "b_z")
save("ms_QLinearConcat", "QLinearConcat", [("a", U8, [2, 3, 4]), ("b", U8, [2, 5, 4])], ["y"],
     inits=qparams("y", "a", "b"), axis=1)
for tag, outs in (("float", ()), ("quantized", ("y_s", "y_z"))):
    node_inputs("a", "a_s", "a_z", "b", "b_s", "b_z", "", *outs)
    save(f"ms_QGemm_{tag}", "QGemm", [("a", U8, [3, 4])], ["y"],
         inits=qparams("a") + [arr("b", [5, 4], u8, 3), arr("b_s", [], np.float32, 0.1), arr("b_z", [], u8, 0)] +
         (qparams("y") if outs else []), transB=1)
node_inputs("a", "b", "b_s", "b_z")
save("ms_DynamicQuantizeMatMul", "DynamicQuantizeMatMul", [("a", F, [2, 3, 4])], ["y"],
     inits=[arr("b", [4, 6], np.int8, 1), arr("b_s", [], np.float32, 0.1), arr("b_z", [], np.int8, 0)])
node_inputs("a", "b", "a_s", "b_s")
save("ms_MatMulIntegerToFloat", "MatMulIntegerToFloat", [("a", U8, [2, 3, 4])], ["y"],
     inits=[arr("b", [4, 6], u8, 1), arr("a_s", [], np.float32, 0.1), arr("b_s", [], np.float32, 0.1)])
node_inputs("x", "s", "z")
save("ms_QuantizeLinear", "QuantizeLinear", [("x", F, [2, 3])], ["y"],
     inits=[arr("s", [], np.float32, 0.1), arr("z", [], u8, 128)])
node_inputs("x", "s", "z")
save("ms_DequantizeLinear", "DequantizeLinear", [("x", U8, [2, 3])], ["y"],
     inits=[arr("s", [], np.float32, 0.1), arr("z", [], u8, 128)])

# A BERT encoder as ORT's transformer optimizer (onnxruntime.transformers) writes it: EmbedLayerNormalization, then per
# layer Attention, MatMul, SkipLayerNormalization (bias folded in), MatMul, FastGelu (bias), MatMul,
# SkipLayerNormalization; free batch and sequence dims (printed with the values ort_sizes.js fixes them to).
Hd, FF, V = 32, 64, 50
nodes, inits = [], [arr("word", [V, Hd]), arr("pos", [16, Hd]), arr("seg", [2, Hd]), arr("g0", [Hd]), arr("b0", [Hd])]
nodes.append(h.make_node("EmbedLayerNormalization", ["ids", "segs", "word", "pos", "seg", "g0", "b0", "mask"],
                         ["emb0", "mask_index"], name="embed", domain="com.microsoft", epsilon=1e-12))
x = "emb0"
for i in range(2):
    p = f"l{i}_"
    inits += [arr(p + "qkv_w", [Hd, 3 * Hd], fill=0.01), arr(p + "qkv_b", [3 * Hd]), arr(p + "wo", [Hd, Hd], fill=0.01),
              arr(p + "bo", [Hd]), arr(p + "g1", [Hd]), arr(p + "b1", [Hd]), arr(p + "w1", [Hd, FF], fill=0.01),
              arr(p + "bf", [FF]), arr(p + "w2", [FF, Hd], fill=0.01), arr(p + "bo2", [Hd]), arr(p + "g2", [Hd]),
              arr(p + "b2", [Hd])]
    nodes += [h.make_node("Attention", [x, p + "qkv_w", p + "qkv_b", "mask_index"], [p + "att"], name=p + "attention",
                          domain="com.microsoft", num_heads=4),
              h.make_node("MatMul", [p + "att", p + "wo"], [p + "ao"], name=p + "proj"),
              h.make_node("SkipLayerNormalization", [p + "ao", x, p + "g1", p + "b1", p + "bo"], [p + "ln1"],
                          name=p + "skip1", domain="com.microsoft", epsilon=1e-12),
              h.make_node("MatMul", [p + "ln1", p + "w1"], [p + "ff1"], name=p + "ff1"),
              h.make_node("FastGelu", [p + "ff1", p + "bf"], [p + "act"], name=p + "gelu", domain="com.microsoft"),
              h.make_node("MatMul", [p + "act", p + "w2"], [p + "ff2"], name=p + "ff2"),
              h.make_node("SkipLayerNormalization", [p + "ff2", p + "ln1", p + "g2", p + "b2", p + "bo2"], [p + "out"],
                          name=p + "skip2", domain="com.microsoft", epsilon=1e-12)]
    x = p + "out"
free = ["batch", "seq"]
g = h.make_graph(nodes, "bert_optimizer_format",
                 [h.make_tensor_value_info(n, T.INT32, free) for n in ("ids", "segs", "mask")],
                 [h.make_tensor_value_info(x, F, free + [Hd])], initializer=inits)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("com.microsoft", 1)])
m.ir_version = 8
path = os.path.join(out, "bert_optimizer_format.onnx")
onnx.save(m, path)
print(path + ":batch=2,seq=8")
