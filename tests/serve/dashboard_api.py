#!/usr/bin/python3
"""The dashboard's server side end to end (docs/dashboard.md). Usage: dashboard_api.py BATCHAI_EXE

Starts `batchai serve --port 0` on a temporary home (BATCHAI_SIM_DELAY_S=1) and checks: the
one-time login (303, cookie attributes, no token after it, reuse/expired/forged refused), the
guard (401 without the cookie, ARM refuses the cookie, X-Batchai-UI, Origin and Host), the security
headers on every /ui/ answer, ETag/304 on files and the overview, every endpoint's shape on real
jobs (hostile output, secrets left out, queue positions and reasons, a manifest's model link and a
hostile manifest), and `batchai serve ui-url`. Issue 53: the cookie without its session key reads
nothing (F403); 4 MiB of '[' in metrics.json, read four at a time, grows the server's peak RSS by
less than 64 MiB (F404); a malformed timelineSummary is reported (F406); a 70,000-character command
line is trimmed, not a 500 (F407); a used link stays used on a second server of the home and after
a restart (F401). Standard library only."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from urllib.parse import urlencode

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_common import Server, check_security_headers, mint_login_token, wait_for  # noqa: E402

SECRET_VALUE = "topsecret-4711"
ADMIN_PASSWORD = "Adm1n-Secret.123"
W = {"resourceGroup": "rg", "workspace": "ws"}

HOSTILE_JOB = r"""
printf '<script>alert(1)</script>\n<img src=x onerror=alert(2)>\n'
printf 'nul:\000:end\n'
printf 'bad utf8:\377\376:end\n'
head -c 1000000 /dev/zero | tr '\000' a; echo
echo 'Epoch 1/2'
echo '100/100 - 1s - loss: 1.5000 - acc: 0.4000 - val_loss: 1.4000 - val_acc: 0.4500'
echo 'Epoch 2/2'
echo '100/100 - 1s - loss: 1.2000 - acc: 0.5500 - val_loss: 1.1000 - val_acc: 0.6000'
echo 'Test accuracy: 0.7848'
echo 'secret is set' ; test -n "$S"
"""

MODEL_JOB = r"""
mkdir -p "$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar"
printf 'HDF5-model-bytes' > "$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar/keras_cifar10_trained_model.h5"
cat > "$AZ_BATCHAI_STDOUTERR_DIR/metrics.json" <<'M'
{"epochs": [{"epoch": 1, "loss": 2.0, "acc": 0.3, "val_loss": 1.9, "val_acc": 0.35, "lr": 0.001, "seconds": 3.5, "images_per_sec": 1200.0},
            {"epoch": 2, "loss": 1.5, "acc": 0.5, "val_loss": 1.6, "val_acc": 0.52, "lr": 0.001, "seconds": 3.1, "images_per_sec": null}]}
M
cat > "$AZ_BATCHAI_STDOUTERR_DIR/batchai-manifest.json" <<'M'
{"version": 1, "mountRoot": "job",
 "files": [{"name": "keras_cifar10_trained_model.h5", "kind": "model", "mountPath": "myshare/cifar/keras_cifar10_trained_model.h5", "bytes": 16},
           {"name": "escape", "kind": "model", "mountPath": "myshare/../../../../../../etc/passwd"},
           {"name": "absolute", "kind": "model", "mountPath": "/etc/passwd"},
           {"name": "nomount", "kind": "model", "mountPath": "elsewhere/x.h5"},
           {"name": "link", "kind": "model", "mountPath": "myshare/cifar/link.h5"}],
 "timelineSummary": {"ranks": [{"rank": 0, "steps": 10, "meanMs": {"data": 1.5, "forward_backward": 20.0, "allreduce": 0.0, "update": 2.0}}]}}
