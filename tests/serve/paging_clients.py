#!/usr/bin/python3
"""ARM paging with the real clients, unchanged (issue 24 "ARM paging", docs/serve.md "Paging").
Usage: paging_clients.py BATCHAI_EXE SEED_EXE

Seeds 10,000 jobs in one experiment (SEED_EXE: tests/serve/seed_jobs.cpp, a bulk copy of one
real job row), starts `batchai serve --port 0`, and lists them through Debian's Azure SDK
(ItemPaged following nextLink: 10 pages of 1,000, each job exactly once; maxresults=400 gives 25
pages) and through Debian's az 2.45 (`az batchai job list`, which follows nextLink unchanged).
Hostile paging input is refused with 400. Fails (not skips) when a client is missing."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_flow import ServerToken, parse_lines, start_server  # noqa: E402  (fails with the package to install)

import requests  # noqa: E402
from azure.mgmt.batchai import BatchAI, models  # noqa: E402

JOBS = 10000
EXPECTED = ["job%05d" % i for i in range(JOBS)]


def check_sdk(base, cert, cred, sub):
    client = BatchAI(cred, sub, base_url=base, connection_verify=cert)
    t0 = time.time()
    pages = [[j.name for j in page] for page in client.jobs.list_by_experiment("rg", "ws", "exp").by_page()]
    names = [n for page in pages for n in page]
    assert [len(p) for p in pages] == [1000] * 10, [len(p) for p in pages]
    assert names == EXPECTED, "the SDK listed %d jobs, %d distinct" % (len(names), len(set(names)))
    print("sdk: %d jobs in %d pages, each once, %.1f s" % (len(names), len(pages), time.time() - t0))
    options = models.JobsListByExperimentOptions(max_results=400)
    pages = [[j.name for j in page]
             for page in client.jobs.list_by_experiment("rg", "ws", "exp", options).by_page()]
    assert [len(p) for p in pages] == [400] * 25, [len(p) for p in pages]
    assert [n for page in pages for n in page] == EXPECTED


def check_hostile(base, cert, token):
    jobs = base + "/subscriptions/%s/resourceGroups/rg/providers/Microsoft.BatchAI/workspaces/ws/experiments/exp/jobs"
    headers = {"Authorization": "Bearer " + token}
    first = requests.get(jobs % SUB + "?api-version=2018-05-01&maxresults=3", verify=cert, headers=headers,
                         timeout=30).json()
    link = first["nextLink"]
    assert link.startswith(base + "/subscriptions/") and "$skiptoken=" in link and "maxresults=3" in link, link
    second = requests.get(link, verify=cert, headers=headers, timeout=30).json()
    assert [j["name"] for j in second["value"]] == EXPECTED[3:6], second
    for query, code in [("maxresults=0", "InvalidMaxResults"), ("maxresults=1001", "InvalidMaxResults"),
                        ("maxresults=-1", "InvalidMaxResults"), ("maxresults=1e3", "InvalidMaxResults"),
                        ("$skiptoken=%27%20OR%201%3D1--", "InvalidSkipToken"),
                        ("$skiptoken=" + "A" * 2000, "InvalidSkipToken"),
                        ("$skiptoken=MTJ", "InvalidSkipToken"),   # "12" with stray bits: not canonical base64url
                        ("$skiptoken=YWJj", "InvalidSkipToken")]:  # "abc": not a job position
        r = requests.get(jobs % SUB + "?api-version=2018-05-01&" + query, verify=cert, headers=headers, timeout=30)
        assert r.status_code == 400 and r.json()["error"]["code"] == code, (query, r.status_code, r.text[:200])
    print("hostile paging input: refused with 400")


def check_az(lines, work):
    env = dict(os.environ, HOME=os.path.join(work, "home"), AZURE_CONFIG_DIR=os.path.join(work, "azure"),
               AZURE_CORE_COLLECT_TELEMETRY="0", AZURE_CORE_OUTPUT="json")
    os.makedirs(env["HOME"], exist_ok=True)
    if not shutil.which("az"):
        raise SystemExit("FAIL: az is missing: apt-get install azure-cli")
    # The server's lines as printed (their own output thrown away), then the list.
    setup = [line if line.startswith("export ") else line + " >/dev/null" for line in lines]
    script = "\n".join(setup) + "\naz batchai job list -g rg -w ws -e exp --query '[].name' -o tsv\n"
    t0 = time.time()
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, cwd=work, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    names = done.stdout.split()
    assert names == EXPECTED, "az listed %d jobs, %d distinct" % (len(names), len(set(names)))
    print("az: %d jobs, each once, %.1f s" % (len(names), time.time() - t0))


def main():
    global SUB
    exe, seed = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = tempfile.mkdtemp(prefix="batchai-paging-")
    home = os.path.join(work, "batchai")
    proc = None
    try:
        t0 = time.time()
        subprocess.run([seed, exe, home, str(JOBS)], check=True, timeout=120)
        print("seeded %d jobs in %.1f s" % (JOBS, time.time() - t0))
        proc, lines = start_server(exe, home)
        cert, port, (client_id, secret, _tenant) = parse_lines(lines)
        base = "https://localhost:%d" % port
        cred = ServerToken(base + "/adfs/oauth2/token", client_id, secret, cert)
        token = cred.get_token("https://management.azure.com/.default").token
        SUB = requests.get(base + "/subscriptions?api-version=2019-11-01", verify=cert, timeout=30,
                           headers={"Authorization": "Bearer " + token}).json()["value"][0]["subscriptionId"]
        check_hostile(base, cert, token)
        check_sdk(base, cert, cred, SUB)
        check_az(lines, work)
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)


SUB = None

if __name__ == "__main__":
    main()
