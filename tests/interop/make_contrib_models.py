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


def save_graph(name, nodes, inputs, outputs, inits, dims):
    """A model of several nodes (ONNX opset 14 and com.microsoft 1), saved as NAME.onnx; prints path:dims."""
    g = h.make_graph(nodes, name, inputs, outputs, initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 14), h.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    path = os.path.join(out, name + ".onnx")
    onnx.save(m, path)
    print(path + ":" + dims)


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

# The rest of the CPU provider's contrib kernels (contrib_more.cc).
node_inputs("a", "b")
save("ms_TransposeMatMul", "TransposeMatMul", [("a", F, [2, 5, 4]), ("b", F, [2, 6, 5])], ["y"], transA=1, transB=1)
node_inputs("data", "idx")
save("ms_GatherND", "GatherND", [("data", F, [3, 4, 5])], ["y"], inits=[arr("idx", [2, 6, 2], np.int64, 1)])
node_inputs("start", "limit", "delta")
save("ms_Range", "Range", [], ["y"], inits=[arr("start", [], np.int64, 2), arr("limit", [], np.int64, 17),
                                            arr("delta", [], np.int64, 4)])
node_inputs("start", "limit")
save("ms_Range_float", "Range", [], ["y"], inits=[arr("start", [], np.float32, 0.5), arr("limit", [], np.float32, 5)])
node_inputs("x", "pads")
save("ms_Pad", "Pad", [("x", F, [2, 3, 4])], ["y"],
     inits=[numpy_helper.from_array(np.array([0, 1, 2, 1, 0, 3], np.int64), "pads")])
for axis in (0, 2, -1):
    node_inputs("x", "axis")
    save(f"ms_ExpandDims_{axis}".replace("-", "m"), "ExpandDims", [("x", F, [2, 3])], ["y"],
         inits=[arr("axis", [], np.int32, axis)])
save("ms_Trilu", "Trilu", [("x", F, [2, 4, 5])], ["y"], upper=0)
save("ms_Inverse", "Inverse", [("x", F, [2, 3, 3])], ["y"])
for positive in (0, 1):
    save(f"ms_MurmurHash3_{positive}", "MurmurHash3", [("x", T.INT32, [2, 7])], ["y"], positive=positive)
save("ms_CDist", "CDist", [("a", F, [4, 3]), ("b", F, [6, 3])], ["y"], metric=b"euclidean")
save("ms_GridSample", "GridSample", [("x", F, [1, 3, 5, 6]), ("grid", F, [1, 7, 4, 2])], ["y"])
node_inputs("ids", "scores")
save("ms_NGramRepeatBlock", "NGramRepeatBlock", [("ids", T.INT64, [2, 6]), ("scores", F, [2, 11])], ["y"],
     ngram_size=2)
node_inputs("x", "rois", "bi", "crop")
save("ms_CropAndResize", "CropAndResize", [("x", F, [2, 3, 8, 9])], ["y"],
     inits=[arr("rois", [5, 4], np.float32, 0.25), arr("bi", [5], np.int32, 1), 
            numpy_helper.from_array(np.array([4, 6], np.int32), "crop")])
