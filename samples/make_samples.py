#!/usr/bin/python3
"""Builds memplan's small sample models (run with Debian's /usr/bin/python3 and python3-onnx).

Each sample shows one case a memory planner must get right. The generated .onnx files are committed;
re-run this script after changing it:  /usr/bin/python3 samples/make_samples.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = [helper.make_opsetid("", 14)]
rng = np.random.default_rng(7)


def weight(name, *shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.1, name)


def save(model, name):
    model.producer_name = "memplan samples"
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, name))
    print("wrote", name)


def residual():
    """A ResNet basic block: the skip connection keeps x alive across two convolutions."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", **conv),
        helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", **conv),
        helper.make_node("Add", ["c2", "x"], ["s"], "add"),
        helper.make_node("Relu", ["s"], ["y"], "relu2"),
    ]
    inits = [weight("w1", 16, 16, 3, 3), weight("b1", 16), weight("w2", 16, 16, 3, 3), weight("b2", 16)]
    save(helper.make_model(helper.make_graph(nodes, "residual", [x], [y], inits), opset_imports=OPSET),
         "residual.onnx")


def branches():
    """Two independent branches joined by a Concat: candidates for two streams."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 32, 32])
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a1"], "conv_a", kernel_shape=[1, 1]),
        helper.make_node("Relu", ["a1"], ["a2"], "relu_a"),
        helper.make_node("Conv", ["a2", "wa2"], ["a3"], "conv_a2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "wb"], ["b1"], "conv_b", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["b1"], ["b2"], "sigmoid_b"),
        helper.make_node("Conv", ["b2", "wb2"], ["b3"], "conv_b2", kernel_shape=[1, 1]),
        helper.make_node("Concat", ["a3", "b3"], ["y"], "concat", axis=1),
    ]
    inits = [weight("wa", 16, 8, 1, 1), weight("wa2", 16, 16, 3, 3), weight("wb", 16, 8, 3, 3),
             weight("wb2", 16, 16, 1, 1)]
    save(helper.make_model(helper.make_graph(nodes, "branches", [x], [y], inits), opset_imports=OPSET),
         "branches.onnx")


def control_flow():
    """An If and a Loop whose bodies read values of the main graph (implicit inputs)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    trips = helper.make_tensor_value_info("trips", TensorProto.INT64, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [4, 8])

    def branch(name, op):
        out = helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT, [4, 8])
        node = helper.make_node(op, ["h", "scale"], [name + "_out"], name + "_op")
        return helper.make_graph([node], name, [], [out])

    # Loop body: (iter, cond, acc) -> (cond, acc + h * scale); h and scale come from the main graph.
    it = helper.make_tensor_value_info("i", TensorProto.INT64, [])
    c_in = helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])
    acc = helper.make_tensor_value_info("acc", TensorProto.FLOAT, [4, 8])
    c_out = helper.make_tensor_value_info("c_out", TensorProto.BOOL, [])
    acc_out = helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [4, 8])
    body = helper.make_graph([
        helper.make_node("Identity", ["c_in"], ["c_out"], "body_cond"),
        helper.make_node("Mul", ["h", "scale"], ["hs"], "body_mul"),
        helper.make_node("Add", ["acc", "hs"], ["acc_out"], "body_add"),
    ], "loop_body", [it, c_in, acc], [c_out, acc_out])

    nodes = [
        helper.make_node("Relu", ["x"], ["h"], "relu"),
        helper.make_node("If", ["cond"], ["y"], "if", then_branch=branch("then", "Mul"),
                         else_branch=branch("else", "Add")),
        helper.make_node("Loop", ["trips", "cond", "x"], ["z"], "loop", body=body),
    ]
    inits = [numpy_helper.from_array(np.array(0.5, dtype=np.float32), "scale")]
    save(helper.make_model(helper.make_graph(nodes, "control_flow", [x, cond, trips], [y, z], inits),
                           opset_imports=OPSET), "control_flow.onnx")


