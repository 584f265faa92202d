#!/usr/bin/env python3
"""Issue 26 "Measure and report": the real `az batchai job list` (Debian's azure-cli) against
`batchai serve`, timed with no dashboard tab open and with 3 tabs polling as the page does (the
overview with If-None-Match and the jobs page every second), in alternating rounds so both see the
same machine. Prints p50/p95 of each and the difference of the p95s (the issue asks <= 50 ms),
and the same for the server's own time on az's job list requests, from its access log: on one
machine the tab clients' own CPU slows `az` too, the server's time shows what the API itself lost.

Usage: az_list_with_tabs.py BATCHAI_EXE [--jobs 200] [--rounds 4] [--per-round 5]
Needs `az` (apt-get install azure-cli); exits 77 without it.
"""
import argparse
import http.client
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlencode

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "serve"))
from dashboard_common import Server  # noqa: E402


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


class Tabs:
    """n threads, each doing what one open dashboard tab does every second."""

    def __init__(self, server, n):
        self.server, self.stop, self.polls = server, threading.Event(), 0
        self.threads = [threading.Thread(target=self.tab) for _ in range(n)]

    def tab(self):
        s = self.server
        conn = http.client.HTTPSConnection("localhost", s.port, context=s.ctx, timeout=30)
        base = {"Cookie": s.cookie, "X-Batchai-UI": s.key}
        where = urlencode({"resourceGroup": "rg", "workspace": "ws", "experiment": "exp"})
        etag = None
        while not self.stop.is_set():
            headers = dict(base, **({"If-None-Match": etag} if etag else {}))
            conn.request("GET", "/ui/api/overview", headers=headers)
            r = conn.getresponse()
            body = r.read()
            if r.status == 200:
                etag = '"%s"' % json.loads(body)["version"]
            conn.request("GET", "/ui/api/jobs?" + where, headers=base)
            conn.getresponse().read()
            self.polls += 1
            self.stop.wait(1.0)
        conn.close()

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--per-round", type=int, default=5)
    args = ap.parse_args()
    if shutil.which("az") is None:
        print("SKIP: az is missing (apt-get install azure-cli)")
        return 77
    home = tempfile.mkdtemp(prefix="batchai-az-tabs-")
    s = Server(os.path.abspath(args.exe), home, delay="0")
    try:
        for cmd in (["workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus"],
                    ["experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp"],
                    ["cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "0", "-u", "u",
                     "-p", "Secret.123"]):
            if cmd[0] == "workspace":
                s.cli("group", "create", "-n", "rg", "-l", "eastus")
            s.cli(*cmd)
        job = os.path.join(home, "job.json")
        with open(job, "w") as f:
            json.dump({"properties": {"nodeCount": 1, "customToolkitSettings": {"commandLine": "true"},
                                      "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT"}}, f)
        for i in range(args.jobs):  # queued on a 0-node cluster: rows, no processes to wait for
            s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "j%04d" % i, "-c", "c", "-f", job)
        env = dict(os.environ, AZURE_CONFIG_DIR=os.path.join(home, "azure"), AZURE_CORE_COLLECT_TELEMETRY="0",
                   AZURE_CORE_OUTPUT="json")
        for line in s.lines:  # the lines batchai serve printed: the exports, then `az` set-up
            if line.startswith("export "):
                name, value = line[len("export "):].split("=", 1)
                env[name] = value.strip("'")
        for line in s.lines:
            if line.startswith("az "):
                subprocess.run(["bash", "-c", line], env=env, check=True, capture_output=True, timeout=120)
        s.login()
        az = ["az", "batchai", "job", "list", "-g", "rg", "-w", "ws", "-e", "exp", "-o", "none"]

        access_log = os.path.join(home, "serve", "access.log")
        list_path = "/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs "

        def server_ms(since):
            """The server's time on az's job list requests logged after byte `since` of its access log."""
            with open(access_log, "rb") as f:
                f.seek(since)
                lines = f.read().decode("ascii", "replace").splitlines()
            return [float(line.split()[-1][:-2]) for line in lines if list_path in line and " GET " in line]

        def timed_list(server_times):
            since = os.path.getsize(access_log)
            t = time.perf_counter()
            subprocess.run(az, env=env, check=True, capture_output=True, timeout=120)
            took = (time.perf_counter() - t) * 1000
            time.sleep(0.05)  # the log line follows the answer's last byte
            server_times += server_ms(since)
            return took

        timed_list([])  # az's own first-run caches
        alone, with_tabs, polls = [], [], 0
        server_alone, server_tabs = [], []
        for _ in range(args.rounds):
            alone += [timed_list(server_alone) for _ in range(args.per_round)]
            with Tabs(s, 3) as tabs:
                time.sleep(1.5)  # the tabs are polling before the first timed call
                with_tabs += [timed_list(server_tabs) for _ in range(args.per_round)]
            polls += tabs.polls
        print("az batchai job list over %d jobs, %d calls each, alternating rounds; load average %.2f"
              % (args.jobs, len(alone), os.getloadavg()[0]))
        print("  no tab:    p50 %6.0f ms  p95 %6.0f ms" % (percentile(alone, 50), percentile(alone, 95)))
        print("  3 tabs:    p50 %6.0f ms  p95 %6.0f ms  (%d tab polls)" % (percentile(with_tabs, 50),
                                                                          percentile(with_tabs, 95), polls))
        print("  p95 rise:  %+6.0f ms" % (percentile(with_tabs, 95) - percentile(alone, 95)))
        if not server_alone or not server_tabs:
            raise SystemExit("no job list request of az is in the server's access log " + access_log)
        print("the server's own time on those requests (its access log, %d and %d requests):"
              % (len(server_alone), len(server_tabs)))
        print("  no tab:    p50 %6.1f ms  p95 %6.1f ms" % (percentile(server_alone, 50), percentile(server_alone, 95)))
        print("  3 tabs:    p50 %6.1f ms  p95 %6.1f ms" % (percentile(server_tabs, 50), percentile(server_tabs, 95)))
        print("  p95 rise:  %+6.1f ms" % (percentile(server_tabs, 95) - percentile(server_alone, 95)))
    finally:
        s.stop()
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
