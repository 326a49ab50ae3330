"""The Python module: `import memplan` (PYTHONPATH: the build's python/ folder, or an install's dist-packages),
the same plans and documents as the command line, errors as memplan.Error with the exit code.
usage: /usr/bin/python3 tests/python/test_memplan.py MEMPLAN_BINARY SAMPLES_DIR"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import memplan

BINARY, SAMPLES = sys.argv[1], sys.argv[2]


def cli(*args):
    return subprocess.run([BINARY, *args], check=True, capture_output=True, text=True).stdout


class ModuleTest(unittest.TestCase):
    def test_plan_equals_the_command_line(self):
        model = os.path.join(SAMPLES, "free_dims.onnx")
        p = memplan.plan(model, dims={"batch": 2, "seq": 6}, device="gpu", streams=2)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "plan.json")
            cli("plan", model, "--dim", "batch=2", "--dim", "seq=6", "--device", "gpu", "--streams-per-device", "2",
                "-o", out)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(p.json, f.read())
            saved = os.path.join(d, "saved.json")
            p.save(saved)
            cli("validate", saved, "--model", model)
        self.assertTrue(p.complete)
        self.assertEqual(p.doc["format"], "memplan.plan")
        self.assertEqual(len(p.values), len(p.doc["values"]))
        self.assertEqual(p.total(), p.devices[0]["total"])
        self.assertEqual(p.total(p.devices[-1]["device"]), p.devices[-1]["total"])
        for a in p.arenas:
            self.assertGreaterEqual(a["bytes"], a["lower_bound"])
        self.assertIn("gpu:0", [d["device"] for d in p.devices])
        self.assertRaises(KeyError, p.total, "tpu")

    def test_partition_validate_inspect(self):
        model = os.path.join(SAMPLES, "branches.onnx")
        self.assertEqual(memplan.partition(model, streams=2),
                         json.loads(cli("partition", model, "--streams-per-device", "2")))
        self.assertEqual(memplan.inspect(model), json.loads(cli("inspect", "--json", model)))
        p = memplan.plan(model)
        v = memplan.validate(p, model=model)
        self.assertTrue(v["valid"], v)
        self.assertEqual(v["values_checked"], len(p.values))
        # A plan with two live values on the same bytes fails with an overlap.
        bad = p.doc
        values = [x for x in bad["values"] if x.get("offset") is not None and x["kind"] == "Allocate"]
        self.assertGreater(len(values), 1)
        with tempfile.TemporaryDirectory() as d:
            good = os.path.join(d, "p.json")
            p.save(good)
            broken = cli("corrupt", good, "--kind", "offset")
            report = memplan.validate(broken)
            self.assertFalse(report["valid"])
            self.assertTrue(report["violations"])
            self.assertFalse(memplan.validate(json.loads(broken))["valid"])

    def test_errors(self):
        with self.assertRaises(memplan.Error) as e:
            memplan.plan(os.path.join(SAMPLES, "free_dims.onnx"))
        self.assertEqual(e.exception.exit_code, 1)
        self.assertIn("--dim seq", str(e.exception))
        with self.assertRaises(memplan.Error) as e:
            memplan.plan(os.path.join(SAMPLES, "residual.onnx"), device="tpu")
        self.assertEqual(e.exception.exit_code, 2)
        with self.assertRaises(memplan.Error) as e:
            memplan.inspect(os.path.join(SAMPLES, "no-such-model.onnx"))
        self.assertEqual(e.exception.exit_code, 1)
        self.assertIn("no-such-model.onnx", str(e.exception))
        self.assertTrue(issubclass(memplan.Error, Exception))
        self.assertEqual(memplan.version(), cli("--version").split()[1])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
