#!/usr/bin/python3
"""One small model per ONNX op whose newest version is newer than the ONNX 1.12 memplan builds with (opsets 18-24):
the ops ONNX added since (Gelu, GroupNormalization, RMSNormalization, Attention, ...) and the ops whose inputs or
attributes changed (Reduce* taking axes as an input, Split's num_outputs, Pad's axes, Resize's aspect-ratio policy,
blocked quantization, ...). Every output of the op is a graph output, inputs have fixed shapes. Against ORT itself
(ort_sizes.js runs each and compares every output's shape and element type with memplan's), this audits memplan's
rules for them (onnx_io/src/newer_onnx_schemas.cc). Writes the models into DIR and prints their paths.
usage: make_newer_onnx_models.py DIR"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
F, I64, I32, U8, I8 = T.FLOAT, T.INT64, T.INT32, T.UINT8, T.INT8


def arr(name, values, dtype=np.float32):
    return numpy_helper.from_array(np.array(values, dtype=dtype), name)


def full(name, shape, fill=0.5, dtype=np.float32):
    return numpy_helper.from_array(np.full(shape, fill, dtype=dtype), name)


def save(name, opset, op, inputs, outputs, inits=(), order=None, **attrs):
    """inputs: [(name, elem_type, shape)] graph inputs; inits: initializers; order: the node's inputs ('' for an
    absent optional one), by default the graph inputs then the initializers."""
    names = order if order is not None else [i[0] for i in inputs] + [t.name for t in inits]
    node = h.make_node(op, names, outputs, name="op", **attrs)
    g = h.make_graph([node], name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_empty_tensor_value_info(o) for o in outputs if o], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 9 if opset >= 19 else 8
    path = os.path.join(out, f"{name}.onnx")
    onnx.save(m, path)
    print(path)


x4 = ("x", F, [2, 6, 5, 4])
x3 = ("x", F, [2, 5, 12])

# Opset 18: Bitwise ops, Col2Im, CenterCropPad, GroupNormalization, Mish, LpPool's ceil_mode, Pad's axes, Reduce*'s
# axes as an input, Resize's axes and aspect-ratio policy, Scatter's max/min, Split's num_outputs.
for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
    save(f"o18_{op}", 18, op, [("a", I32, [3, 4]), ("b", I32, [4])], ["y"])
save("o18_BitwiseNot", 18, "BitwiseNot", [("a", I32, [3, 4])], ["y"])
save("o18_Col2Im", 18, "Col2Im", [("x", F, [1, 12, 20])], ["y"],
     inits=[arr("image_shape", [5, 6], np.int64), arr("block_shape", [2, 2], np.int64)])
save("o18_Col2Im_strided", 18, "Col2Im", [("x", F, [2, 18, 4])], ["y"],
     inits=[arr("image_shape", [5, 5], np.int64), arr("block_shape", [3, 3], np.int64)], strides=[2, 2],
     pads=[1, 0, 0, 1], dilations=[1, 1])
save("o18_CenterCropPad", 18, "CenterCropPad", [("x", F, [5, 7, 3])], ["y"], inits=[arr("shape", [4, 9], np.int64)],
     axes=[0, 1])
save("o18_GroupNormalization", 18, "GroupNormalization", [x4], ["y"], inits=[full("s", [3]), full("b", [3])],
     num_groups=3)
save("o21_GroupNormalization", 21, "GroupNormalization", [x4], ["y"], inits=[full("s", [6]), full("b", [6])],
     num_groups=3)
save("o18_Mish", 18, "Mish", [x3], ["y"])
save("o18_LpPool_ceil", 18, "LpPool", [("x", F, [1, 2, 7, 7])], ["y"], kernel_shape=[2, 2], strides=[2, 2],
     ceil_mode=1)
save("o18_Pad_axes", 18, "Pad", [x4], ["y"], inits=[arr("pads", [1, 2, 0, 3], np.int64), arr("value", 0.0),
                                                      arr("axes", [1, -1], np.int64)])
save("o19_Pad_wrap", 19, "Pad", [x4], ["y"], inits=[arr("pads", [0, 0, 1, 2, 0, 0, 1, 0], np.int64)], mode="wrap")
save("o21_Pad", 21, "Pad", [x4], ["y"], inits=[arr("pads", [0, 1, 0, 0, 0, 2, 0, 0], np.int64)])
for op in ("ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare", "ReduceSum"):
    save(f"o18_{op}", 18, op, [x4], ["y"], inits=[arr("axes", [1, -1], np.int64)])
    save(f"o18_{op}_nokeep", 18, op, [x4], ["y"], inits=[arr("axes", [2], np.int64)], keepdims=0)
    save(f"o18_{op}_all", 18, op, [x4], ["y"], keepdims=0)
save("o18_ReduceMean_noop", 18, "ReduceMean", [x4], ["y"], noop_with_empty_axes=1)
save("o20_ReduceMax", 20, "ReduceMax", [x4], ["y"], inits=[arr("axes", [0], np.int64)])
save("o20_ReduceMin_bool", 20, "ReduceMin", [("x", T.BOOL, [3, 4])], ["y"], inits=[arr("axes", [1], np.int64)])
save("o18_Resize_axes", 18, "Resize", [x4], ["y"], inits=[arr("scales", [2.0, 0.5], np.float32)],
     order=["x", "", "scales"], axes=[2, 3], mode="nearest")
save("o18_Resize_not_larger", 18, "Resize", [x4], ["y"], inits=[arr("sizes", [7, 7], np.int64)],
     order=["x", "", "", "sizes"], axes=[2, 3], keep_aspect_ratio_policy="not_larger")
save("o18_Resize_not_smaller", 18, "Resize", [x4], ["y"], inits=[arr("sizes", [7, 7], np.int64)],
     order=["x", "", "", "sizes"], axes=[2, 3], keep_aspect_ratio_policy="not_smaller")
save("o18_Resize_antialias", 18, "Resize", [x4], ["y"], inits=[arr("scales", [1, 1, 0.5, 0.5], np.float32)],
     order=["x", "", "scales"], mode="linear", antialias=1)
save("o19_Resize_symmetric", 19, "Resize", [x4], ["y"], inits=[arr("scales", [1, 1, 1.5, 1.5], np.float32)],
     order=["x", "", "scales"], mode="linear", coordinate_transformation_mode="half_pixel_symmetric")
save("o18_ScatterElements_max", 18, "ScatterElements", [("x", F, [3, 4])], ["y"],
     inits=[arr("i", [[0, 1]], np.int64), arr("u", [[1.0, 2.0]])], axis=1, reduction="max")
save("o18_ScatterND_min", 18, "ScatterND", [("x", F, [3, 4])], ["y"],
     inits=[arr("i", [[0], [2]], np.int64), full("u", [2, 4])], reduction="min")
save("o18_Split_num_outputs", 18, "Split", [("x", F, [2, 7])], ["a", "b", "c"], axis=1, num_outputs=3)
save("o18_Split_even", 18, "Split", [("x", F, [6, 2])], ["a", "b"], num_outputs=2)
save("o18_Split_sizes", 18, "Split", [("x", F, [2, 7])], ["a", "b"], inits=[arr("split", [3, 4], np.int64)], axis=1)
save("o18_OptionalHasElement", 18, "OptionalHasElement", [("x", F, [3])], ["y"])

# Opset 19: pool dilations, DeformConv, Shape/Size/Reshape/Identity/Equal/Cast at new versions.
save("o19_AveragePool_dilations", 19, "AveragePool", [("x", F, [1, 2, 9, 9])], ["y"], kernel_shape=[3, 3],
     dilations=[2, 2], strides=[1, 2])
save("o19_DeformConv", 19, "DeformConv", [("x", F, [1, 2, 6, 6])], ["y"],
     inits=[full("w", [4, 2, 3, 3]), full("offset", [1, 18, 4, 4], 0.0)], kernel_shape=[3, 3])
save("o19_Shape", 19, "Shape", [x4], ["y"], start=1, end=-1)
save("o19_Size", 19, "Size", [x4], ["y"])
save("o19_Reshape", 19, "Reshape", [x4], ["y"], inits=[arr("s", [0, -1], np.int64)])
save("o19_Identity", 19, "Identity", [x4], ["y"])
save("o19_Equal", 19, "Equal", [("a", F, [3, 1]), ("b", F, [4])], ["y"])
save("o19_Cast", 19, "Cast", [x4], ["y"], to=T.FLOAT16)
save("o19_CastLike", 19, "CastLike", [x4], ["y"], inits=[arr("like", [1], np.int32)])

# Opset 20: AffineGrid, ConstantOfShape, DFT's inputs, Gelu, GridSample in N dimensions, IsInf, IsNaN.
save("o20_AffineGrid", 20, "AffineGrid", [("theta", F, [2, 2, 3])], ["y"], inits=[arr("size", [2, 3, 5, 6], np.int64)])
save("o20_AffineGrid_3d", 20, "AffineGrid", [("theta", F, [1, 3, 4])], ["y"],
     inits=[arr("size", [1, 2, 4, 5, 3], np.int64)])
save("o20_ConstantOfShape", 20, "ConstantOfShape", [], ["y"], inits=[arr("s", [3, 4], np.int64)])
save("o20_DFT", 20, "DFT", [("x", F, [2, 8, 1])], ["y"], inits=[arr("len", 6, np.int64), arr("axis", 1, np.int64)],
     order=["x", "len", "axis"])
save("o20_DFT_onesided", 20, "DFT", [("x", F, [2, 8, 1])], ["y"], inits=[arr("axis", 1, np.int64)],
     order=["x", "", "axis"], onesided=1)
save("o20_DFT_inverse", 20, "DFT", [("x", F, [3, 10, 2])], ["y"], inits=[arr("axis", -2, np.int64)],
     order=["x", "", "axis"], inverse=1)
save("o20_Gelu", 20, "Gelu", [x3], ["y"])
save("o20_Gelu_tanh", 20, "Gelu", [x3], ["y"], approximate="tanh")
save("o20_GridSample", 20, "GridSample", [("x", F, [2, 3, 5, 6]), ("grid", F, [2, 4, 7, 2])], ["y"])
save("o20_GridSample_3d", 20, "GridSample", [("x", F, [1, 2, 4, 5, 6]), ("grid", F, [1, 3, 2, 4, 3])], ["y"])
save("o20_IsInf", 20, "IsInf", [x3], ["y"])
save("o20_IsNaN", 20, "IsNaN", [x3], ["y"])

# Opset 21: blocked quantization, and the ops re-versioned for 4-bit types.
save("o21_QuantizeLinear_blocked", 21, "QuantizeLinear", [("x", F, [4, 8])], ["y"],
     inits=[full("scale", [4, 2], 0.1), full("zp", [4, 2], 0, np.int8)], axis=1, block_size=4)
save("o21_DequantizeLinear_blocked", 21, "DequantizeLinear", [("x", I8, [4, 8])], ["y"],
     inits=[full("scale", [4, 2], 0.1)], axis=1, block_size=4)
save("o21_QuantizeLinear", 21, "QuantizeLinear", [x3], ["y"], inits=[arr("scale", 0.1)])
save("o21_Flatten", 21, "Flatten", [x4], ["y"], axis=2)
save("o21_Squeeze", 21, "Squeeze", [("x", F, [3, 1, 4])], ["y"], inits=[arr("axes", [1], np.int64)])
save("o21_Unsqueeze", 21, "Unsqueeze", [("x", F, [3, 4])], ["y"], inits=[arr("axes", [0, -1], np.int64)])
save("o21_Transpose", 21, "Transpose", [x4], ["y"], perm=[3, 1, 0, 2])
save("o21_Cast", 21, "Cast", [x4], ["y"], to=T.INT32)
save("o21_QLinearMatMul", 21, "QLinearMatMul", [("a", U8, [2, 3, 4])], ["y"],
     inits=[arr("as", 0.1), arr("az", 0, np.uint8), full("b", [4, 5], 1, np.uint8), arr("bs", 0.1),
            arr("bz", 0, np.uint8), arr("ys", 0.1), arr("yz", 0, np.uint8)])

# Opset 22: ops re-versioned for more element types (same shapes).
save("o22_Conv", 22, "Conv", [("x", F, [1, 3, 8, 8])], ["y"], inits=[full("w", [4, 3, 3, 3])], strides=[2, 2])
save("o22_MaxPool", 22, "MaxPool", [("x", F, [1, 3, 8, 8])], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])
save("o22_ConvTranspose", 22, "ConvTranspose", [("x", F, [1, 3, 4, 4])], ["y"], inits=[full("w", [3, 2, 3, 3])],
     strides=[2, 2])
save("o22_LSTM", 22, "LSTM", [("x", F, [5, 2, 3])], ["y", "yh", "yc"],
     inits=[full("w", [1, 16, 3]), full("r", [1, 16, 4])], hidden_size=4)
save("o22_GRU", 22, "GRU", [("x", F, [5, 2, 3])], ["y", "yh"],
     inits=[full("w", [2, 12, 3]), full("r", [2, 12, 4])], hidden_size=4, direction="bidirectional")
save("o22_EyeLike", 22, "EyeLike", [("x", F, [3, 5])], ["y"])
save("o22_InstanceNormalization", 22, "InstanceNormalization", [x4], ["y"], inits=[full("s", [6]), full("b", [6])])
save("o22_GlobalAveragePool", 22, "GlobalAveragePool", [x4], ["y"])
save("o22_Dropout", 22, "Dropout", [x3], ["y", "mask"])
save("o22_HardSwish", 22, "HardSwish", [x3], ["y"])

# Opset 23: Attention, RMSNormalization, RotaryEmbedding.
save("o23_RMSNormalization", 23, "RMSNormalization", [x3], ["y"], inits=[full("s", [12])])
save("o23_RMSNormalization_axis", 23, "RMSNormalization", [x3], ["y"], inits=[full("s", [5, 12])], axis=1)
save("o23_RotaryEmbedding_4d", 23, "RotaryEmbedding", [("x", F, [2, 3, 5, 8])], ["y"],
     inits=[full("cos", [2, 5, 4]), full("sin", [2, 5, 4])])
save("o23_RotaryEmbedding_3d", 23, "RotaryEmbedding", [("x", F, [2, 5, 24])], ["y"],
     inits=[full("cos", [2, 5, 4]), full("sin", [2, 5, 4])], num_heads=3)
save("o23_RotaryEmbedding_ids", 23, "RotaryEmbedding", [("x", F, [2, 3, 5, 8])], ["y"],
     inits=[full("cos", [9, 4]), full("sin", [9, 4]), full("pos", [2, 5], 1, np.int64)])
save("o23_Attention_4d", 23, "Attention", [("q", F, [2, 4, 5, 8]), ("k", F, [2, 2, 7, 8]), ("v", F, [2, 2, 7, 6])],
     ["y"])
save("o23_Attention_3d", 23, "Attention", [("q", F, [2, 5, 32]), ("k", F, [2, 7, 16]), ("v", F, [2, 7, 12])], ["y"],
     q_num_heads=4, kv_num_heads=2)
save("o23_Attention_past", 23, "Attention",
     [("q", F, [2, 4, 5, 8]), ("k", F, [2, 2, 5, 8]), ("v", F, [2, 2, 5, 6]), ("pk", F, [2, 2, 3, 8]),
      ("pv", F, [2, 2, 3, 6])], ["y", "present_key", "present_value"], order=["q", "k", "v", "", "pk", "pv"])
save("o23_Attention_qk", 23, "Attention", [("q", F, [2, 4, 5, 8]), ("k", F, [2, 4, 7, 8]), ("v", F, [2, 4, 7, 8])],
     ["y", "", "", "qk"], qk_matmul_output_mode=1)
save("o23_Attention_3d_past", 23, "Attention",
     [("q", F, [1, 5, 16]), ("k", F, [1, 5, 16]), ("v", F, [1, 5, 8]), ("pk", F, [1, 2, 3, 8]),
      ("pv", F, [1, 2, 3, 4])], ["y", "present_key", "present_value"], order=["q", "k", "v", "", "pk", "pv"],
     q_num_heads=2, kv_num_heads=2)

# Opset 24: Swish, TensorScatter, TopK and the 24 versions of Attention.
save("o24_Swish", 24, "Swish", [x3], ["y"], alpha=1.5)
save("o24_TopK", 24, "TopK", [x3], ["v", "i"], inits=[arr("k", [3], np.int64)])
save("o24_TensorScatter", 24, "TensorScatter", [("cache", F, [2, 3, 8, 4]), ("update", F, [2, 3, 2, 4])], ["y"],
     inits=[arr("wi", [1, 3], np.int64)])
save("o24_Attention_4d", 24, "Attention", [("q", F, [2, 4, 5, 8]), ("k", F, [2, 2, 7, 8]), ("v", F, [2, 2, 7, 6])],
     ["y"])
