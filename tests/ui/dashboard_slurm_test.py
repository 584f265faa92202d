#!/usr/bin/python3
"""The dashboard on a Slurm cluster, in a real browser (issue 26 item 2; docs/dashboard.md).
Usage: dashboard_slurm_test.py BATCHAI_EXE SLURM_BASE OUTPUT_DIR

Its own private Slurm (tests/slurm/private_slurm.sh, 3 nodes, PORT_BASE from the environment),
started and stopped here, also on failure. Then, through Debian's headless Chromium:
  1. a cluster on the partition shows steady with Slurm's 3 nodes idle, and its heat map names
     them as Slurm does (node1..node3); its counts follow Slurm's (the page's polls ask Slurm,
     rationed by the server);
  2. a 2-node job: the two cells it runs on are the nodes `squeue` lists for it and show its
     Slurm job id, which is the id `squeue` knows it by; the job page shows the same id;
  3. a 3-node job waits: batchai holds it until the cluster has room in Slurm, and its row says so,
     with its position (not yet submitted: `squeue` does not know it);
  4. both terminated with the CLI: every cell idle again, and no Slurm job left;
  5. the tutorial's horovod job of `batchai train` on 2 Slurm nodes: its curves, per-rank phase
     table and model download on the page, as on a simulated cluster (issue 26 item 8).
Skips (77) like ui.dashboard without Chromium (fails under CI=true) and without Slurm's daemons."""
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import dashboard_test as ui  # noqa: E402  (skips or fails first when Chromium is missing)

SLURM_SH = os.path.join(HERE, "..", "slurm", "private_slurm.sh")
CELLS = """return [...document.querySelectorAll('.heat .cell')].map((c) => ({
  name: c.querySelector('b').textContent, job: c.querySelector('.job').textContent, cls: c.className}));"""
COUNTS = """const r = [...document.querySelectorAll('table.clusters tr.cluster')]
  .find((t) => t.querySelector('.name').textContent === arguments[0]);
return r ? r.cells[6].textContent + '/' + r.cells[7].textContent : null;"""
JOB_FIELD = """const dt = [...document.querySelectorAll('.view.job dl.facts dt')].find((t) => t.textContent === arguments[0]);
return dt && dt.nextElementSibling ? dt.nextElementSibling.textContent : null;"""


def squeue(*args):
    return subprocess.run(["squeue", "-h", *args], capture_output=True, text=True, timeout=30).stdout.strip()


