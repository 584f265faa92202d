#!/usr/bin/python3
"""The dashboard API at 10,000 jobs (docs/dashboard.md, issue 26 "done means" §4).
Usage: dashboard_scale.py BATCHAI_EXE SEED_EXE

Seeds 10,000 jobs in one experiment (SEED_EXE: tests/serve/seed_jobs.cpp, a bulk copy of one real
job row; a third of them then marked succeeded), adds a 3-node cluster, one real job with 5 MB
of stdout and 500 Keras epochs, and one queued job; starts `batchai serve --port 0`, logs in and
times every /ui/api endpoint over a kept-alive connection: p50/p95 and answer size are printed,
p95 must be at most 200 ms and every answer at most 64 KB. Then 3 "tabs" poll the overview and
the jobs page every second while ARM job GETs are timed: they must stay answered promptly."""
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_common import Server, wait_for  # noqa: E402

JOBS = 10000
RUNS = 40
P95_LIMIT_MS = 200.0

BIG_JOB = r"""
head -c 3750000 /dev/zero | tr '\000' 'x' | fold -w 100
i=1; while [ $i -le 500 ]; do echo "Epoch $i/500"; echo "390/390 - 12s - loss: 1.$i - acc: 0.$i - val_loss: 1.$i - val_acc: 0.$i"; i=$((i+1)); done
echo 'Test accuracy: 0.7848'
"""


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100.0 * (len(values) - 1))))]


def timed(conn, path, headers):
    t0 = time.perf_counter()
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    body = r.read()
    return (time.perf_counter() - t0) * 1000.0, r.status, body


