#!/usr/bin/python3
"""The dashboard's sources (src/serve/ui/page/) never parse strings as HTML or code, and load nothing
from elsewhere. Usage: no_html_sinks_test.py UI_DIR

Refused anywhere: innerHTML, outerHTML, insertAdjacentHTML, document.write, eval(, new Function,
string timers (setTimeout/setInterval with a quoted first argument), on*= handler attributes and
style= attributes in the HTML, inline <script> without src, and absolute http(s)/protocol-relative
URLs (no CDN). The checker first proves on samples that it finds each of these."""
import os
import re
import sys

SINKS = [
    ("innerHTML", re.compile(r"innerHTML")),
    ("outerHTML", re.compile(r"outerHTML")),
    ("insertAdjacentHTML", re.compile(r"insertAdjacentHTML")),
    ("document.write", re.compile(r"document\s*\.\s*write")),
    ("eval(", re.compile(r"\beval\s*\(")),
    ("new Function", re.compile(r"\bnew\s+Function\b")),
    ("string timer", re.compile(r"\bset(?:Timeout|Interval)\s*\(\s*['\"`]")),
    ("remote URL", re.compile(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}/", re.I)),
]
HTML_ONLY = [
    ("handler attribute", re.compile(r"<[^>]*\son[a-z]+\s*=", re.I)),
    ("style attribute", re.compile(r"<[^>]*\sstyle\s*=", re.I)),
    ("inline script", re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)),
    ("inline style", re.compile(r"<style\b", re.I)),
]
# The SVG namespace is a name, never fetched.
ALLOWED = ["http://www.w3.org/2000/svg"]


def findings(name, text):
    for allowed in ALLOWED:
        text = text.replace(allowed, "")
    rules = SINKS + (HTML_ONLY if name.endswith(".html") else [])
    return [(what, text.count("\n", 0, m.start()) + 1) for what, rx in rules for m in rx.finditer(text)]


def self_check():
    bad_js = ["e.innerHTML = x", "e.outerHTML=x", "e.insertAdjacentHTML('beforeend', x)", "document.write(x)",
              "eval (x)", "new Function('a', x)", "setTimeout('go()', 5)", "fetch('https://cdn.example.com/x.js')"]
    for sample in bad_js:
        assert findings("x.js", sample), "the checker misses: " + sample
    for sample in ['<a onclick="x()">', '<div style="color:red">', "<script>alert(1)</script>", "<style>b{}</style>"]:
        assert findings("x.html", sample), "the checker misses: " + sample
    assert not findings("x.js", "e.textContent = x; setTimeout(() => go(), 5); const NS = 'http://www.w3.org/2000/svg';")


def main():
    self_check()
    ui = sys.argv[1]
    names = sorted(os.listdir(ui))
    assert "index.html" in names and any(n.endswith(".js") for n in names), names
    bad = []
    for name in names:
        with open(os.path.join(ui, name), encoding="utf-8") as f:
            bad += ["%s:%d: %s" % (name, line, what) for what, line in findings(name, f.read())]
    if bad:
        print("FAIL: the page must build its DOM with createElement/textContent only:\n  " + "\n  ".join(bad))
        sys.exit(1)
    print("%d files, no HTML or code sinks, no remote URLs" % len(names))


if __name__ == "__main__":
    main()
