#!/usr/bin/python3
"""Each model rewritten at a newer ONNX opset (upgrade_opset.py: the same computation) must plan as the original:
the same activation, output and input totals per device (values of unknown size allowed, as data-dependent ones are), ORT's estimate the same, every value of the original with
the same size, on the CPU and on a GPU. The new file is also validated. This checks memplan's rules for opsets 18-24
(onnx_io/src/newer_onnx_schemas.cc) on real architectures, which nobody exports at those opsets here.
usage: check_upgraded_models.py MEMPLAN OPSET MODEL[:dim=V,...] ...   (prints a line per model; exits 1 on a difference)"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

memplan, opset, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
here = os.path.dirname(os.path.abspath(__file__))


def plan(model, dims, device, out):
    cmd = [memplan, "plan", model, "--device", device, "-o", out, "--allow-unknown-sizes"]
    cmd += [a for d in dims for a in ("--dim", d)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"memplan plan {os.path.basename(model)} --device {device}: {r.stderr.strip()[-400:]}")
    with open(out) as f:
        p = json.load(f)
    # (A device holding only weights is left out: on a GPU the axes initializers the upgrade adds stay on the CPU, as
    # CUDA's reductions read their axes there.)
    def kept(t):
        return t["activations"] or t["outputs"] or t.get("inputs")

    totals = [{k: t[k] for k in ("device", "activations", "outputs", "inputs", "complete")} for t in p["device_totals"]
              if kept(t)]
    ort = [{k: t[k] for k in ("device", "activations", "outputs")} for t in (p.get("ort_rules_estimate") or {})
           .get("device_totals", []) if kept(t)]
    sizes = {v["name"]: v.get("bytes") for v in p["values"]}
    return totals, ort, sizes


def check(spec):
    model, _, dim_text = spec.partition(":")
    dims = dim_text.split(",") if dim_text else []
    name = os.path.basename(model)
    with tempfile.TemporaryDirectory() as tmp:
        upgraded = os.path.join(tmp, name)
        subprocess.run(["/usr/bin/python3", os.path.join(here, "upgrade_opset.py"), model, upgraded, opset], check=True)
        for device in ("cpu", "gpu"):
            a = plan(model, dims, device, os.path.join(tmp, "a.json"))
            b = plan(upgraded, dims, device, os.path.join(tmp, "b.json"))
            if a[0] != b[0] or a[1] != b[1]:
                return f"DIFFERENT {name} ({device}): totals {a[0]} / {b[0]}; ORT's {a[1]} / {b[1]}"
            changed = [n for n, s in a[2].items() if b[2].get(n) != s]
            if changed:
                return f"DIFFERENT {name} ({device}): {len(changed)} values change size, first {changed[:3]}"
        r = subprocess.run([memplan, "validate", os.path.join(tmp, "b.json"), "--allow-unknown-sizes"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            return f"DIFFERENT {name}: the upgraded GPU plan does not validate: {r.stdout.strip()[-300:]}"
    return f"same      {name}: opset {opset} plans as the original (CPU and GPU)"


def checked(spec):
    try:
        return check(spec)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        return f"FAILED    {os.path.basename(spec.partition(':')[0])}: {e}"


failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for line in pool.map(checked, specs):
        print(line, flush=True)
        failed += not line.startswith("same")
print(f"{len(specs) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