def main():
    exe, seed = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    home = tempfile.mkdtemp(prefix="batchai-ui-scale-")
    t0 = time.time()
    subprocess.run([seed, exe, home, str(JOBS)], check=True, timeout=300)
    db = sqlite3.connect(os.path.join(home, "state.db"))
    db.execute("UPDATE jobs SET state = 'succeeded', doc = json_set(doc, '$.executionState', 'succeeded') WHERE id % 3 = 0")
    db.commit()
    db.close()
    print("seeded %d jobs in %.1f s" % (JOBS, time.time() - t0))
    s = Server(exe, home, delay="0")
    try:
        s.cli("cluster", "create", "-g", "rg", "-w", "ws", "-n", "c3", "-s", "Standard_D1", "-t", "3", "-u", "u", "-p", "Secret.123")
        path = os.path.join(home, "big.json")
        with open(path, "w") as f:
            json.dump({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                                      "customToolkitSettings": {"commandLine": BIG_JOB}}}, f)
        s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "big", "-c", "c3", "-f", path)
        show = lambda name: s.cli("job", "show", "-g", "rg", "-w", "ws", "-e", "exp", "-n", name, "--query",
                                  "executionState", "-o", "tsv").stdout.strip()
        wait_for(lambda: show("big") in ("succeeded", "failed"), "the big job", 120)
        s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "waiting", "-c", "c", "-f", path)
        s.login()
        w = {"resourceGroup": "rg", "workspace": "ws", "experiment": "exp"}
        endpoints = [
            ("overview", "overview", {}, False),
            ("overview (304)", "overview", {}, True),
            ("jobs page 0", "jobs", w, False),
            ("jobs last page", "jobs", dict(w, page=100), False),
            ("jobs state=failed p30", "jobs", dict(w, state="failed", page=30), False),
            ("jobs state=queued", "jobs", dict(w, state="queued"), False),
            ("job", "job", dict(w, job="job05000"), False),
            ("job (real)", "job", dict(w, job="big"), False),
            ("job/log offset=0", "job/log", dict(w, job="big", file="stdout.txt", offset=0), False),
            ("job/log tail=1", "job/log", dict(w, job="big", file="stdout.txt", tail=1), False),
            ("job/metrics (stdout)", "job/metrics", dict(w, job="big"), False),
            ("experiment", "experiment", {"resourceGroup": "rg", "workspace": "ws", "experiment": "exp"}, False),
            ("cluster/nodes", "cluster/nodes", {"resourceGroup": "rg", "workspace": "ws", "cluster": "c3"}, False),
        ]
        conn = http.client.HTTPSConnection("localhost", s.port, context=s.ctx, timeout=30)
        base = {"Cookie": s.cookie, "X-Batchai-UI": s.key}
        failures = []
        print("%-24s %8s %8s %8s %7s" % ("endpoint", "p50 ms", "p95 ms", "max ms", "bytes"))
        for label, api, query, conditional in endpoints:
            path = "/ui/api/" + api + ("?" + urlencode(query) if query else "")
            headers = dict(base)
            if conditional:
                _, _, body = timed(conn, path, headers)
                headers["If-None-Match"] = '"%s"' % json.loads(body)["version"]
            times, size = [], 0
            for _ in range(RUNS):
                ms, status, body = timed(conn, path, headers)
                assert status == (304 if conditional else 200), (label, status, body[:300])
                times.append(ms)
                size = max(size, len(body))
            if api == "jobs" and not conditional:
                page = json.loads(body)
                assert page["countsByState"]["failed"] + page["countsByState"]["succeeded"] == JOBS + 1, page["countsByState"]  # and "big"
                expected = min(100, page["total"] - page["page"] * 100)
                assert len(page["jobs"]) == expected and page["total"] >= 1, (label, len(page["jobs"]), expected)
            p50, p95 = percentile(times, 50), percentile(times, 95)
            print("%-24s %8.1f %8.1f %8.1f %7d" % (label, p50, p95, max(times), size))
            if p95 > P95_LIMIT_MS:
                failures.append("%s: p95 %.1f ms" % (label, p95))
            if size > 65536:
                failures.append("%s: %d bytes" % (label, size))
        metrics = json.loads(timed(conn, "/ui/api/job/metrics?" + urlencode(dict(w, job="big")), base)[2])
        assert metrics["source"] == "stdout" and len(metrics["epochs"]) > 50, len(metrics["epochs"])
        conn.close()
        # Three tabs polling every second; ARM stays answered.
        token = arm_token(s)
        arm_path = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg/providers/Microsoft.BatchAI/"
                    "workspaces/ws/experiments/exp/jobs/job00042?api-version=2018-05-01")
        arm = http.client.HTTPSConnection("localhost", s.port, context=s.ctx, timeout=30)
        quiet = [timed(arm, arm_path, {"Authorization": "Bearer " + token})[0] for _ in range(RUNS)]
        stop = threading.Event()
        polls = []

        def tab():
            c = http.client.HTTPSConnection("localhost", s.port, context=s.ctx, timeout=30)
            etag = None
            while not stop.is_set():
                h = dict(base)
                if etag:
                    h["If-None-Match"] = etag
                ms, status, body = timed(c, "/ui/api/overview", h)
                if status == 200:
                    etag = '"%s"' % json.loads(body)["version"]
                ms2, status2, _ = timed(c, "/ui/api/jobs?" + urlencode(w), base)
                polls.append((status, status2, ms, ms2))
                stop.wait(1.0)
            c.close()

        tabs = [threading.Thread(target=tab) for _ in range(3)]
        for t in tabs:
            t.start()
        busy = []
        end = time.time() + 6
        while time.time() < end:
            busy.append(timed(arm, arm_path, {"Authorization": "Bearer " + token})[0])
            time.sleep(0.05)
        stop.set()
        for t in tabs:
            t.join()
        arm.close()
        assert all(p[0] in (200, 304) and p[1] == 200 for p in polls), polls
        not_modified = sum(1 for p in polls if p[0] == 304)
        print("ARM job GET p95: %.1f ms alone, %.1f ms with 3 tabs polling (%d polls, %d overview 304s, poll p95 %.1f ms)"
              % (percentile(quiet, 95), percentile(busy, 95), len(polls), not_modified,
                 percentile([p[2] + p[3] for p in polls], 95)))
        if percentile(busy, 95) > percentile(quiet, 95) + 100:
            failures.append("ARM p95 rose from %.1f to %.1f ms" % (percentile(quiet, 95), percentile(busy, 95)))
        assert not_modified >= len(polls) // 2, "idle polls must be 304s"
        s.cli("job", "terminate", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "waiting", "-y")
    finally:
        s.stop()
        shutil.rmtree(home, ignore_errors=True)
    if failures:
        raise SystemExit("FAIL: " + "; ".join(failures))
    print("PASS")


def arm_token(s):
    conn = http.client.HTTPSConnection("localhost", s.port, context=s.ctx, timeout=30)
    body = urlencode({"grant_type": "client_credentials", "client_id": s.client_id, "client_secret": s.client_secret,
                      "resource": "https://localhost:%d/" % s.port})
    conn.request("POST", "/adfs/oauth2/token", body=body, headers={"Content-Type": "application/x-www-form-urlencoded"})
    token = json.loads(conn.getresponse().read())["access_token"]
    conn.close()
    return token


if __name__ == "__main__":
    main()
