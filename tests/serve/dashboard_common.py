"""Shared by the dashboard tests (dashboard_api.py, dashboard_scale.py): a real `batchai serve
--port 0` on a temporary home, its printed lines, the login, and HTTPS requests with the
standard library only (http.client + ssl)."""
import base64
import hashlib
import hmac
import http.client
import json
import os
import re
import secrets
import ssl
import subprocess
import time

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
       "trusted-types 'none'")


class Server:
    def __init__(self, exe, home, delay="1"):
        self.exe, self.home = exe, home
        self.env = dict(os.environ, BATCHAI_HOME=home, BATCHAI_SIM_DELAY_S=delay)
        self.proc = subprocess.Popen([exe, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=self.env, text=True)
        self.lines = []
        while not (self.lines and self.lines[-1].startswith("az login")):
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("FAIL: batchai serve ended before its az lines: %r" % self.lines)
            self.lines.append(line.strip())
        for line in self.lines:  # stdout keeps only the lines to paste
            assert line.startswith("export ") or line.startswith("az "), line
        self.login_url = None
        while self.login_url is None:
            line = self.proc.stderr.readline()
            if not line:
                raise SystemExit("FAIL: no dashboard line on stderr")
            m = re.match(r"Dashboard \(one-time link, valid 10 minutes\): (https://localhost:(\d+)/ui/login\?token=\S+)$",
                         line.strip())
            if m:
                self.login_url = m.group(1)
                self.port = int(m.group(2))
        self.cert = next(l.split("=", 1)[1].strip("'") for l in self.lines if l.startswith("export REQUESTS_CA_BUNDLE="))
        m = re.search(r"az login --service-principal -u (\S+) -p (\S+) --tenant (\S+)$", self.lines[-1])
        self.client_id, self.client_secret, self.tenant = m.groups()
        self.ctx = ssl.create_default_context(cafile=self.cert)
        self.cookie = self.key = None

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def cli(self, *args, check=True):
        done = subprocess.run([self.exe] + list(args), env=self.env, capture_output=True, text=True, timeout=120)
        if check:
            assert done.returncode == 0, (args, done.stdout[-2000:], done.stderr[-2000:])
        return done

    def request(self, method, path, headers=None, host="localhost"):
        conn = http.client.HTTPSConnection(host, self.port, context=self.ctx, timeout=30)
        try:
            conn.request(method, path, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.headers, r.read()
        finally:
            conn.close()

    def path_of(self, url):
        return "/" + url.split("://", 1)[1].split("/", 1)[1]

    def login(self, url=None):
        status, headers, _ = self.request("GET", self.path_of(url or self.login_url))
        assert status == 303, status
        cookie = headers["Set-Cookie"]
        self.cookie = cookie.split(";", 1)[0]
        # The session key rides in the redirect's fragment (the page keeps it in its origin's storage).
        self.key = headers["Location"].split("#key=", 1)[1]
        return status, headers

    def ui(self, path, extra=None, cookie=True, api_header=True):
        """A GET with the login's cookie and, as X-Batchai-UI, its session key (or `api_header`'s text)."""
        headers = {}
        if cookie and self.cookie:
            headers["Cookie"] = self.cookie
        if api_header:
            headers["X-Batchai-UI"] = api_header if isinstance(api_header, str) else (self.key or "1")
        headers.update(extra or {})
        return self.request("GET", path, headers)

    def api(self, path, **query):
        from urllib.parse import urlencode
        status, headers, body = self.ui("/ui/api/" + path + ("?" + urlencode(query) if query else ""))
        assert len(body) <= 65536, (path, len(body))
        return status, headers, (json.loads(body) if body else None), body

    def token_key(self):
        with open(os.path.join(self.home, "serve", "credentials.json")) as f:
            return bytes.fromhex(json.load(f)["tokenKey"])


def mint_login_token(key, expires):
    """A link token as the server makes one (ui_auth.cpp), for the expiry test."""
    payload = "%d.%s" % (expires, secrets.token_hex(16))
    sig = base64.urlsafe_b64encode(hmac.new(key, ("ui-login\n" + payload).encode(), hashlib.sha256).digest())
    return payload + "." + sig.decode().rstrip("=")


def check_security_headers(headers, what):
    assert headers.get("Content-Security-Policy") == CSP, (what, headers.get("Content-Security-Policy"))
    assert headers.get("X-Content-Type-Options") == "nosniff", what
    assert headers.get("Referrer-Policy") == "no-referrer", what
    assert headers.get("X-Frame-Options") == "DENY", what


def wait_for(fn, what, limit_s=60):
    deadline = time.time() + limit_s
    while True:
        value = fn()
        if value:
            return value
        assert time.time() < deadline, "timed out waiting for " + what
        time.sleep(0.3)