save("ms_UnfoldTensor", "UnfoldTensor", [("x", F, [2, 10, 3])], ["y"], dim=1, size=4, step=3)
node_inputs("a", "b", "absmax")
save("ms_MatMulBnb4", "MatMulBnb4", [("a", F, [2, 3, 64])], ["y"],
     inits=[arr("b", [24 * 64 // 2], np.uint8, 0x11), arr("absmax", [24 * 64 // 32], np.float32, 1.0)], K=64, N=24,
     block_size=32, quant_type=1)
for shape in ([10, 8], [10, 3, 8]):  # a uint8 table packs two 4-bit values per byte (gather_axis 0 only)
    node_inputs("data", "idx", "scales")
    save(f"ms_GatherBlockQuantized_{len(shape)}d", "GatherBlockQuantized", [("idx", T.INT64, [2, 5])], ["y"],
         inits=[arr("data", shape, np.uint8, 0x11), arr("scales", shape[:-1] + [1], np.float32, 0.1)],
         gather_axis=0, quantize_axis=len(shape) - 1, block_size=16, bits=4)
# One decoding step with a shared cache: past (B, heads, max length, head), past length 3.
node_inputs("q", "k", "v", "", "", "past_k", "past_v", "plen")
save("ms_DecoderMaskedMultiHeadAttention", "DecoderMaskedMultiHeadAttention",
     [("q", F, [2, 1, 16]), ("k", F, [2, 1, 16]), ("v", F, [2, 1, 16]), ("past_k", F, [2, 4, 8, 4]),
      ("past_v", F, [2, 4, 8, 4])], ["y", "present_k", "present_v"],
     inits=[arr("plen", [1], np.int32, 3)], num_heads=4, past_present_share_buffer=1)
node_inputs("c", "x", "x_s", "x_z", "y", "y_s", "y_z", "z_s", "z_z")
save("ms_QLinearWhere", "QLinearWhere", [("c", T.BOOL, [2, 1, 4]), ("x", U8, [3, 1]), ("y", U8, [4])], ["z"],
     inits=qparams("x", "y", "z"))
for last, shape in ((0, [1, 4, 9, 9]), (1, [1, 9, 9, 4])):
    node_inputs("x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "bias")
    save(f"ms_QLinearConv_{last}", "QLinearConv", [("x", U8, shape)], ["y"],
         inits=qparams("x") + [arr("w", [8, 4, 3, 3], u8, 3), arr("w_s", [], np.float32, 0.1),
                               arr("w_z", [], u8, 0)] + qparams("y") + [arr("bias", [8], np.int32, 0)],
         strides=[2, 2], pads=[1, 1, 1, 1], channels_last=last)
save("ms_NhwcMaxPool", "NhwcMaxPool", [("x", U8, [1, 9, 10, 4])], ["y"], kernel_shape=[3, 3], strides=[2, 2],
     pads=[1, 0, 1, 1])
save("ms_MatMulInteger16", "MatMulInteger16", [("a", T.INT16, [2, 3, 4]), ("b", T.INT16, [4, 5])], ["y"])
for past in (False, True):
    node_inputs("x", "w", "bias", "x_s", "w_s", "", "x_z", "w_z", *(["past"] if past else []))
    save(f"ms_QAttention{'_past' if past else ''}", "QAttention",
         [("x", U8, [2, 5, 16])] + ([("past", F, [2, 2, 4, 3, 4])] if past else []), ["y", "present"],
         inits=[arr("w", [16, 48], u8, 1), arr("bias", [48]), arr("x_s", [], np.float32, 0.1),
                arr("w_s", [], np.float32, 0.1), arr("x_z", [], u8, 128), arr("w_z", [], u8, 128)], num_heads=4,
         unidirectional=1 if past else 0)
node_inputs("ids", "segs", "word", "pos", "seg", "gamma", "beta", "mask", "word_s", "pos_s", "seg_s", "gamma_s",
            "beta_s", "word_z", "pos_z", "seg_z", "gamma_z", "beta_z")
save("ms_QEmbedLayerNormalization", "QEmbedLayerNormalization",
     [("ids", T.INT32, [2, 5]), ("segs", T.INT32, [2, 5]), ("mask", T.INT32, [2, 5])], ["y", "mask_index"],
     inits=[arr("word", [10, 16], u8, 3), arr("pos", [8, 16], u8, 3), arr("seg", [2, 16], u8, 3),
            arr("gamma", [16], u8, 3), arr("beta", [16], u8, 3)] +
     [arr(n + "_s", [], np.float32, 0.1) for n in ("word", "pos", "seg", "gamma", "beta")] +
     [arr(n + "_z", [], u8, 0) for n in ("word", "pos", "seg", "gamma", "beta")])
for direction, dirs in (("forward", 1), ("bidirectional", 2)):
    node_inputs("x", "w", "r", "", "", "", "", "", "w_s", "w_z", "r_s", "r_z")
    save(f"ms_DynamicQuantizeLSTM_{direction}", "DynamicQuantizeLSTM", [("x", F, [5, 2, 3])], ["y", "y_h", "y_c"],
         inits=[arr("w", [dirs, 3, 16], np.int8, 1), arr("r", [dirs, 4, 16], np.int8, 1),
                arr("w_s", [dirs], np.float32, 0.1), arr("w_z", [dirs], np.int8, 0),
                arr("r_s", [dirs], np.float32, 0.1), arr("r_z", [dirs], np.int8, 0)],
         hidden_size=4, direction=direction.encode())

# ONNX-domain ops ORT keeps at opset 1 after ONNX removed them (old converters' models, opset 7).
for op, attrs in (("ImageScaler", {"scale": 2.0, "bias": [1.0, 2.0, 3.0]}), ("Affine", {"alpha": 2.0}),
                  ("ParametricSoftplus", {"alpha": 1.0, "beta": 1.0}), ("ScaledTanh", {"alpha": 1.0, "beta": 1.0}), ("Scale", {"scale": 3.0}),
                  ("MeanVarianceNormalization", {}), ("ThresholdedRelu", {"alpha": 0.5})):
    save(f"onnx1_{op}", op, [("x", F, [1, 3, 4, 5])], ["y"], domain="", model_opset=7, **attrs)
save("onnx1_Crop_border", "Crop", [("x", F, [1, 3, 10, 9])], ["y"], domain="", model_opset=7, border=[1, 2, 3, 1])
save("onnx1_Crop_scale", "Crop", [("x", F, [1, 3, 10, 9])], ["y"], domain="", model_opset=7, border=[1, 2, 3, 1],
     scale=[4, 5])

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
save_graph("bert_optimizer_format", nodes, [h.make_tensor_value_info(n, T.INT32, free) for n in ("ids", "segs", "mask")],
           [h.make_tensor_value_info(x, F, free + [Hd])], inits, "batch=2,seq=8")

# The same encoder as ORT's quantization tool (quantize_dynamic) writes it: QEmbedLayerNormalization, then per layer
# DynamicQuantizeLinear feeding QAttention, DynamicQuantizeMatMul projections, SkipLayerNormalization and FastGelu.
I8 = np.int8
nodes = [h.make_node("QEmbedLayerNormalization",
                     ["ids", "segs", "qword", "qpos", "qseg", "qg0", "qb0", "mask", "word_s", "pos_s", "seg_s", "g0_s",
                      "b0_s", "word_z", "pos_z", "seg_z", "g0_z", "b0_z"], ["emb0", "mask_index"], name="embed",
                     domain="com.microsoft", epsilon=1e-12)]
inits = [arr("qword", [V, Hd], u8, 3), arr("qpos", [16, Hd], u8, 3), arr("qseg", [2, Hd], u8, 3),
         arr("qg0", [Hd], u8, 3), arr("qb0", [Hd], u8, 3)]
inits += [arr(n + "_s", [], np.float32, 0.01) for n in ("word", "pos", "seg", "g0", "b0")]
inits += [arr(n + "_z", [], u8, 0) for n in ("word", "pos", "seg", "g0", "b0")]
x = "emb0"
for i in range(2):
    p = f"l{i}_"
    inits += [arr(p + "qkv_w", [Hd, 3 * Hd], u8, 1), arr(p + "qkv_b", [3 * Hd]), arr(p + "qkv_ws", [], np.float32, 0.01),
              arr(p + "qkv_wz", [], u8, 128), arr(p + "wo", [Hd, Hd], I8, 1), arr(p + "wo_s", [], np.float32, 0.01),
              arr(p + "bo", [Hd]), arr(p + "g1", [Hd]), arr(p + "b1", [Hd]), arr(p + "w1", [Hd, FF], I8, 1),
              arr(p + "w1_s", [], np.float32, 0.01), arr(p + "bf", [FF]), arr(p + "w2", [FF, Hd], I8, 1),
              arr(p + "w2_s", [], np.float32, 0.01), arr(p + "bo2", [Hd]), arr(p + "g2", [Hd]), arr(p + "b2", [Hd])]
    nodes += [h.make_node("DynamicQuantizeLinear", [x], [p + "xq", p + "xs", p + "xz"], name=p + "quant"),
              h.make_node("QAttention", [p + "xq", p + "qkv_w", p + "qkv_b", p + "xs", p + "qkv_ws", "mask_index",
                                         p + "xz", p + "qkv_wz"], [p + "att"], name=p + "attention",
                          domain="com.microsoft", num_heads=4),
              h.make_node("DynamicQuantizeMatMul", [p + "att", p + "wo", p + "wo_s"], [p + "ao"], name=p + "proj",
                          domain="com.microsoft"),
              h.make_node("SkipLayerNormalization", [p + "ao", x, p + "g1", p + "b1", p + "bo"], [p + "ln1"],
                          name=p + "skip1", domain="com.microsoft", epsilon=1e-12),
              h.make_node("DynamicQuantizeMatMul", [p + "ln1", p + "w1", p + "w1_s"], [p + "ff1"], name=p + "ff1",
                          domain="com.microsoft"),
              h.make_node("FastGelu", [p + "ff1", p + "bf"], [p + "act"], name=p + "gelu", domain="com.microsoft"),
              h.make_node("DynamicQuantizeMatMul", [p + "act", p + "w2", p + "w2_s"], [p + "ff2"], name=p + "ff2",
                          domain="com.microsoft"),
              h.make_node("SkipLayerNormalization", [p + "ff2", p + "ln1", p + "g2", p + "b2", p + "bo2"], [p + "out"],
                          name=p + "skip2", domain="com.microsoft", epsilon=1e-12)]
    x = p + "out"
save_graph("bert_quantized_format", nodes, [h.make_tensor_value_info(n, T.INT32, free) for n in ("ids", "segs", "mask")],
           [h.make_tensor_value_info(x, F, free + [Hd])], inits, "batch=2,seq=8")

# A quantized two-layer LSTM (quantize_dynamic's DynamicQuantizeLSTM) with free batch and sequence dims.
nodes, inits, x = [], [], "x"
for i, (direction, dirs) in enumerate((("bidirectional", 2), ("forward", 1))):
    p = f"lstm{i}_"
    width = 8 if i == 0 else 2 * 6
    inits += [arr(p + "w", [dirs, width, 24], I8, 1), arr(p + "r", [dirs, 6, 24], I8, 1),
              arr(p + "ws", [dirs], np.float32, 0.01), arr(p + "wz", [dirs], I8, 0),
              arr(p + "rs", [dirs], np.float32, 0.01), arr(p + "rz", [dirs], I8, 0),
              numpy_helper.from_array(np.array([0, 0, -1], np.int64), p + "shape")]
    nodes += [h.make_node("DynamicQuantizeLSTM", [x, p + "w", p + "r", "", "", "", "", "", p + "ws", p + "wz", p + "rs",
                                                  p + "rz"], [p + "y", p + "h", p + "c"], name=p + "lstm",
                          domain="com.microsoft", hidden_size=6, direction=direction.encode()),
              h.make_node("Transpose", [p + "y"], [p + "yt"], name=p + "t", perm=[0, 2, 1, 3]),
              h.make_node("Reshape", [p + "yt", p + "shape"], [p + "out"], name=p + "flat")]
    x = p + "out"
save_graph("lstm_quantized_format", nodes, [h.make_tensor_value_info("x", F, ["seq", "batch", 8])],
           [h.make_tensor_value_info(x, F, ["seq", "batch", 6])], inits, "batch=3,seq=5")
