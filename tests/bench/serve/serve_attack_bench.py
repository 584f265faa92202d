#!/usr/bin/env python3
"""serve_attack_bench (issue 24, "Measure"): `batchai serve` under hostile load.

For each executable given (the new build and, side by side in the same run, an old one), on a fresh
home holding one job: starts `batchai serve --port 0`, opens IDLE plain TCP connections that never
send a byte, SLOW TLS clients that trickle one header line a second (slowloris), and CHUNKED TLS
clients that send an endless chunked body with a valid token (each reconnects when the server drops
it), and SLOW-BODY TLS clients (issue 53 F410/F411) that send, without any credential, a head
declaring a body on a route that takes none (or the token endpoint) and then one byte of it every
2 s, then times an authorised `GET .../jobs/{name}` from one client (a fresh connection each time,
as a client that was dropped must reconnect) and reports p50/p99 and failures, the server's peak RSS
above its idle RSS, and the time from SIGTERM (sent while the attack goes on) to exit.

Usage: serve_attack_bench.py --exe build/src/cli/batchai [--exe old/batchai ...]
         [--idle 1000] [--slow 100] [--chunked 10] [--requests 200] [--timeout 10]
         [--slow-body 512 --slow-body-path /ui/ --slow-body-length 4194304 --slow-body-prefix 0]
The issue 53 figures: --idle 0 --slow 0 --chunked 0 --slow-body 512 --requests 50 --timeout 8
"""
import argparse
import asyncio
import http.client
import json
import os
import re
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

API = "api-version=2018-05-01"


def run(exe, home, *args):
    env = dict(os.environ, BATCHAI_HOME=home, BATCHAI_SIM_DELAY_S="0")
    out = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} failed: {out.stderr}")
    return out.stdout


def seed(exe, home):
    run(exe, home, "group", "create", "-n", "rg", "-l", "eastus")
    run(exe, home, "workspace", "create", "-g", "rg", "-n", "ws", "-l", "eastus")
    run(exe, home, "experiment", "create", "-g", "rg", "-w", "ws", "-n", "ex")
    run(exe, home, "cluster", "create", "-g", "rg", "-w", "ws", "-n", "c", "-s", "Standard_D1", "-t", "1",
        "-u", "u", "-p", "p")
    job_file = os.path.join(home, "job.json")
    with open(job_file, "w") as f:
        json.dump({"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
                                  "customToolkitSettings": {"commandLine": "true"}}}, f)
    run(exe, home, "job", "create", "-g", "rg", "-w", "ws", "-e", "ex", "-n", "j", "-c", "c", "-f", job_file)
    return json.loads(run(exe, home, "job", "show", "-g", "rg", "-w", "ws", "-e", "ex", "-n", "j"))["id"]


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Server:
    def __init__(self, exe, home):
        env = dict(os.environ, BATCHAI_HOME=home, BATCHAI_SIM_DELAY_S="0")
        self.proc = subprocess.Popen([exe, "serve", "--port", "0"], env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)
        lines = []
        while len(lines) < 4:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit("batchai serve printed no setup lines")
            lines.append(line)
        text = "".join(lines)
        self.port = int(re.search(r"https://localhost:(\d+)/", text).group(1))
        login = re.search(r"-u (\S+) -p (\S+) --tenant (\S+)", text)
        self.client_id, self.secret = login.group(1), login.group(2)
        self.ctx = ssl.create_default_context()
        self.ctx.check_hostname = False
        self.ctx.verify_mode = ssl.CERT_NONE

    def token(self):
        body = urllib.parse.urlencode({"grant_type": "client_credentials", "client_id": self.client_id,
                                       "client_secret": self.secret, "scope": f"https://localhost:{self.port}/.default"})
        c = http.client.HTTPSConnection("localhost", self.port, context=self.ctx, timeout=10)
        c.request("POST", "/adfs/oauth2/token", body, {"Content-Type": "application/x-www-form-urlencoded"})
        return json.loads(c.getresponse().read())["access_token"]


async def idle_client(port, stop):
    """Connects, says nothing, and connects again when the server drops it."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            await reader.read(1)  # returns when the server closes
            writer.close()
        except Exception:
            await asyncio.sleep(0.5)


async def slow_client(port, ctx, stop):
    while not stop.is_set():
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=ctx), 10)
            writer.write(b"GET /metadata/endpoints HTTP/1.1\r\nHost: localhost\r\n")
            while not stop.is_set() and not reader.at_eof():
                await asyncio.sleep(1)
                writer.write(b"X-Slow: 1\r\n")
                await writer.drain()
        except Exception:
            await asyncio.sleep(0.2)


async def chunked_client(port, ctx, path, token, stop):
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    while not stop.is_set():
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=ctx), 10)
            writer.write(f"PUT {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n"
                         "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
            while not stop.is_set() and not reader.at_eof():
                writer.write(chunk)
                await asyncio.wait_for(writer.drain(), 10)
        except Exception:
            await asyncio.sleep(0.2)


async def slow_body_client(port, ctx, path, length, prefix, stop):
    """Declares a body of `length` bytes, sends `prefix` of them at once, then one byte every 2 s,
    without credentials."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, ssl=ctx), 10)
            writer.write(f"POST {path} HTTP/1.1\r\nHost: localhost\r\n"
                         "Content-Type: application/x-www-form-urlencoded\r\n"
                         f"Content-Length: {length}\r\n\r\n".encode() + b"a" * prefix)
            while not stop.is_set():
                writer.write(b"a")
                await writer.drain()
                try:
                    if not await asyncio.wait_for(reader.read(65536), 2):
                        break  # closed by the server: connect again
                except asyncio.TimeoutError:
                    pass
            writer.close()
        except Exception:
            await asyncio.sleep(0.2)


