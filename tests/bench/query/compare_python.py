#!/usr/bin/python3
"""Side-by-side timing of batchai's JMESPath engine (query_bench) and Debian's python3-jmespath.

For every case of the compliance suite's benchmarks.json it times compile+evaluate (and compile
alone) in both, best of 5 batches, and prints ns per expression and the ratio python / C++.
Run it with /usr/bin/python3 (the interpreter that has python3-jmespath installed).

usage: compare_python.py --binary PATH/query_bench [--suite DIR] [--target-ms N]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time
import warnings

try:
    import jmespath
    from jmespath.parser import Parser
except ImportError:
    sys.exit("compare_python.py: python3-jmespath is missing; run it with /usr/bin/python3 "
             "(apt-get install python3-jmespath)")


def time_ns(fn, target_ms):
    """Best-of-5 CPU ns per call, batches sized to take about target_ms (same method as query_bench).

    Process CPU time rather than wall time keeps the figures comparable on a busy machine."""
    n = 1
    while True:
        t0 = time.process_time_ns()
        for _ in range(n):
            fn()
        ms = (time.process_time_ns() - t0) / 1e6
        if ms >= target_ms / 4 or n >= 1 << 26:
            n = max(1, int(n * target_ms / max(ms, 1e-3)))
            break
        n *= 4
    best = math.inf
    for _ in range(5):
        t0 = time.process_time_ns()
        for _ in range(n):
            fn()
        best = min(best, (time.process_time_ns() - t0) / n)
    return best


def make_resources(count):
    """The synthetic job list of cli_cases.json (query_bench builds the same one)."""
    states = ["queued", "running", "succeeded"]
    out = []
    for i in range(count):
        name = "job%d" % i
        out.append({"id": "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/"
                          "Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs/" + name,
                    "name": name,
                    "type": "Microsoft.BatchAI/workspaces/experiments/jobs",
                    "executionState": states[i % 3],
                    "priority": i % 7,
                    "properties": {"nodeCount": i % 4 + 1, "provisioningState": "succeeded",
                                   "executionInfo": {"exitCode": i % 2, "errors": []}}})
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_suite = os.environ.get("BATCHAI_JMESPATH_COMPLIANCE_DIR") or os.path.join(
        here, "..", "..", "..", "shared", "reference", "jmespath-compliance")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", required=True, help="path of the built query_bench program")
    ap.add_argument("--suite", default=default_suite, help="folder holding benchmarks.json")
    ap.add_argument("--target-ms", type=float, default=20.0, help="length of one timed batch")
    args = ap.parse_args()

    path = os.path.join(args.suite, "benchmarks.json")
    if not os.path.exists(path):
        sys.exit("compare_python.py: %s not found; pass --suite DIR" % path)
    with open(path) as f:
        groups = json.load(f)

    out = subprocess.run([args.binary, "--json", "--suite", args.suite, "--target-ms", str(args.target_ms)],
                         check=True, capture_output=True, text=True).stdout
    cpp = [json.loads(line) for line in out.splitlines() if line.strip()]

    with open(os.path.join(here, "cli_cases.json")) as f:
        cli = json.load(f)
    resources = make_resources(cli["resources"])
    cases = [(group["given"], case) for group in groups for case in group["cases"]]
    cases += [(resources, dict(case, bench="cli")) for case in cli["cases"]]

    warnings.simplefilter("ignore")
    rows = []
    if len(cpp) != len(cases):
        sys.exit("compare_python.py: query_bench timed %d cases, expected %d" % (len(cpp), len(cases)))
    for (given, case), c in zip(cases, cpp):
        expr = case["expression"]
        assert c["expression"] == expr, "query_bench and this script disagree on the cases"
        # Parser()._do_parse bypasses jmespath.py's parse cache, so both sides really parse.
        py_full = time_ns(lambda: Parser()._do_parse(expr).search(given), args.target_ms)
        py_parse = time_ns(lambda: Parser()._do_parse(expr), args.target_ms)
        py_cached = time_ns(lambda: jmespath.search(expr, given), args.target_ms)
        rows.append((case.get("comment", expr), case.get("bench", ""), c["full_ns"], py_full,
                     c["parse_ns"], py_parse, py_cached))

    header = ("case", "bench", "C++ ns", "python ns", "ratio", "C++ parse", "py parse", "ratio", "py cached")
    fmt = "%-34s %-6s %10s %11s %7s %10s %10s %7s %10s"
    print("JMESPath compile+evaluate, CPU ns per expression, best of 5 batches (%s ms each)" % args.target_ms)
    print(fmt % header)
    ratios = []
    for name, bench, cf, pf, cp, pp, pc in rows:
        ratios.append(pf / cf)
        print(fmt % (name[:34], bench, "%.0f" % cf, "%.0f" % pf, "%.1fx" % (pf / cf), "%.0f" % cp, "%.0f" % pp,
                     "%.1fx" % (pp / cp), "%.0f" % pc))
    geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    print("compile+evaluate speed-up (python / C++): min %.1fx, geometric mean %.1fx, max %.1fx over %d cases"
          % (min(ratios), geo, max(ratios), len(ratios)))
    print("'py cached' is jmespath.search() with its parse cache warm (evaluation only, for reference)")


if __name__ == "__main__":
    main()