def scan_rnn():
    """A Scan running a small RNN cell over 6 steps: state and per-step outputs; the weight is read from the main
    graph inside the body."""
    xs = helper.make_tensor_value_info("xs", TensorProto.FLOAT, [6, 4, 8])
    h0 = helper.make_tensor_value_info("h0", TensorProto.FLOAT, [4, 8])
    h_last = helper.make_tensor_value_info("h_last", TensorProto.FLOAT, [4, 8])
    ys = helper.make_tensor_value_info("ys", TensorProto.FLOAT, [6, 4, 8])
    h_in = helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [4, 8])
    x_t = helper.make_tensor_value_info("x_t", TensorProto.FLOAT, [4, 8])
    h_out = helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [4, 8])
    y_t = helper.make_tensor_value_info("y_t", TensorProto.FLOAT, [4, 8])
    body = helper.make_graph([
        helper.make_node("MatMul", ["x_t", "w"], ["xw"], "cell_in"),
        helper.make_node("MatMul", ["h_in", "u"], ["hu"], "cell_rec"),
        helper.make_node("Add", ["xw", "hu"], ["pre"], "cell_add"),
        helper.make_node("Tanh", ["pre"], ["h_out"], "cell_tanh"),
        helper.make_node("Relu", ["h_out"], ["y_t"], "cell_out"),
    ], "scan_body", [h_in, x_t], [h_out, y_t])
    nodes = [
        helper.make_node("Relu", ["xs"], ["xr"], "pre_relu"),
        helper.make_node("Scan", ["h0", "xr"], ["h_last", "ys"], "rnn", body=body, num_scan_inputs=1),
    ]
    save(helper.make_model(helper.make_graph(nodes, "scan_rnn", [xs, h0], [h_last, ys], [weight("w", 8, 8),
                                                                                      weight("u", 8, 8)]),
                           opset_imports=OPSET), "scan_rnn.onnx")


def free_dims():
    """Free dimensions batch and seq, with a shape computation feeding a Reshape (as exporters write)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", 64])
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"], "proj"),
        helper.make_node("Shape", ["q"], ["q_shape"], "shape"),
        helper.make_node("Gather", ["q_shape", "zero"], ["b"], "gather_batch", axis=0),
        helper.make_node("Gather", ["q_shape", "one"], ["s"], "gather_seq", axis=0),
        helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"], "unsq_b"),
        helper.make_node("Unsqueeze", ["s", "axes0"], ["s1"], "unsq_s"),
        helper.make_node("Concat", ["b1", "s1", "heads"], ["new_shape"], "concat_shape", axis=0),
        helper.make_node("Reshape", ["q", "new_shape"], ["q4"], "split_heads"),
        helper.make_node("Softmax", ["q4"], ["p"], "softmax", axis=-1),
        helper.make_node("Reshape", ["p", "back"], ["p3"], "merge_heads"),
        helper.make_node("Add", ["p3", "x"], ["y"], "residual"),
    ]
    inits = [
        weight("wq", 64, 64),
        numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "one"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "axes0"),
        numpy_helper.from_array(np.array([4, 16], dtype=np.int64), "heads"),
        numpy_helper.from_array(np.array([0, 0, 64], dtype=np.int64), "back"),
    ]
    save(helper.make_model(helper.make_graph(nodes, "free_dims", [x], [y], inits), opset_imports=OPSET),
         "free_dims.onnx")


def ort_observed():
    """The five-node graph of ort-observed.md: ORT runs sig1 before relu1 and names unnamed nodes."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["X"], ["a"], "relu1"),
        helper.make_node("Sigmoid", ["X"], ["b"], "sig1"),
        helper.make_node("Add", ["a", "b"], ["c"]),
        helper.make_node("Relu", ["c"], ["d"]),
        helper.make_node("Mul", ["d", "a"], ["Y"], "mul1"),
    ]
    save(helper.make_model(helper.make_graph(nodes, "ort_observed", [x], [y]), opset_imports=OPSET),
         "ort_observed.onnx")


def long_skip():
    """An activation idle across the peak: `a` is written first and read last, while wider temporaries come and go
    in between; on a small device memplan plan --offload sends `a` to the host and brings it back."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 64, 64])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 64, 64, 64])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], "relu"),
        helper.make_node("Concat", ["a", "x"], ["b"], "widen", axis=1),
        helper.make_node("Sigmoid", ["b"], ["c"], "sigmoid"),
        helper.make_node("Concat", ["c", "c"], ["d"], "widen_again", axis=1),
        helper.make_node("Tanh", ["d"], ["e"], "tanh"),
        helper.make_node("ReduceMean", ["e"], ["f"], "mean", axes=[1], keepdims=1),
        helper.make_node("Mul", ["a", "f"], ["y"], "scale"),
        helper.make_node("MatMul", ["y", "w"], ["z"], "project"),
    ]
    save(helper.make_model(helper.make_graph(nodes, "long_skip", [x], [z], [weight("w", 64, 64)]),
                           opset_imports=OPSET), "long_skip.onnx")


if __name__ == "__main__":
    residual()
    branches()
    control_flow()
    free_dims()
    ort_observed()
    scan_rnn()
    long_skip()