M
ln -s /etc/passwd "$AZ_BATCHAI_JOB_MOUNT_ROOT/myshare/cifar/link.h5"
"""


CLUSTER_MODEL_JOB = r"""
printf 'cluster-model' > "$AZ_BATCHAI_MOUNT_ROOT/clustershare/m2.h5"
printf '%s' '{"version": 1, "mountRoot": "cluster", "files": [{"kind": "model", "mountPath": "clustershare/m2.h5"}, {"kind": "model", "mountPath": "clustershare/m2.h5", "mountRoot": "job"}]}' > "$AZ_BATCHAI_STDOUTERR_DIR/batchai-manifest.json"
"""


def job_file(home, name, command, node_count=1, extra=None):
    props = {"nodeCount": node_count, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
             "customToolkitSettings": {"commandLine": command}}
    props.update(extra or {})
    path = os.path.join(home, name + ".json")
    with open(path, "w") as f:
        json.dump({"properties": props}, f)
    return path


def job_state(s, name, experiment="exp"):
    out = s.cli("job", "show", "-g", "rg", "-w", "ws", "-e", experiment, "-n", name, "--query", "executionState", "-o", "tsv")
    return out.stdout.strip()


def check_login_and_guard(s):
    # Without the cookie: 401 on the page and the API, with the headers.
    for path in ["/ui/", "/ui/app.js", "/ui/api/overview", "/ui/nothing"]:
        status, headers, _ = s.ui(path, cookie=False)
        assert status == 401, (path, status)
        check_security_headers(headers, path)
    # Forged and expired links: 403 (the expired one signed right, so only its expiry refuses it).
    key = s.token_key()
    bad = s.login_url[:-2] + ("AA" if not s.login_url.endswith("AA") else "BB")
    for what, path in [("forged", s.path_of(bad)), ("expired", "/ui/login?token=" + mint_login_token(key, int(time.time()) - 5)),
                       ("garbage", "/ui/login?token=%3Cscript%3E"), ("none", "/ui/login")]:
        status, headers, body = s.request("GET", path)
        assert status == 403, (what, status, body)
        check_security_headers(headers, what)
    # The real link: 303 to /ui/ with the cookie; a token minted the same way works too (control).
    status, headers = s.login()
    assert headers["Location"].startswith("/ui/#key=") and len(s.key) >= 40, headers["Location"]
    cookie = headers["Set-Cookie"]
    name = "__Host-batchai-ui-%d=" % s.port
    assert cookie.startswith(name), cookie
    attrs = [a.strip() for a in cookie.split(";")[1:]]
    for a in ["Path=/", "Secure", "HttpOnly", "SameSite=Strict", "Max-Age=43200"]:
        assert a in attrs, (a, cookie)
    assert "token" not in headers["Location"]
    check_security_headers(headers, "login")
    status, headers, _ = s.request("GET", s.path_of(s.login_url))
    assert status == 403, "a link works once, got %d" % status
    control = "/ui/login?token=" + mint_login_token(key, int(time.time()) + 60)
    assert s.request("GET", control)[0] == 303, "a well-made token must pass (the expired check is then real)"
    # ARM never takes the cookie.
    status, _, body = s.request("GET", "/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups?api-version=2018-05-01",
                                {"Cookie": s.cookie})
    assert status == 401, (status, body)
    # The API's own checks.
    status, headers, _ = s.ui("/ui/api/overview", api_header=False)
    assert status == 403, status
    check_security_headers(headers, "no X-Batchai-UI")
    # Issue 53 (F403): the cookie is all a page on another port of the host gets; with the header
    # anyone can send (or another login's key) it is no session.
    other = Server.__new__(Server)
    other.__dict__.update(s.__dict__)
    other.login(s.cli("serve", "ui-url", "--port", str(s.port)).stdout.strip())
    for what, value in [("1", "1"), ("the cookie", s.cookie.split("=", 1)[1]), ("another login's key", other.key),
                        ("nothing", "")]:
        status, headers, body = s.ui("/ui/api/overview", api_header=value or " ")
        assert status == 401 and json.loads(body)["error"]["code"] == "LoginRequired", (what, status, body)
        check_security_headers(headers, what)
    assert other.ui("/ui/api/overview")[0] == 200 and s.ui("/ui/api/overview")[0] == 200
    for origin in ["https://evil.example", "https://localhost:%d" % (s.port + 1), "null", "http://localhost:%d" % s.port]:
        status, headers, _ = s.ui("/ui/api/overview", {"Origin": origin})
        assert status == 403, (origin, status)
        check_security_headers(headers, origin)
    for origin in ["https://localhost:%d" % s.port, "https://127.0.0.1:%d" % s.port]:
        assert s.ui("/ui/api/overview", {"Origin": origin})[0] == 200, origin
    status, headers, _ = s.ui("/ui/api/overview", {"Host": "evil.example:%d" % s.port})
    assert status == 403, status
    assert s.ui("/ui/api/overview", {"Host": "127.0.0.1:%d" % s.port})[0] == 200
    status, headers, _ = s.request("POST", "/ui/api/overview", {"Cookie": s.cookie, "X-Batchai-UI": s.key})
    assert status == 405, status
    check_security_headers(headers, "POST")
    print("login and guard: ok")


def check_assets(s):
    status, headers, body = s.ui("/ui/")
    assert status == 200 and headers["Content-Type"].startswith("text/html"), (status, headers["Content-Type"])
    assert b"/ui/app.js" in body and headers["Cache-Control"] == "no-cache"
    check_security_headers(headers, "/ui/")
    etag = headers["ETag"]
    status, headers, body = s.ui("/ui/", {"If-None-Match": etag})
    assert status == 304 and body == b"", status
    check_security_headers(headers, "304")
    status, headers, _ = s.ui("/ui/app.js")
    assert status == 200 and headers["Content-Type"].startswith("text/javascript"), headers["Content-Type"]
    assert headers["ETag"] != etag
    status, headers, _ = s.ui("/ui/app.css")
    assert status == 200 and headers["Content-Type"].startswith("text/css")
    status, headers, _ = s.ui("/ui/nothing.js")
    assert status == 404, status
    check_security_headers(headers, "404")
    print("assets: ok")


def setup_resources(s):
    s.cli("group", "create", "-n", "rg", "-l", "eastus")
    s.cli("workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus")
    s.cli("experiment", "create", "-g", "rg", "-w", "ws", "-n", "exp")
    s.cli("cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_NC6", "-t", "2", "-u", "admin",
          "-p", ADMIN_PASSWORD)
    s.cli("storage", "account", "create", "-g", "rg", "-n", "dashsa", "-l", "eastus")
    key = s.cli("storage", "account", "keys", "list", "-g", "rg", "-n", "dashsa", "--query", "[0].value", "-o", "tsv").stdout.strip()
    s.cli("storage", "share", "create", "-n", "models", "--account-name", "dashsa", "--account-key", key)
    return key


def check_hostile_job(s, answers):
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "hostile", "-c", "c", "-f",
          job_file(s.home, "hostile", HOSTILE_JOB, extra={
              "environmentVariables": [{"name": "HP", "value": "x<y\"&z"}],
              "secrets": [{"name": "S", "value": SECRET_VALUE}]}))
    wait_for(lambda: job_state(s, "hostile") in ("succeeded", "failed"), "the hostile job")
    assert job_state(s, "hostile") == "succeeded"
    q = dict(W, experiment="exp", job="hostile")
    status, _, job, raw = s.api("job", **q)
    answers.append(raw)
    assert status == 200, job
    j = job["job"]
    for key in ["name", "experiment", "cluster", "state", "toolType", "nodeCount", "priority", "creationTime", "startTime",
                "endTime", "exitCode", "executionState", "errors", "stateHistory", "environmentVariables",
                "secretEnvironmentVariables", "commandLine", "nodes"]:
        assert key in j, key
    assert j["state"] == "succeeded" and j["exitCode"] == 0 and j["cluster"] == "c", j
    assert [h["state"] for h in j["stateHistory"]] == ["queued", "running", "succeeded"], j["stateHistory"]
    assert j["environmentVariables"] == [{"name": "HP", "value": "x<y\"&z"}], j["environmentVariables"]
    assert j["secretEnvironmentVariables"] == [{"name": "S"}], j["secretEnvironmentVariables"]
    assert "<script>" in j["commandLine"]
    assert len(j["nodes"]) == 1 and j["nodes"][0]["nodeId"]
    assert set(job["cli"]) == {"show", "files", "stream"}
    assert job["cli"]["stream"] == "batchai job file stream -g rg -w ws -e exp -j hostile -d stdouterr -f stdout.txt", job["cli"]
    names = {f["name"]: f for f in job["files"]}
    assert "stdout.txt" in names and names["stdout.txt"]["directory"] == "stdouterr", names
    assert names["stdout.txt"]["bytes"] > 1000000
    status, headers, body = s.request("GET", names["stderr.txt"]["url"])
    assert status == 200 and headers["Content-Disposition"].startswith("attachment"), (status, headers)
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Content-Type"] == "application/octet-stream"
    # The log, page by page: each answer bounded and valid JSON, offsets contiguous, bytes exact.
    offset, text, pages = 0, "", 0
    while True:
        status, _, page, raw = s.api("job/log", file="stdout.txt", offset=offset, **q)
        assert status == 200, page
        assert page["offset"] == offset and page["nextOffset"] > offset, page
        text += page["text"]
        offset = page["nextOffset"]
        pages += 1
        if page["eof"]:
            break
    assert offset == names["stdout.txt"]["bytes"] == page["size"], (offset, page["size"])
    assert "<script>alert(1)</script>" in text and "nul:\u0000:end" in text and "bad utf8:\ufffd\ufffd:end" in text, text[:300]
    assert pages >= 16, pages  # 1 MB in pieces of at most 64 KiB
    status, _, tail, raw = s.api("job/log", file="stdout.txt", tail=1, **q)
    assert tail["nextOffset"] == tail["size"] and "Test accuracy" in tail["text"] and tail["eof"], tail["nextOffset"]
    status, _, earlier, raw = s.api("job/log", file="stdout.txt", before=tail["offset"], **q)
    assert earlier["nextOffset"] == tail["offset"] and earlier["offset"] < tail["offset"]
    answers.append(raw)
    for bad in [{"file": "../x"}, {"file": "a/b"}, {"file": "stdout.txt", "offset": "-1"},
                {"file": "stdout.txt", "tail": "1", "offset": "0"}]:
        status, _, err, _ = s.api("job/log", **dict(q, **bad))
        assert status == 400 and err["error"]["code"], (bad, status, err)
    status, _, err, _ = s.api("job/log", file="nothing.txt", **q)
    assert status == 404, status
    # Metrics from the Keras lines of stdout, the experiment's summary with the test accuracy.
    status, _, m, raw = s.api("job/metrics", **q)
    answers.append(raw)
    assert m["source"] == "stdout" and [e["epoch"] for e in m["epochs"]] == [1, 2], m
    assert m["epochs"][1]["val_acc"] == 0.6 and m["epochs"][1]["lr"] is None and m["timeline"] is None
    print("hostile job: ok (%d log pages)" % pages)


def check_model_job(s, key, answers):
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "model", "-c", "c", "-f",
          job_file(s.home, "model", MODEL_JOB), "--storage-account-name", "dashsa", "--storage-account-key", key,
          "--afs-name", "models", "--afs-mount-path", "myshare")
    wait_for(lambda: job_state(s, "model") in ("succeeded", "failed"), "the model job")
    assert job_state(s, "model") == "succeeded"
    q = dict(W, experiment="exp", job="model")
    status, _, job, raw = s.api("job", **q)
    answers.append(raw)
    assert [f["name"] for f in job["model"]] == ["keras_cifar10_trained_model.h5"], job["model"]
    assert job["model"][0]["bytes"] == 16
    status, headers, body = s.request("GET", job["model"][0]["url"])
    assert status == 200 and body == b"HDF5-model-bytes", (status, body)
    assert headers["Content-Disposition"] == 'attachment; filename="keras_cifar10_trained_model.h5"', headers
    assert headers["X-Content-Type-Options"] == "nosniff" and headers["Content-Type"] == "application/octet-stream"
    tampered = job["model"][0]["url"][:-3] + "AAA"
    assert s.request("GET", tampered)[0] == 403
    status, _, m, raw = s.api("job/metrics", **q)
    answers.append(raw)
    assert m["source"] == "metrics.json" and m["epochs"][0]["images_per_sec"] == 1200.0, m
    assert m["epochs"][1]["images_per_sec"] is None
    assert m["timeline"]["ranks"][0]["meanMs"]["forward_backward"] == 20.0
    status, _, e, raw = s.api("experiment", **dict(W, experiment="exp"))
    answers.append(raw)
    rows = {r["name"]: r for r in e["jobs"]}
    assert rows["hostile"]["testAccuracy"] == 0.7848 and rows["hostile"]["bestValAcc"] == 0.6, rows["hostile"]
    assert rows["hostile"]["bestEpoch"] == 2 and rows["hostile"]["finalValAcc"] == 0.6
    assert rows["model"]["bestValAcc"] == 0.52 and rows["model"]["testAccuracy"] is None
    assert e["cli"] == "batchai job list -g rg -w ws -e exp -o table"
    # A cluster's own mount: "mountRoot": "cluster" resolves there, the same path under the job's root does not.
    s.cli("cluster", "create", "-g", "rg", "-w", "ws", "-n", "cm", "-s", "Standard_D1", "-t", "1", "-u", "admin",
          "-p", ADMIN_PASSWORD, "--storage-account-name", "dashsa", "--storage-account-key", key,
          "--afs-name", "models", "--afs-mount-path", "clustershare")
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "cmodel", "-c", "cm", "-f",
          job_file(s.home, "cmodel", CLUSTER_MODEL_JOB))
    wait_for(lambda: job_state(s, "cmodel") in ("succeeded", "failed"), "the cluster-mount job")
    assert job_state(s, "cmodel") == "succeeded"
    status, _, job, raw = s.api("job", **dict(W, experiment="exp", job="cmodel"))
    assert [(f["name"], f["bytes"]) for f in job["model"]] == [("m2.h5", 13)], job["model"]
    assert s.request("GET", job["model"][0]["url"])[2] == b"cluster-model"
    print("model job and manifest: ok")


HUGE_COMMAND = "echo long; : " + "x" * 70000

NESTED_METRICS_JOB = r"""
head -c 4194304 /dev/zero | tr '\000' '[' > "$AZ_BATCHAI_STDOUTERR_DIR/metrics.json"
printf '%s' '{"version": 1, "files": [], "timelineSummary": {"ranks": 5}}' > "$AZ_BATCHAI_STDOUTERR_DIR/batchai-manifest.json"
"""


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))


def check_hostile_job_files(s, answers):
    """Issue 53: what a job writes costs the server its bounds (F404: 4 MiB of '[' in metrics.json,
    read four at a time), a malformed manifest is reported as such (F406), and a 70,000-character
    command line is trimmed in the answer, not a 500 (F407)."""
    s.cli("experiment", "create", "-g", "rg", "-w", "ws", "-n", "files")
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "files", "-n", "nested", "-c", "c", "-f",
          job_file(s.home, "nested", NESTED_METRICS_JOB))
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "files", "-n", "longcmd", "-c", "c", "-f",
          job_file(s.home, "longcmd", HUGE_COMMAND))
    for name in ["nested", "longcmd"]:
        wait_for(lambda: job_state(s, name, "files") in ("succeeded", "failed"), "the job " + name)
        assert job_state(s, name, "files") == "succeeded", name
    q = dict(W, experiment="files", job="nested")
    before = peak_rss_kib(s.proc.pid)
    results = []
    threads = [threading.Thread(target=lambda: results.append(s.api("job/metrics", **q))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    grown_mib = (peak_rss_kib(s.proc.pid) - before) / 1024
    assert len(results) == 4 and all(r[0] == 200 for r in results), [r[0] for r in results]
    m = results[0][2]
    answers.append(results[0][3])
    assert m["epochs"] == [] and m["source"] is None, m
    assert m["timeline"] is None and "malformed" in m["timelineError"], m
    assert grown_mib < 64, "four reads of 4 MiB of '[' grew the server's peak RSS by %.0f MiB" % grown_mib
    status, _, e, _ = s.api("experiment", **dict(W, experiment="files"))
    assert status == 200 and {"nested", "longcmd"} <= {r["name"] for r in e["jobs"]}, status
    status, _, job, raw = s.api("job", **dict(W, experiment="files", job="longcmd"))
    assert status == 200, (status, job)
    answers.append(raw)
    line = job["job"]["commandLine"]
    assert job["job"]["commandLineTrimmed"] is True and line.startswith("echo long; : xxx") and line.endswith("\u2026"), line[:40]
    assert 1000 < len(line) < 20000 and len(raw) <= 65536, len(line)
    print("hostile job files: metrics.json of 4 MiB '[' x4 grew peak RSS %.1f MiB; manifest malformed; "
          "command line %d -> %d characters: ok" % (grown_mib, len(HUGE_COMMAND), len(line)))


def check_link_across_servers(s, exe, home):
    """Issue 53 (F401): a used link stays used on the home's other servers and after a restart."""
    used = s.path_of(s.login_url)  # spent by check_login_and_guard
    second = Server(exe, home)
    try:
        assert second.request("GET", used)[0] == 403, "a used link works on a second server of the home"
        fresh = s.cli("serve", "ui-url", "--port", str(second.port)).stdout.strip()
        assert second.request("GET", second.path_of(fresh))[0] == 303
        assert s.request("GET", s.path_of(fresh))[0] == 403, "a link used on the second server works on the first"
    finally:
        second.stop()
    restarted = Server(exe, home)
    try:
        for path in [used, second.path_of(fresh)]:
            assert restarted.request("GET", path)[0] == 403, "a used link works after a restart"
        assert restarted.request("GET", restarted.path_of(restarted.login_url))[0] == 303
    finally:
        restarted.stop()
    print("used links stay used across servers of the home and restarts: ok")


