#!/usr/bin/env python3
"""dlc and its peers on the same workloads: PyTorch eager, torch.compile,
onnxruntime, JAX jit and IREE, one process per engine x workload x thread
count, same inputs and weights, outputs cross-checked, a markdown table.

    VENV/bin/python bench/peers/run.py [--workloads all|ID,ID,...]
        [--engines dlc,torch,torch_compile,ort,jax,iree] [--threads 1,2]
        [--reps-scale F] [--big] [--json FILE] [--work DIR] [--dlc PATH]

See bench/peers/README.md for the virtual environment, what each engine
runs and how the rows are checked. Not part of the test suite.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import (ENGINE_LABEL, ENGINES, HERE, MODELS, ROOT, TOLERANCE,  # noqa: E402
                    WORKLOADS, loss_rel_diff, max_rel_diff, model_dir,
                    read_safetensors, reference_engine)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_list(threads):
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < threads:
        return None
    return ",".join(str(c) for c in cpus[:threads])


def engine_env(threads):
    n = str(threads)
    env = dict(os.environ, DLC_NUM_THREADS=n, OMP_NUM_THREADS=n,
               MKL_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n,
               JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="2",
               TORCHINDUCTOR_COMPILE_THREADS="1")
    if threads == 1:
        env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false "
                            "intra_op_parallelism_threads=1")
    else:
        env.pop("XLA_FLAGS", None)
    return env


def run_worker(args, engine, w, threads, reps, warmup, tmp):
    """Runs worker.py in its own process; returns its result dict (and the
    path of its check file)."""
    tag = "%s-%s-%d" % (w["id"], engine, threads)
    result = os.path.join(tmp, tag + ".json")
    check = os.path.join(tmp, tag + ".npz")
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), engine, w["id"],
           "--work", args.work, "--threads", str(threads), "--reps", str(reps),
           "--warmup", str(warmup), "--result", result, "--check", check,
           "--dlc", args.dlc]
    cpus = cpu_list(threads)
    pinned = cpus is not None and shutil.which("taskset")
    if pinned:
        cmd = ["taskset", "-c", cpus] + cmd
    try:
        p = subprocess.run(cmd, env=engine_env(threads), capture_output=True,
                           text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": "timed out after %d s" % args.timeout}, None
    if p.returncode != 0 or not os.path.exists(result):
        lines = [ln for ln in (p.stderr or p.stdout).strip().splitlines() if ln.strip()]
        last = lines[-1] if lines else "exit status %d" % p.returncode
        for prefix in ("RuntimeError: ", "ValueError: "):
            if last.startswith(prefix):
                last = last[len(prefix):]
        if p.returncode < 0 or p.returncode == 137:
            last = "killed (signal %d; out of memory?)" % -p.returncode
        return {"status": "failed", "reason": last[:300]}, None
    with open(result) as f:
        res = json.load(f)
    res["cpus"] = cpus if pinned else "unpinned"
    return res, (check if res.get("status") == "ok" else None)


def compare(w, checks, ref, work):
    """{engine: relative difference from REF's result}: forward rows, the
    largest difference of an output over the largest reference output;
    training rows, the largest relative difference of a step's loss and,
    where the weights are saved, of the weights' change over the steps
    (2-norm of the difference of the changes over the norm of the
    reference's change: Adam moves every weight by about lr whatever the
    size of its gradient, so an elementwise comparison would be decided by
    the sign of the few gradients that are rounding noise)."""
    r = np.load(checks[ref])
    w0 = None
    if any(k.startswith("param:") for k in r.files):
        w0 = read_safetensors(os.path.join(model_dir(work, w["model"]),
                                           "weights.safetensors"))
    out = {}
    for e, path in checks.items():
        c = np.load(path)
        if w["mode"] == "forward":
            out[e] = max_rel_diff(c["out"], r["out"])
            continue
        d = loss_rel_diff(c["losses"], r["losses"])
        num = den = 0.0
        for k in r.files:
            if not k.startswith("param:") or k[6:] not in w0:
                continue
            if k not in c.files or c[k].shape != r[k].shape:
                num = float("inf")
                continue
            init = np.asarray(w0[k[6:]], np.float64)
            ref_step = np.asarray(r[k], np.float64) - init
            num += float(np.sum(np.square(np.asarray(c[k], np.float64) - init - ref_step)))
            den += float(np.sum(np.square(ref_step)))
        if den > 0:
            d = max(d, float(np.sqrt(num / den)))
        out[e] = d
    return out


def fmt_ms(v):
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    if v >= 1:
        return "%.2f" % v
    if v >= 0.01:
        return "%.3f" % v
    return "%.4f" % v


def markdown(rows, engines, meta):
    notes, out = [], []

    def note(text):
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    out.append("Each cell: median (min) ms per call; ✗: its output differs "
               "from %s's beyond the tolerance (fp32 %.0e, bf16 %.0e, max "
               "relative difference); \"dlc / best\": dlc's median over the "
               "fastest matching peer's (< 1: dlc is faster)."
               % ("the reference engine", TOLERANCE["fp32"], TOLERANCE["bf16"]))
    out.append("")
    out.append("| workload | thr | " + " | ".join(ENGINE_LABEL[e] for e in engines)
               + " | dlc / best | max rel. diff |")
    out.append("|---|---:|" + "---:|" * len(engines) + "---|---:|")
    for row in rows:
        cells = []
        for e in engines:
            r = row["engines"][e]
            if r["status"] == "ok":
                c = "%s (%s)" % (fmt_ms(r["median_ms"]), fmt_ms(r["min_ms"]))
                if r.get("mismatch"):
                    c += " ✗"
                if r.get("via"):
                    c += " [%d]" % note("%s: %s" % (ENGINE_LABEL[e], r["via"]))
                if r.get("compile_note"):
                    c += " [%d]" % note("%s, %s: %s" % (ENGINE_LABEL[e], row["label"],
                                                        r["compile_note"]))
                cells.append(c)
            elif r["status"] == "n/a":
                cells.append("n/a [%d]" % note("%s: %s" % (ENGINE_LABEL[e], r["reason"])))
            else:
                cells.append("failed [%d]" % note("%s, %s: %s" % (
                    ENGINE_LABEL[e], row["label"], r["reason"])))
        best = row.get("best")
        ratio = "%.2f (%s)" % (row["ratio"], ENGINE_LABEL[best]) if best else "n/a"
        diff = "%.1e" % row["max_diff"] if row.get("max_diff") is not None else "n/a"
        if row.get("mismatch"):
            diff += " ✗"
        out.append("| %s | %d | %s | %s | %s |" % (row["label"], row["threads"],
                                                   " | ".join(cells), ratio, diff))
    out.append("")
    for i, n in enumerate(notes, 1):
        out.append("[%d] %s  " % (i, n))
    out.append("")
    out.append(meta)
    return "\n".join(out)


def versions_line(rows):
    seen = {}
    names = {"dlc": "dlc", "torch": "PyTorch", "torch_compile": "PyTorch",
             "ort": "onnxruntime", "jax": "JAX", "iree": "IREE"}
    for row in rows:
        for e, r in row["engines"].items():
            if r.get("status") == "ok" and names[e] not in seen:
                seen[names[e]] = r.get("version", "?")
    return ", ".join("%s %s" % kv for kv in seen.items())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default="all",
                    help="comma-separated ids (%s), or all"
                    % ",".join(w["id"] for w in WORKLOADS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps-scale", type=float, default=1.0,
                    help="multiply every row's timed calls (0.1 for a smoke run)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="warm-up calls before timing (default: a tenth of the "
                    "timed calls, at least 2)")
    ap.add_argument("--big", action="store_true",
                    help="also the big MLP's Adam step (~10 GB per engine)")
    ap.add_argument("--json", default=None, help="write every figure here")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "dlc-bench-peers"),
                    help="inputs, weights and compiled modules (kept between runs)")
    ap.add_argument("--dlc", default=os.path.join(ROOT, "build", "bin", "dlc"))
    ap.add_argument("--timeout", type=int, default=3600,
                    help="seconds one engine may take on one row")
    args = ap.parse_args()
    args.dlc = os.path.abspath(args.dlc)
    args.work = os.path.abspath(args.work)
    engines = [e for e in args.engines.split(",") if e]
    for e in engines:
        if e not in ENGINES:
            ap.error("unknown engine %s (one of %s)" % (e, ",".join(ENGINES)))
    if args.workloads == "all":
        chosen = [w for w in WORKLOADS if args.big or not w.get("big")]
    else:
        ids = args.workloads.split(",")
        known = {w["id"] for w in WORKLOADS}
        for i in ids:
            if i not in known:
                ap.error("unknown workload %s" % i)
        chosen = [w for w in WORKLOADS if w["id"] in ids]
        for w in chosen:
            if w.get("big") and not args.big:
                ap.error("%s needs --big (about 10 GB per engine)" % w["id"])
    thread_counts = [int(t) for t in args.threads.split(",")]

    models = sorted({w["model"] for w in chosen}, key=list(MODELS).index)
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "prepare.py"), args.work]
                   + models, check=True)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for w in chosen:
            reps = max(2, int(round(w["reps"] * args.reps_scale)))
            warmup = args.warmup or max(2, reps // 10)
            for threads in thread_counts:
                row = {"id": w["id"], "label": w["label"], "threads": threads,
                       "reps": reps, "warmup": warmup, "engines": {}}
                checks = {}
                for e in engines:
                    print("run: %s, %d thread(s), %s ..." % (w["id"], threads, e),
                          file=sys.stderr, flush=True)
                    res, check = run_worker(args, e, w, threads, reps, warmup, tmp)
                    row["engines"][e] = res
                    if check:
                        checks[e] = check
                    if res["status"] == "ok":
                        print("     median %.4f ms, min %.4f ms"
                              % (res["median_ms"], res["min_ms"]), file=sys.stderr)
                    else:
                        print("     %s: %s" % (res["status"], res["reason"]),
                              file=sys.stderr)
                ref = reference_engine([e for e in engines if e in checks])
                if ref and len(checks) < 2:
                    row["check"] = "only one engine ran: nothing to compare"
                elif ref:
                    row["reference"] = ref
                    diffs = compare(w, checks, ref, args.work)
                    tol = TOLERANCE[w["prec"]]
                    for e, dv in diffs.items():
                        row["engines"][e]["rel_diff"] = dv
                        row["engines"][e]["mismatch"] = bool(not dv <= tol)
                    row["max_diff"] = max(diffs.values())
                    row["mismatch"] = any(not dv <= tol for dv in diffs.values())
                for e, r in row["engines"].items():
                    note = r.get("note", "")
                    if e == "iree" and r.get("status") == "ok" and "StableHLO" in note:
                        r["via"] = "runs JAX's function lowered to StableHLO " \
                                   "(no ONNX graph for this row)"
                peers = [(r["median_ms"], e) for e, r in row["engines"].items()
                         if e != "dlc" and r["status"] == "ok" and not r.get("mismatch")]
                d = row["engines"].get("dlc", {})
                if peers and d.get("status") == "ok":
                    best_t, best = min(peers)
                    row["best"], row["ratio"] = best, d["median_ms"] / best_t
                rows.append(row)
                if args.json:       # kept up to date: a killed run keeps its rows
                    write_json(args, rows, complete=False)
                for f in os.listdir(tmp):
                    os.remove(os.path.join(tmp, f))

    meta = ("Measured %s on %s, %d CPUs visible; %s. Each engine in its "
            "own process, pinned with taskset to the first N CPUs; timed "
            "calls per row: bench/peers/common.py's count x %g."
            % (datetime.date.today().isoformat(), cpu_name(), os.cpu_count(),
               versions_line(rows), args.reps_scale))
    print(markdown(rows, engines, meta))
    if args.json:
        write_json(args, rows, complete=True)


def write_json(args, rows, complete):
    with open(args.json + ".tmp", "w") as f:
        json.dump({"date": datetime.datetime.now().isoformat(timespec="seconds"),
                   "cpu": cpu_name(), "cpus": os.cpu_count(),
                   "dlc_commit": git_rev(), "reps_scale": args.reps_scale,
                   "tolerance": TOLERANCE, "complete": complete, "rows": rows},
                  f, indent=1)
    os.replace(args.json + ".tmp", args.json)


def git_rev():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return p.stdout.strip() or "?"


if __name__ == "__main__":
    main()
