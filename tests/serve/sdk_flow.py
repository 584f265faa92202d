#!/usr/bin/python3
"""Debian's Azure SDK (python3-azure: azure-mgmt-batchai 7.0.0b1, azure-mgmt-resource) unchanged
against `batchai serve` (issue 16, docs/serve-clients.md "The Azure SDK"). Usage: sdk_flow.py BATCHAI_EXE

Starts `batchai serve --port 0` on a temporary BATCHAI_HOME, reads the lines it prints, takes a
token from its token endpoint with the printed credentials, and drives BatchAI's long-running
operations with .result(). Fails (not skips) when the SDK is missing, naming the package."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:
    import requests
    from azure.core.credentials import AccessToken
    from azure.mgmt.batchai import BatchAI, models
    from azure.mgmt.resource import ResourceManagementClient
except ImportError as e:  # the test must fail, saying what to install
    print("FAIL: the Azure SDK is missing (%s): apt-get install python3-azure" % e, file=sys.stderr)
    sys.exit(1)

LIMIT_S = 60.0
POLL_S = 0.2


class ServerToken:
    """A TokenCredential: client credentials against the server's own ADFS-style token endpoint."""

    def __init__(self, token_url, client_id, secret, cert):
        self.url, self.client_id, self.secret, self.cert = token_url, client_id, secret, cert

    def get_token(self, *scopes, **kwargs):
        r = requests.post(self.url, verify=self.cert, timeout=30, data={
            "grant_type": "client_credentials", "client_id": self.client_id,
            "client_secret": self.secret, "scope": " ".join(scopes)})
        r.raise_for_status()
        body = r.json()
        return AccessToken(body["access_token"], int(time.time()) + int(body["expires_in"]))


def start_server(exe, home):
    env = dict(os.environ, BATCHAI_HOME=home, BATCHAI_SIM_DELAY_S="0")
    proc = subprocess.Popen([exe, "serve", "--port", "0"], stdout=subprocess.PIPE, env=env, text=True)
    lines = []
    while not (lines and lines[-1].startswith("az login")):
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("FAIL: batchai serve ended before printing its az lines: %r" % lines)
        lines.append(line.strip())
    return proc, lines


def parse_lines(lines):
    cert = port = login = None
    for line in lines:
        assert line.startswith("export ") or line.startswith("az "), line
        if line.startswith("export REQUESTS_CA_BUNDLE="):
            cert = line.split("=", 1)[1].strip("'")
        m = re.search(r"--endpoint-resource-manager https://localhost:(\d+)/", line)
        if m:
            port = int(m.group(1))
        m = re.match(r"az login --service-principal -u (\S+) -p (\S+) --tenant (\S+)$", line)
        if m:
            login = m.groups()
    assert cert and port and login, lines
    return cert, port, login


def wait_state(client, rg, ws, exp, job, states, limit_s=30):
    deadline = time.time() + limit_s
    while True:
        j = client.jobs.get(rg, ws, exp, job)
        if j.execution_state in states:
            return j
        assert time.time() < deadline, "job %s stuck in %s" % (job, j.execution_state)
        time.sleep(POLL_S)