def attack(server, args, token, stop, ready):
    async def main():
        astop = asyncio.Event()
        tasks = [asyncio.create_task(idle_client(server.port, astop)) for _ in range(args.idle)]
        tasks += [asyncio.create_task(slow_client(server.port, server.ctx, astop)) for _ in range(args.slow)]
        path = f"/subscriptions/00000000-0000-0000-0000-000000000000/resourcegroups/attack?api-version=2021-04-01"
        tasks += [asyncio.create_task(chunked_client(server.port, server.ctx, path, token, astop))
                  for _ in range(args.chunked)]
        tasks += [asyncio.create_task(slow_body_client(server.port, server.ctx, args.slow_body_path,
                                                       args.slow_body_length, args.slow_body_prefix, astop))
                  for _ in range(args.slow_body)]
        await asyncio.sleep(3)  # let the connections pile up
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.1)
        astop.set()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    asyncio.run(main())


def measure(exe, args):
    home = tempfile.mkdtemp(prefix="batchai-attack-")
    job_id = seed(exe, home)
    server = Server(exe, home)
    token = server.token()
    path = job_id + "?" + API
    time.sleep(0.5)
    idle_rss = rss_kib(server.proc.pid, "VmRSS")
    stop, ready = threading.Event(), threading.Event()
    attacker = threading.Thread(target=attack, args=(server, args, token, stop, ready), daemon=True)
    attacker.start()
    ready.wait(30)
    times, failures, within_1s = [], 0, 0
    for _ in range(args.requests):
        start = time.monotonic()
        try:
            c = http.client.HTTPSConnection("localhost", server.port, context=server.ctx, timeout=args.timeout)
            c.request("GET", path, headers={"Authorization": "Bearer " + token})
            r = c.getresponse()
            r.read()
            c.close()
            if r.status != 200:
                failures += 1
            elif time.monotonic() - start <= 1:
                within_1s += 1
        except Exception:
            failures += 1
        times.append((time.monotonic() - start) * 1000)
    peak_rss = rss_kib(server.proc.pid, "VmHWM")
    start = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    try:
        server.proc.wait(30)
        exit_s = time.monotonic() - start
    except subprocess.TimeoutExpired:
        server.proc.kill()
        exit_s = float("inf")
    stop.set()
    attacker.join(10)
    subprocess.run(["rm", "-rf", home])
    times.sort()
    return {"exe": exe, "p50_ms": statistics.median(times), "p99_ms": times[max(0, int(len(times) * 0.99) - 1)],
            "max_ms": times[-1], "within_1s": within_1s,
            "failures": failures, "requests": len(times), "rss_growth_mib": (peak_rss - idle_rss) / 1024,
            "sigterm_to_exit_s": exit_s}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--exe", action="append", required=True)
    p.add_argument("--idle", type=int, default=1000)
    p.add_argument("--slow", type=int, default=100)
    p.add_argument("--chunked", type=int, default=10)
    p.add_argument("--slow-body", type=int, default=0)
    p.add_argument("--slow-body-path", default="/ui/")
    p.add_argument("--slow-body-length", type=int, default=4 * 1024 * 1024)
    p.add_argument("--slow-body-prefix", type=int, default=0, help="bytes of the body sent at once")
    p.add_argument("--requests", type=int, default=200)
    p.add_argument("--timeout", type=float, default=10)
    args = p.parse_args()
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    print(f"attack: {args.idle} idle TCP, {args.slow} slowloris, {args.chunked} endless chunked bodies, "
          f"{args.slow_body} slow bodies ({args.slow_body_length} B declared, {args.slow_body_prefix} sent at once) "
          f"to {args.slow_body_path}; "
          f"{args.requests} authorised GET .../jobs/{{name}}, timeout {args.timeout} s")
    print("| build | p50 ms | p99 ms | max ms | answered 200 within 1 s | failed | peak RSS above idle MiB | SIGTERM to exit s |")
    print("|---|---|---|---|---|---|---|---|")
    for exe in args.exe:
        r = measure(exe, args)
        print(f"| {r['exe']} | {r['p50_ms']:.1f} | {r['p99_ms']:.1f} | {r['max_ms']:.1f} | "
              f"{r['within_1s']}/{r['requests']} | {r['failures']}/{r['requests']} | "
              f"{r['rss_growth_mib']:.1f} | {r['sigterm_to_exit_s']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