def check_queue(s, answers):
    # Two nodes; a 2-node job holds both, then three wait: their order and reasons.
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "hold", "-c", "c", "-f",
          job_file(s.home, "hold", "sleep 60", node_count=2))
    wait_for(lambda: job_state(s, "hold") == "running", "the holding job")
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "q1", "-c", "c", "-f", job_file(s.home, "q1", "true", 2))
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "q2", "-c", "c", "-f", job_file(s.home, "q2", "true", 1))
    s.cli("job", "create", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "q3", "-c", "c", "-f",
          job_file(s.home, "q3", "true", 1, {"schedulingPriority": "high"}))
    status, _, page, raw = s.api("jobs", experiment="exp", state="queued", **W)
    answers.append(raw)
    assert status == 200 and page["total"] == 3, page
    rows = {r["name"]: r for r in page["jobs"]}
    assert [r["name"] for r in page["jobs"]] == ["q3", "q2", "q1"], "newest first"
    assert rows["q3"]["queuePosition"] == 1 and rows["q1"]["queuePosition"] == 2 and rows["q2"]["queuePosition"] == 3, rows
    assert rows["q1"]["waitReason"] == "Waits for 2 idle nodes of c (0 idle); 2nd in line by priority then creation time.", rows["q1"]
    assert rows["q3"]["waitReason"].startswith("Waits for 1 idle node of c (0 idle); 1st"), rows["q3"]
    status, _, page, raw = s.api("jobs", experiment="exp", **W)
    assert page["countsByState"]["running"] == 1 and page["countsByState"]["queued"] == 3, page["countsByState"]
    assert page["countsByState"]["succeeded"] == 3 and page["total"] == 7, page
    held = {r["name"]: r for r in page["jobs"]}["hold"]
    assert held["queuePosition"] is None and held["waitReason"] is None and held["state"] == "running"
    assert page["cli"] == "batchai job list -g rg -w ws -e exp -o table"
    status, _, page, _ = s.api("jobs", experiment="exp", limit=2, page=1, **W)
    assert [r["name"] for r in page["jobs"]] == ["q1", "hold"], page["jobs"]
    # The nodes: both run the holding job.
    status, _, nodes, raw = s.api("cluster/nodes", cluster="c", **W)
    answers.append(raw)
    assert nodes["engine"] == "simulated" and len(nodes["nodes"]) == 2, nodes
    for n in nodes["nodes"]:
        assert n["state"] == "running" and n["job"] == {"experiment": "exp", "name": "hold", "slurmJobId": None}, n
        assert n["nodeId"] and n["ipAddress"]
    assert nodes["cli"] == "batchai cluster node list -g rg -w ws -c c"
    # The overview: counts, engine, 304 while nothing changes.
    status, headers, o, raw = s.api("overview")
    answers.append(raw)
    c = o["clusters"][0]
    assert (c["name"], c["engine"], c["currentNodeCount"], c["targetNodeCount"]) == ("c", "simulated", 2, 2), c
    assert c["nodeStateCounts"]["runningNodeCount"] == 2
    assert o["experiments"][0]["jobCounts"]["queued"] == 3 and o["workspaces"] == [{"resourceGroup": "rg", "name": "ws"}]
    assert headers["ETag"] == '"%s"' % o["version"] and o["cli"] == "batchai cluster list -o table"
    status, headers, body = s.ui("/ui/api/overview", {"If-None-Match": '"%s"' % o["version"]})
    assert status == 304 and body == b"", status
    check_security_headers(headers, "overview 304")
    s.cli("job", "terminate", "-g", "rg", "-w", "ws", "-e", "exp", "-n", "hold", "-y")
    status, headers, body = s.ui("/ui/api/overview", {"If-None-Match": '"%s"' % o["version"]})
    assert status == 200 and json.loads(body)["version"] != o["version"], "the version changes with a job's state"
    print("queue, nodes and overview: ok")


