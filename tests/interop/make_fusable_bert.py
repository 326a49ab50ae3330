#!/usr/bin/python3
"""A two-layer BERT encoder written out op by op, as exporters wrote BERT before fused ops existed (opset 12: Q, K and
V as MatMul + Add + Reshape + Transpose, the mask as Unsqueeze, Unsqueeze, Cast, 1 - mask, * -10000, Gelu through
Erf, residual Adds before LayerNormalization): the pattern ONNX Runtime's own optimizer fuses at level 'extended'
into Attention, SkipLayerNormalization and BiasGelu (onnxruntime/core/optimizer/attention_fusion.cc and its
neighbours). Run through ORT, this is the transformer-optimizer path: ORT saves the fused graph, memplan plans it.
Weights are small random values (fusions look at some of them: the mask constants, sqrt(head size)).
With --tanh the Gelu is GPT-2's tanh approximation, which ORT fuses into FastGelu instead.
Writes DIR/bert_unfused.onnx (bert_unfused_tanh.onnx) and prints its path with the dims to fix (path:batch=2,seq=8).
usage: make_fusable_bert.py DIR [--tanh]"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

out = sys.argv[1]
tanh = "--tanh" in sys.argv[2:]
os.makedirs(out, exist_ok=True)
W, HEADS, FF = 32, 4, 64
HEAD = W // HEADS
rng = np.random.default_rng(7)
inits, nodes = [], []


def weight(name, shape):
    inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.02).astype(np.float32), name))
    return name


def const(name, values, dtype=np.float32):
    inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
    return name


def node(op, inputs, output, **attrs):
    nodes.append(h.make_node(op, inputs, [output], name=output, **attrs))
    return output


const("one", 1.0)
const("minus_10000", -10000.0)
const("sqrt_head", float(np.sqrt(HEAD)))
const("heads_shape", [0, 0, HEADS, HEAD], np.int64)
const("hidden_shape", [0, 0, W], np.int64)
const("sqrt2", float(np.sqrt(2.0)))
const("half", 0.5)
const("three", 3.0)
const("gelu_cubic", 0.044715)
const("sqrt_2_over_pi", float(np.sqrt(2.0 / np.pi)))
# The mask term every layer adds to its attention scores: (1 - mask) * -10000, shaped (B, 1, 1, S).
m = node("Unsqueeze", ["mask"], "mask_u1", axes=[1])
m = node("Unsqueeze", [m], "mask_u2", axes=[2])
m = node("Cast", [m], "mask_float", to=T.FLOAT)
m = node("Sub", ["one", m], "mask_inverted")
mask_term = node("Mul", [m, "minus_10000"], "mask_term")


def layer_norm(x, name):
    return node("LayerNormalization", [x, weight(name + "_scale", [W]), weight(name + "_bias", [W])], name,
                axis=-1, epsilon=1e-12)


def projection(x, name, perm):
    y = node("MatMul", [x, weight(name + "_w", [W, W])], name + "_mm")
    y = node("Add", [y, weight(name + "_b", [W])], name + "_add")
    y = node("Reshape", [y, "heads_shape"], name + "_heads")
    return node("Transpose", [y], name + "_t", perm=perm)


x = layer_norm("embeddings", "embed_ln")
for i in range(2):
    p = f"l{i}_"
    q = projection(x, p + "q", [0, 2, 1, 3])
    k = projection(x, p + "k", [0, 2, 3, 1])
    v = projection(x, p + "v", [0, 2, 1, 3])
    s = node("MatMul", [q, k], p + "scores")
    s = node("Div", [s, "sqrt_head"], p + "scaled")
    s = node("Add", [s, mask_term], p + "masked")
    s = node("Softmax", [s], p + "probs", axis=3)
    a = node("MatMul", [s, v], p + "context")
    a = node("Transpose", [a], p + "context_t", perm=[0, 2, 1, 3])
    a = node("Reshape", [a, "hidden_shape"], p + "context_flat")
    a = node("MatMul", [a, weight(p + "o_w", [W, W])], p + "o_mm")
    a = node("Add", [a, weight(p + "o_b", [W])], p + "o_add")
    a = node("Add", [a, x], p + "residual1")
    ln1 = layer_norm(a, p + "ln1")
    f = node("MatMul", [ln1, weight(p + "ff1_w", [W, FF])], p + "ff1_mm")
    f = node("Add", [f, weight(p + "ff1_b", [FF])], p + "ff1_add")
    if tanh:  # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        g = node("Pow", [f, "three"], p + "gelu_cube")
        g = node("Mul", [g, "gelu_cubic"], p + "gelu_cubic_term")
        g = node("Add", [f, g], p + "gelu_inner")
        g = node("Mul", [g, "sqrt_2_over_pi"], p + "gelu_scaled")
        g = node("Tanh", [g], p + "gelu_tanh")
        g = node("Add", [g, "one"], p + "gelu_add")
        half = node("Mul", [f, "half"], p + "gelu_half")
        g = node("Mul", [g, half], p + "gelu")
    else:  # x 0.5 (1 + erf(x / sqrt(2)))
        g = node("Div", [f, "sqrt2"], p + "gelu_div")
        g = node("Erf", [g], p + "gelu_erf")
        g = node("Add", [g, "one"], p + "gelu_add")
        g = node("Mul", [f, g], p + "gelu_mul")
        g = node("Mul", [g, "half"], p + "gelu")
    f = node("MatMul", [g, weight(p + "ff2_w", [FF, W])], p + "ff2_mm")
    f = node("Add", [f, weight(p + "ff2_b", [W])], p + "ff2_add")
    f = node("Add", [f, ln1], p + "residual2")
    x = layer_norm(f, p + "ln2")

free = ["batch", "seq"]
graph = h.make_graph(nodes, "bert_unfused",
                     [h.make_tensor_value_info("embeddings", T.FLOAT, free + [W]),
                      h.make_tensor_value_info("mask", T.INT64, free)],
                     [h.make_tensor_value_info(x, T.FLOAT, free + [W])], initializer=inits)
# Opset 12: ORT's fusions match the op versions of the exporters they were written for (Add 7, Reshape 5, ...), and
# LayerNormalization is ORT's own ONNX-domain op there.
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 12)])
model.ir_version = 7
path = os.path.join(out, "bert_unfused_tanh.onnx" if tanh else "bert_unfused.onnx")
onnx.save(model, path)
print(path + ":batch=2,seq=8")