def flow(base, cert, cred, sub):
    rg, ws, exp = "rg-sdk", "ws-sdk", "exp-sdk"
    resources = ResourceManagementClient(cred, sub, base_url=base, connection_verify=cert, polling_interval=POLL_S)
    group = resources.resource_groups.create_or_update(rg, {"location": "eastus"})
    assert group.name == rg, group
    client = BatchAI(cred, sub, base_url=base, connection_verify=cert, polling_interval=POLL_S)

    w = client.workspaces.begin_create(rg, ws, models.WorkspaceCreateParameters(location="eastus")).result()
    assert w.name == ws and w.provisioning_state == "succeeded", w
    assert [x.name for x in client.workspaces.list_by_resource_group(rg)] == [ws]
    w = client.workspaces.update(rg, ws, models.WorkspaceUpdateParameters(tags={"team": "ml"}))
    assert w.tags == {"team": "ml"}, w.tags

    cl = client.clusters.begin_create(rg, ws, "nc6", models.ClusterCreateParameters(
        vm_size="STANDARD_NC6",
        scale_settings=models.ScaleSettings(manual=models.ManualScaleSettings(target_node_count=1)),
        user_account_settings=models.UserAccountSettings(admin_user_name="demoUser",
                                                         admin_user_password="Passw0rd!"))).result()
    assert cl.name == "nc6" and cl.vm_size.lower() == "standard_nc6", cl
    assert cl.user_account_settings.admin_user_password is None, "the password was echoed"

    e = client.experiments.begin_create(rg, ws, exp).result()
    assert e.name == exp, e

    def job_params(command):
        return models.JobCreateParameters(
            cluster=models.ResourceId(id=cl.id), node_count=1,
            std_out_err_path_prefix="$AZ_BATCHAI_JOB_MOUNT_ROOT",
            custom_toolkit_settings=models.CustomToolkitSettings(command_line=command))

    j = client.jobs.begin_create(rg, ws, exp, "hi", job_params("echo hi")).result()
    assert j.name == "hi" and j.tool_type == "custom", j
    j = wait_state(client, rg, ws, exp, "hi", ("succeeded", "failed"))
    assert j.execution_state == "succeeded", j.execution_state
    assert j.execution_info.exit_code == 0, j.execution_info

    files = list(client.jobs.list_output_files(rg, ws, exp, "hi",
                                               models.JobsListOutputFilesOptions(outputdirectoryid="stdouterr")))
    names = sorted(f.name for f in files)
    assert "stdout.txt" in names and "stderr.txt" in names, names
    out = [f for f in files if f.name == "stdout.txt"][0]
    assert out.file_type == "file" and out.content_length == 3 and out.download_url, out
    # The download URL is a signed link: no token, as a SAS URL (a Range as az's stream sends).
    got = requests.get(out.download_url, verify=cert, timeout=30, headers={"Range": "bytes=1-"})
    assert (got.status_code, got.content) == (206, b"i\n"), (got.status_code, got.content)

    client.jobs.begin_create(rg, ws, exp, "long", job_params("sleep 300")).result()
    wait_state(client, rg, ws, exp, "long", ("running",))
    client.jobs.begin_terminate(rg, ws, exp, "long").result()
    j = wait_state(client, rg, ws, exp, "long", ("succeeded", "failed"))
    assert j.execution_state == "failed", j.execution_state
    assert sorted(x.name for x in client.jobs.list_by_experiment(rg, ws, exp)) == ["hi", "long"]

    cl = client.clusters.update(rg, ws, "nc6", models.ClusterUpdateParameters(scale_settings=models.ScaleSettings(
        manual=models.ManualScaleSettings(target_node_count=0))))
    assert cl.scale_settings.manual.target_node_count == 0, cl.scale_settings

    for job in ("hi", "long"):
        client.jobs.begin_delete(rg, ws, exp, job).result()
    client.experiments.begin_delete(rg, ws, exp).result()
    client.clusters.begin_delete(rg, ws, "nc6").result()
    client.workspaces.begin_delete(rg, ws).result()
    assert list(client.workspaces.list_by_resource_group(rg)) == []
    resources.resource_groups.begin_delete(rg).result()
    assert not resources.resource_groups.check_existence(rg)


def main():
    exe = os.path.abspath(sys.argv[1])
    home = tempfile.mkdtemp(prefix="batchai-sdk-")
    proc = None
    try:
        proc, lines = start_server(exe, home)
        cert, port, (client_id, secret, tenant) = parse_lines(lines)
        base = "https://localhost:%d" % port
        cred = ServerToken(base + "/adfs/oauth2/token", client_id, secret, cert)
        subs = requests.get(base + "/subscriptions?api-version=2019-11-01", verify=cert, timeout=30,
                            headers={"Authorization": "Bearer " + cred.get_token(base + "/.default").token}).json()
        sub = subs["value"][0]["subscriptionId"]
        assert subs["value"][0]["tenantId"] == tenant, subs

        t0 = time.time()
        flow(base, cert, cred, sub)
        wall = time.time() - t0
        print("sdk flow: OK in %.2f s" % wall)
        assert wall < LIMIT_S, "the SDK flow took %.1f s (limit %.0f s): polls are too slow" % (wall, LIMIT_S)

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0, "batchai serve did not exit 0 on SIGTERM"
    finally:
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