def check_bad_parameters(s):
    for path, query, code in [("jobs", {"resourceGroup": "r/g", "workspace": "ws", "experiment": "exp"}, 400),
                              ("jobs", {"resourceGroup": "rg", "workspace": "w s", "experiment": "exp"}, 400),
                              ("jobs", {"resourceGroup": "rg", "workspace": "ws"}, 400),
                              ("jobs", dict(W, experiment="exp", limit="101"), 400),
                              ("jobs", dict(W, experiment="exp", state="sleeping"), 400),
                              ("jobs", dict(W, experiment="nothere"), 404),
                              ("job", dict(W, experiment="exp", job="nothere"), 404),
                              ("job", dict(W, experiment="exp", job="x" * 65), 400),
                              ("cluster/nodes", dict(W, cluster="nothere"), 404),
                              ("nothing", {}, 404)]:
        status, headers, body, _ = s.api(path, **query)
        assert status == code and body["error"]["code"] and body["error"]["message"], (path, query, status, body)
        check_security_headers(headers, path)
    print("bad parameters: ok")


def check_ui_url(s):
    done = s.cli("serve", "ui-url")
    url = done.stdout.strip()
    assert url.startswith("https://localhost:%d/ui/login?token=" % s.port), url
    assert s.request("HEAD", s.path_of(url))[0] == 405, "a HEAD (a link preview) must not spend the link"
    assert s.request("GET", s.path_of(url))[0] == 303
    assert s.request("GET", s.path_of(url))[0] == 403
    assert s.cli("serve", "ui-url", "--port", "1234").stdout.startswith("https://localhost:1234/ui/login?token=")
    empty = tempfile.mkdtemp(prefix="batchai-ui-empty-")
    try:
        done = subprocess.run([s.exe, "serve", "ui-url"], env=dict(s.env, BATCHAI_HOME=empty), capture_output=True,
                              text=True, timeout=30)
        assert done.returncode == 1 and "batchai serve" in done.stderr and not done.stdout, (done.returncode, done.stderr)
    finally:
        shutil.rmtree(empty, ignore_errors=True)
    print("serve ui-url: ok")


