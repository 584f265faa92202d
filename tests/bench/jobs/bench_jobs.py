#!/usr/bin/env python3
"""Jobs benchmark: prints three figures for the `batchai` executable.

1. `job list -o table` median over an experiment holding 10,000 jobs (target < 200 ms);
   the 10,000 finished job rows are cloned in SQLite from one real job (creating them through
   the CLI would start 10,000 supervisors, which is not what is measured).
2. `job create` to the job's command running, on an idle 1-node cluster with zero simulated
   delay (target < 1 s): the job writes a timestamp the moment it starts.
3. 200 jobs from 20 concurrent shells on a 4-node cluster: all finish, none lost, none run twice.

Usage: bench_jobs.py --exe build/src/cli/batchai [--jobs 10000] [--burst 200] [--shells 20]
                     [--list-only | --burst-only]
"""
import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import tempfile
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--burst", type=int, default=200)
    ap.add_argument("--shells", type=int, default=20)
    ap.add_argument("--list-only", action="store_true", help="only part 1, in every output format")
    ap.add_argument("--burst-only", action="store_true", help="only part 3")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="batchai-bench-jobs-")
    env = dict(os.environ, BATCHAI_HOME=os.path.join(work, "home"), BATCHAI_SIM_DELAY_S="0")
    env.pop("AZURE_DEFAULTS_GROUP", None)

    def cli(*a, check=True):
        r = subprocess.run([args.exe, *a], env=env, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise SystemExit(f"batchai {' '.join(a)} failed ({r.returncode}): {r.stderr}")
        return r

    scope = ["-g", "rg", "-w", "ws"]
    cli("group", "create", "-n", "rg", "-l", "eastus")
    cli("workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus")
    for exp in ("big", "latency", "burst"):
        cli("experiment", "create", *scope, "-n", exp)

    def job_file(name, command, nodes=1):
        path = os.path.join(work, name + ".json")
        with open(path, "w") as f:
            json.dump({"properties": {"nodeCount": nodes, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                                      "customToolkitSettings": {"commandLine": command}}}, f)
        return path

    if not args.burst_only:
        list_and_latency(args, cli, scope, work, job_file)
    if not args.list_only:
        burst(args, cli, scope, work, job_file)


def list_and_latency(args, cli, scope, work, job_file):
    # 1. job list over 10,000 jobs
    cli("cluster", "create", *scope, "-n", "idle0", "-s", "Standard_D1", "-t", "0", "-u", "u", "-p", "Secret.123")
    cli("job", "create", *scope, "-e", "big", "-n", "seed", "-c", "idle0", "-f", job_file("seed", "true"))
    db = sqlite3.connect(os.path.join(work, "home", "state.db"), timeout=30)
    row = db.execute("SELECT experiment_id, cluster_id, doc, created_us FROM jobs WHERE name = 'seed'").fetchone()
    exp_id, cluster_id, doc_text, created = row
    doc = json.loads(doc_text)
    doc["executionState"] = "succeeded"
    doc["executionInfo"] = {"endTime": doc["creationTime"], "errors": None, "exitCode": 0, "startTime": doc["creationTime"]}
    rows = []
    for i in range(args.jobs - 1):
        name = f"job{i:05d}"
        d = dict(doc, name=name, id=doc["id"].rsplit("/", 1)[0] + "/" + name)
        rows.append((f"bench-{i}", exp_id, cluster_id, name, name, "succeeded", 1, 1, created + i, json.dumps(d)))
    db.executemany("INSERT INTO jobs(job_key, experiment_id, cluster_id, name_lc, name, state, priority, node_count, "
                   "created_us, doc) VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
    db.commit()
    db.close()
    cli("job", "terminate", *scope, "-e", "big", "-n", "seed", "-y")
    variants = [["-o", "table"]]
    if args.list_only:
        variants += [["-o", "json"], ["-o", "none"],
                     ["--query", "[?executionState=='succeeded'].name", "-o", "tsv"]]
    for variant in variants:
        times = []
        for _ in range(args.runs):
            t = time.perf_counter()
            r = cli("job", "list", *scope, "-e", "big", *variant)
            times.append((time.perf_counter() - t) * 1000)
        lines = r.stdout.count("\n")
        print(f"job list {' '.join(variant)}, {args.jobs} jobs: median {statistics.median(times):.0f} ms "
              f"(min {min(times):.0f}, max {max(times):.0f}; {lines} lines)" +
              ("  target < 200 ms" if variant == ["-o", "table"] else ""))
    if args.list_only:
        print(f"(work folder {work})")
        return

    # 2. create -> running on an idle cluster
    cli("cluster", "create", *scope, "-n", "one", "-s", "Standard_D1", "-t", "1", "-u", "u", "-p", "Secret.123")
    cli("cluster", "show", *scope, "-n", "one")
    lat = []
    for i in range(5):
        stamp = os.path.join(work, f"started{i}")
        f = job_file(f"lat{i}", f"date +%s.%N > {stamp}")
        t0 = time.time()
        cli("job", "create", *scope, "-e", "latency", "-n", f"lat{i}", "-c", "one", "-f", f)
        while not (os.path.exists(stamp) and os.path.getsize(stamp) > 0):
            time.sleep(0.005)
            if time.time() - t0 > 30:
                raise SystemExit("job never started")
        with open(stamp) as s:
            lat.append((float(s.read()) - t0) * 1000)
        cli("job", "wait", *scope, "-e", "latency", "-n", f"lat{i}", "--interval", "0")
    print(f"job create -> running (command started), idle cluster, zero delay: median {statistics.median(lat):.0f} ms "
          f"(min {min(lat):.0f}, max {max(lat):.0f})  target < 1000 ms")


def burst(args, cli, scope, work, job_file):

    # 3. 200 jobs from 20 concurrent shells
    cli("cluster", "create", *scope, "-n", "four", "-s", "Standard_D1", "-t", "4", "-u", "u", "-p", "Secret.123")
    log = os.path.join(work, "burst.log")
    per_shell = args.burst // args.shells
    errors = []

    def shell(s):
        for k in range(per_shell):
            name = f"b{s:02d}x{k:02d}"
            r = cli("job", "create", *scope, "-e", "burst", "-n", name, "-c", "four",
                    "-f", job_file(name, f"echo {name} >> {log}"), check=False)
            if r.returncode != 0:
                errors.append(f"{name}: {r.stderr.strip()}")

    t0 = time.time()
    threads = [threading.Thread(target=shell, args=(s,)) for s in range(args.shells)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    submitted = time.time() - t0
    deadline = time.time() + 600
    while True:
        jobs = json.loads(cli("job", "list", *scope, "-e", "burst").stdout)
        done = [j for j in jobs if j["executionState"] in ("succeeded", "failed")]
        if len(done) == len(jobs) or time.time() > deadline:
            break
        time.sleep(0.1)  # the finish is timed to this poll
    total = time.time() - t0
    with open(log) as f:
        ran = f.read().split()
    names = {j["name"] for j in jobs}
    succeeded = sum(1 for j in jobs if j["executionState"] == "succeeded")
    twice = len(ran) - len(set(ran))
    lost = args.burst - len(names) + len(names - set(ran))
    print(f"{args.burst} jobs from {args.shells} shells: submitted in {submitted:.1f} s, all finished in {total:.1f} s; "
          f"{succeeded} succeeded, create errors {len(errors)}, lost {lost}, ran twice {twice}")
    for e in errors[:5]:
        print("  create error:", e)
    print(f"(work folder {work})")


if __name__ == "__main__":
    main()
