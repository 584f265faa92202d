#!/usr/bin/env python3
"""Where a trivial job's time goes: `job create` of a 2-node `true` job on an idle simulated cluster
with zero simulated delay, to succeeded, with every milestone the job records on the way.

Each --exe gets its own home; repetitions alternate between them, so an old build and a new one
are measured side by side under the same load. Milestones, in ms after `job create` was started:
  created     the job's creationTime (the row is in the store)
  returned    `job create` exited
  started     executionInfo.startTime (the scheduler gave it its nodes)
  contained   the supervisor's "process containment" line in execution.log
  tasks       "main tasks started"
  finished    "job finished with exit code"
  ended       executionInfo.endTime (the end is in the store and the nodes are free)
  seen        the first `job show` (polled every --poll-ms) that printed succeeded

With --image IMAGE (an image in the local Podman store), each --exe also runs the same job with
containerSettings naming it, in its own home, alternating with the host job; "contained" is then
when the containers were started.

Usage: trivial_job.py --exe build/src/cli/batchai [--exe old/batchai] [--image IMG] [--reps 15] [--poll-ms 2]
"""
import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

MILESTONES = ["created", "returned", "started", "contained", "containers", "tasks", "finished", "ended", "seen"]
LOG_LINES = {"contained": "process containment:", "containers": "containers started", "tasks": "main tasks started", "finished": "job finished with exit code"}


def epoch(iso):
    return datetime.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


class Home:
    def __init__(self, exe, work, index, image=None):
        self.exe = exe
        self.label = exe + (f" in {image}" if image else " on the host")
        self.home = os.path.join(work, f"home{index}")
        self.env = dict(os.environ, BATCHAI_HOME=self.home, BATCHAI_SIM_DELAY_S="0")
        self.env.pop("AZURE_DEFAULTS_GROUP", None)
        props = {"nodeCount": 2, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT/out",
                 "customToolkitSettings": {"commandLine": "true"}}
        if image:
            props["containerSettings"] = {"imageSourceRegistry": {"image": image}}
        self.job_file = os.path.join(work, f"true{index}.json")
        with open(self.job_file, "w") as f:
            json.dump({"properties": props}, f)
        self.cli("group", "create", "-n", "rg", "-l", "eastus")
        self.cli("workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus")
        self.cli("experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp")
        self.cli("cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D3", "-t", "2", "-u", "u",
                 "-p", "Secret.123")

    def cli(self, *args):
        r = subprocess.run([self.exe, *args, "-o", "json"], env=self.env, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"{self.exe} {' '.join(args)} failed ({r.returncode}): {r.stderr}")
        return json.loads(r.stdout) if r.stdout.strip() else None

    def state(self, name):
        r = subprocess.run([self.exe, "job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "--query",
                            "executionState", "-o", "tsv"], env=self.env, capture_output=True, text=True)
        return r.stdout.strip()

    def measure(self, name, poll_s):
        t0 = time.time()
        subprocess.run([self.exe, "job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "-c", "c", "-f",
                        self.job_file, "-o", "none"], env=self.env, check=True)
        out = {"returned": time.time()}
        deadline = t0 + 60
        while True:
            s = self.state(name)
            if s in ("succeeded", "failed") or time.time() > deadline:
                out["seen"] = time.time()
                break
            time.sleep(poll_s)
        if s != "succeeded":
            raise SystemExit(f"job {name} ended {s or 'never'}")
        doc = self.cli("job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name)
        out["created"] = epoch(doc["creationTime"])
        out["started"] = epoch(doc["executionInfo"]["startTime"])
        out["ended"] = epoch(doc["executionInfo"]["endTime"])
        logs = glob.glob(os.path.join(self.home, "**", "jobs", name, "*", "stdouterr", "execution.log"), recursive=True)
        for line in open(logs[0]) if logs else []:
            stamp, _, text = line.partition(" ")
            for key, prefix in LOG_LINES.items():
                if key not in out and text.startswith(prefix):
                    out[key] = epoch(stamp)
        return {k: 1000 * (v - t0) for k, v in out.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", action="append", required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--poll-ms", type=float, default=2)
    ap.add_argument("--image", help="also run the job in this image (local Podman store)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="batchai-bench-trivial-")
    variants = [(exe, None) for exe in args.exe] + [(exe, args.image) for exe in args.exe if args.image]
    homes = [Home(exe, work, i, image) for i, (exe, image) in enumerate(variants)]
    runs = [[] for _ in homes]
    for rep in range(args.reps):
        for i, home in enumerate(homes):
            runs[i].append(home.measure(f"t{rep}", args.poll_ms / 1000))
    print(f"# trivial 2-node job, {args.reps} repetitions alternating, medians in ms after `job create` started "
          f"(state polled every {args.poll_ms:g} ms); load average {os.getloadavg()[0]:.2f}")
    print(f"{'milestone':<11}" + "".join(f"{'exe' + str(i):>12}" for i in range(len(homes))))
    for m in MILESTONES:
        cells = []
        for r in runs:
            values = [x[m] for x in r if m in x]
            cells.append(f"{statistics.median(values):12.1f}" if values else f"{'-':>12}")
        print(f"{m:<11}" + "".join(cells))
    for i, home in enumerate(homes):
        print(f"# exe{i}: {home.label}")
    subprocess.run(["rm", "-rf", work])
    return 0


if __name__ == "__main__":
    sys.exit(main())