def check_credentials_removed(s, home):
    """credentials.json deleted under a running server: `serve ui-url` refuses (it must not make an
    identity the server does not know), the server keeps its own, and the file put back works."""
    creds = os.path.join(home, "serve", "credentials.json")
    with open(creds, "rb") as f:
        saved = f.read()
    os.remove(creds)
    done = subprocess.run([s.exe, "serve", "ui-url"], env=s.env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and not done.stdout and "credentials.json" in done.stderr, (done.returncode, done.stderr)
    assert not os.path.exists(creds), "ui-url made a new identity the running server does not know"
    status, _, _, _ = s.api("overview")
    assert status == 200, "the running server lost its identity with the file: %d" % status
    fd = os.open(creds, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(saved)
    url = s.cli("serve", "ui-url").stdout.strip()
    assert s.request("GET", s.path_of(url))[0] == 303, "the link of the restored identity does not log in"
    print("credentials.json removed under the server: ui-url refuses, the server serves on: ok")


def main():
    exe = os.path.abspath(sys.argv[1])
    home = tempfile.mkdtemp(prefix="batchai-ui-")
    s = Server(exe, home)
    answers = []
    try:
        check_login_and_guard(s)
        check_assets(s)
        key = setup_resources(s)
        check_hostile_job(s, answers)
        check_model_job(s, key, answers)
        check_hostile_job_files(s, answers)
        check_queue(s, answers)
        check_bad_parameters(s)
        check_ui_url(s)
        check_credentials_removed(s, home)
        check_link_across_servers(s, exe, home)
        for raw in answers:
            assert SECRET_VALUE.encode() not in raw and ADMIN_PASSWORD.encode() not in raw and key.encode() not in raw
            assert len(raw) <= 65536
        print("secrets absent from %d answers: ok" % len(answers))
    finally:
        s.stop()
        shutil.rmtree(home, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