def check_slurm_cluster(srv, b, out):
    scope = ["-g", "rg", "-w", "ws"]
    srv.cli("group", "create", "-n", "rg", "-l", "eastus", "-o", "none")
    srv.cli("workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus", "-o", "none")
    srv.cli("experiment", "create", *scope, "-n", "exp", "-o", "none")
    srv.cli("cluster", "create", *scope, "-n", "sc", "-s", "Standard_D1", "-t", "3", "-u", "alice", "-p", "Secret.123",
            "--slurm-partition", "batchai", "-o", "none")
    ui.until("the Slurm cluster steady with 3 idle nodes on the page",
             lambda: (b.js(ui.CLUSTER, "sc") or {}) == {"alloc": "steady", "idle": "3"}, 30)
    b.js("document.querySelector('table.clusters tr.cluster button.expand').click()")
    cells, _ = ui.until("3 cells", lambda: (lambda c: c if len(c) == 3 else None)(b.js(CELLS)), 10)
    names = sorted(c["name"] for c in cells)
    assert names == ["node1", "node2", "node3"], "the heat map's names are not Slurm's: %r" % cells
    assert all("node-idle" in c["cls"] for c in cells), cells
    print("heat map: Slurm's nodes %s, idle" % names)

    work = tempfile.mkdtemp(prefix="batchai-ui-slurm-jobs-")
    os.chmod(work, 0o755)  # slurmd starts the job as the submitting user
    two = ui.job_json(os.path.join(work, "two.json"), "sleep 120", nodes=2)
    three = ui.job_json(os.path.join(work, "three.json"), "sleep 120", nodes=3)
    srv.cli("job", "create", *scope, "-e", "exp", "-c", "sc", "-n", "two", "-f", two, "-o", "none")
    ui.until("job two running (CLI)", lambda: srv.cli("job", "show", *scope, "-e", "exp", "-n", "two", "--query",
                                                      "executionState", "-o", "tsv") == "running", 60, 0.2)
    busy, waited = ui.until("two cells running job two", lambda: (lambda c: c if len(c) == 2 else None)(
        [c for c in b.js(CELLS) if c["job"].startswith("two (slurm ")]), 10)
    ui.figure("Slurm job running: node cells after CLI (s)", waited)
    assert waited <= ui.LIMIT_S
    _, waited = ui.until("the cluster's row: 1 idle, 2 running", lambda: b.js(COUNTS, "sc") == "1/2", 10)
    ui.figure("Slurm job running: cluster counts after CLI (s)", waited)
    assert waited <= ui.LIMIT_S
    slurm_id = busy[0]["job"][len("two (slurm "):-1]
    assert slurm_id.isdigit() and all(c["job"] == busy[0]["job"] for c in busy), busy
    listed = squeue("-j", slurm_id, "-o", "%T %N")
    state, nodelist = listed.split()
    expanded = subprocess.run(["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True,
                              timeout=30).stdout.split()
    assert state == "RUNNING" and sorted(expanded) == sorted(c["name"] for c in busy), (listed, busy)
    print("job two: Slurm job %s on %s, as squeue says" % (slurm_id, ",".join(sorted(expanded))))
    b.shot(out, "slurm-overview.png")

    srv.cli("job", "create", *scope, "-e", "exp", "-c", "sc", "-n", "three", "-f", three, "-o", "none")
    b.go_hash("#/jobs/rg/ws/exp")
    def waiting_row():
        r = b.js(ui.ROW, "three")
        return r if r and r["state"] == "queued" and r["pos"] == "1" and r["why"].startswith("Held by batchai") else None
    try:
        row, _ = ui.until("job three waiting with a position and Slurm's reason", waiting_row, 30)
    except AssertionError:
        print("job three's row: %r; squeue: %r" % (b.js(ui.ROW, "three"), squeue("-o", "%i %T %r")))
        raise
    assert squeue("-p", "batchai", "-o", "%i") == slurm_id, "only job two may be in Slurm's queue"
    print("job three: position %s, waits for: %s" % (row["pos"], row["why"]))
    b.shot(out, "slurm-queue.png")
    b.js("document.querySelector('table.jobs-table a[href$=\"/two\"]').click()")
    shown, _ = ui.until("the Slurm job id on job two's page", lambda: b.js(JOB_FIELD, "Slurm job"), 10)
    assert shown == slurm_id, (shown, slurm_id)

    for name in ("three", "two"):
        srv.cli("job", "terminate", *scope, "-e", "exp", "-n", name, "-y", "-o", "none")
    b.go_hash("#/")

    def idle_cells():
        b.js("const x = document.querySelector('table.clusters tr.cluster button.expand');"
             "if (x && !document.querySelector('.heat')) x.click();")  # once the overview is drawn
        c = b.js(CELLS)
        return len(c) == 3 and all("node-idle" in x["cls"] and x["job"] == "idle" for x in c)
    try:
        ui.until("every cell idle again", idle_cells, 30, 0.2)
    except AssertionError:
        print("cells: %r; squeue: %r" % (b.js(CELLS), squeue("-o", "%i %T %N")))
        raise
    left, _ = ui.until("no Slurm job of the partition left", lambda: squeue("-p", "batchai", "-o", "%i") == "", 60, 0.5)
    ui.until("the cluster's row: 3 idle, 0 running", lambda: b.js(COUNTS, "sc") == "3/0", 10)
    print("terminated: every cell idle, the counts 3 idle, squeue empty")

    # The trainer's side on Slurm: its metrics and manifest reach the page as on a simulated cluster.
    ui.train_on_page(srv, b, work, "rg", "sc", nodes=2, epochs=2)
    b.shot(out, "slurm-job.png")
    shutil.rmtree(work, ignore_errors=True)


def main():
    exe, base, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    for daemon in ("slurmctld", "slurmd", "munged"):
        if not shutil.which(daemon) and not os.path.exists("/usr/sbin/" + daemon):
            ui.missing("%s is missing: apt-get install slurm-wlm munge" % daemon)
    os.makedirs(out, exist_ok=True)
    if subprocess.run(["bash", SLURM_SH, "start", base, "3"]).returncode != 0:
        print("FAIL: the private Slurm did not start")
        sys.exit(1)
    os.environ["SLURM_CONF"] = os.path.join(base, "etc", "slurm.conf")
    work = tempfile.mkdtemp(prefix="batchai-ui-slurm-")
    t0 = time.monotonic()
    try:
        with ui.page_session(exe, work, out, "slurm-failure.png") as (srv, b):
            ui.check_login(srv, b)
            check_slurm_cluster(srv, b, out)
    finally:
        subprocess.run(["bash", SLURM_SH, "stop", base], capture_output=True)
    ui.figure("total (s)", time.monotonic() - t0, "%.1f")
    print("PASS")


if __name__ == "__main__":
    main()
