#!/usr/bin/env python3
"""batchai's argument parsing against Python's argparse, the parser az is built on.

For the option tables of a few real commands (held below as az declares them), every argv of a
corpus (=-forms, attached short values, repeats, prefixes, unknown options, missing values,
values beginning with '-', help) goes both to argparse and to `batchai` (BATCHAI_PARSE_ONLY=1
makes it print the values it parsed as JSON instead of running the command). They must agree:
the same values, or exit 2 with the same stderr (usage line, wrapped alike, and the message).
Misspelled commands are checked against az's wording with difflib's choice.

Usage: argparse_compat_test.py BATCHAI_EXECUTABLE   (exit 77: not Python 3.11, skipped)
"""
import argparse
import concurrent.futures
import contextlib
import difflib
import io
import json
import os
import re
import subprocess
import sys
import tempfile

FORMATS = ["json", "jsonc", "none", "table", "tsv", "yaml", "yamlc"]


def enum(choices):
    """az's get_enum_type: matched case-insensitively, then spelled as the choice."""
    def canon(value):
        return next((c for c in choices if c.lower() == value.lower()), value)
    return canon


def integer(value):
    return str(int(value))  # batchai keeps the decimal text of what int() read


integer.__name__ = "int"  # argparse names the type in "invalid int value"


class IdsAction(argparse._ExtendAction):
    """az's --ids: accumulates over repeats, and makes the name options it replaces optional."""
    def __call__(self, parser, namespace, values, option_string=None):
        for action in parser.unless_ids:
            action.required = False
        super().__call__(parser, namespace, values, option_string)


class AzParser(argparse.ArgumentParser):
    def __init__(self, prog):
        super().__init__(prog=prog)
        self.unless_ids = []  # required unless --ids is given (shown optional, as az shows them)
        self.long_names = {}  # dest -> long option name, as batchai's JSON names values

    def format_usage(self):
        saved = [a.required for a in self.unless_ids]
        for a in self.unless_ids:
            a.required = False
        try:
            return super().format_usage()
        finally:
            for a, r in zip(self.unless_ids, saved):
                a.required = r


# name, aliases..., then options: required, kind ('store', 'many', 'append', 'ids', 'flag'),
# choices, int, unless_ids.
def opt(*names, required=False, kind="store", choices=None, int_=False, unless_ids=False):
    return dict(names=names, required=required, kind=kind, choices=choices, int_=int_, unless_ids=unless_ids)


SCOPE_JOB = [opt("--resource-group", "-g", required=True), opt("--workspace", "-w", required=True),
             opt("--experiment", "-e", required=True)]
AUTH = [opt("--account-name", required=True), opt("--account-key")]
MOUNTS = [opt(n) for n in ("--storage-account-name", "--storage-account-key", "--afs-name", "--afs-mount-path",
                          "--bfs-name", "--bfs-mount-path", "--nfs", "--nfs-mount-path")]
TABLES = {
    "job file list": SCOPE_JOB + [
        opt("--job", "-j", required=True), opt("--output-directory-id", "-d"), opt("--path", "-p"),
        opt("--expiry", int_=True)],
    "storage file upload": [
        opt("--share-name", "-s", required=True), opt("--source", required=True), opt("--path", "-p")] + AUTH,
    "group create": [
        opt("--name", "-n", "--resource-group", "-g", required=True), opt("--location", "-l", required=True),
        opt("--tags", kind="many")],
    "cluster show": [
        opt("--resource-group", "-g", unless_ids=True), opt("--workspace", "-w", unless_ids=True),
        opt("--name", "-n", unless_ids=True), opt("--ids", kind="ids")],
    "cluster node exec": [
        opt("--resource-group", "-g", required=True), opt("--workspace", "-w", required=True),
        opt("--cluster", "-c", required=True), opt("--node-id", "-n"), opt("--exec"),
        opt("--address", "-L", kind="append"), opt("--password", "-p"), opt("--ssh-private-key", "-k")],
    "job delete": SCOPE_JOB + [
        opt("--name", "-n", required=True), opt("--no-wait", kind="flag"), opt("--yes", "-y", kind="flag")],
    "cluster create": [
        opt("--resource-group", "-g", required=True), opt("--workspace", "-w", required=True),
        opt("--name", "-n", required=True), opt("--config-file", "-f"), opt("--image", "-i"), opt("--custom-image"),
        opt("--vm-size", "-s"), opt("--target", "-t", int_=True), opt("--min", int_=True), opt("--max", int_=True),
        opt("--vm-priority", choices=["dedicated", "lowpriority"]), opt("--user-name", "-u"), opt("--ssh-key", "-k"),
        opt("--password", "-p"), opt("--generate-ssh-keys", kind="flag"), opt("--use-auto-storage", kind="flag")]
        + MOUNTS + [opt("--subnet"), opt("--setup-task"), opt("--setup-task-output"),
                    opt("--slurm-partition")],
}


def build(command):
    p = AzParser("batchai " + command)
    # az's global arguments (knack's global parser, then --subscription), after -h/--help.
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--debug", action="store_true")
    p.add_argument("--only-show-errors", action="store_true")
    p.add_argument("--output", "-o", type=enum(FORMATS), choices=FORMATS)
    p.add_argument("--query", metavar="JMESPATH")
    p.add_argument("--subscription", metavar="_SUBSCRIPTION")
    for o in TABLES[command]:
        kw = {}
        if o["kind"] == "flag":
            kw["action"] = "store_true"
        elif o["kind"] == "many":
            kw["nargs"] = "+"
        elif o["kind"] == "append":
            kw["action"] = "append"
        elif o["kind"] == "ids":
            kw.update(action=IdsAction, nargs="+", metavar="ID")
        if o["choices"]:
            kw.update(choices=o["choices"], type=enum(o["choices"]))
        if o["int_"]:
            kw["type"] = integer
        action = p.add_argument(*o["names"], required=o["required"] or o["unless_ids"], **kw)
        if o["unless_ids"]:
            p.unless_ids.append(action)
    for action in p._actions:
        longs = [s for s in action.option_strings if s.startswith("--")]
        p.long_names[action.dest] = longs[0][2:]
    return p


def argparse_answer(command, argv, columns):
    """(exit code, values or None, stderr) as argparse answers."""
    p = build(command)
    os.environ["COLUMNS"] = str(columns)
    err, out = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            ns = p.parse_args(argv)
    except SystemExit as e:
        return e.code, None, err.getvalue()
    values = {}
    for dest, value in vars(ns).items():
        if value is None or value is False:
            continue
        values[p.long_names[dest]] = value
    return 0, values, ""


def batchai_answer(exe, env, command, argv, columns):
    e = dict(env, COLUMNS=str(columns), BATCHAI_PARSE_ONLY="1")
    r = subprocess.run([exe] + command.split() + argv, env=e, capture_output=True, timeout=60)
    err = r.stderr.decode("utf-8", "surrogateescape")
    if r.returncode == 0 and r.stdout.startswith(b"{"):
        return 0, json.loads(r.stdout), err
    return r.returncode, None, err


def corpus(command):
    """Common argv forms plus each command's own: (argv, columns)."""
    base = {
        "job file list": ["-g", "rg", "-w", "ws", "-e", "ex", "-j", "job"],
        "storage file upload": ["-s", "share", "--source", "f.py", "--account-name", "acct"],
        "group create": ["-n", "rg", "-l", "eastus"],
        "cluster show": ["-g", "rg", "-w", "ws", "-n", "c"],
        "cluster node exec": ["-g", "rg", "-w", "ws", "-c", "c"],
        "job delete": ["-g", "rg", "-w", "ws", "-e", "ex", "-n", "job"],
        "cluster create": ["-g", "rg", "-w", "ws", "-n", "c"],
    }[command]
    common = [
        [], ["-o", "json", "-o", "tsv"], ["-o=tsv"], ["-otsv"], ["-oTSV"], ["--out", "yaml"], ["--output=none"],
        ["--o", "json"], ["--ou", "json"], ["-o", "xml"], ["-o"], ["-o", "-x"], ["--output="],
        ["--verbose", "--verbose", "--deb"], ["--verb"], ["--only"], ["--only-show-errors=1"], ["--verbose=yes"],
        ["--query", "[0].name"], ["--query=-x"], ["--query", "-x"], ["--query", "a b"], ["--que", "[]"],
        ["--sub", "s"], ["--subs", "s"], ["--subscription", ""], ["--subscription="],
        ["--nmae", "x"], ["-x"], ["-x", "1"], ["extra"], ["--", "x"], ["--"], ["-"], ["---x"], ["--=x"], ["-=x"],
        ["-h"], ["--help"], ["--he"], ["-hx"], ["--help=x"], ["-h", "--nmae"], ["--nmae", "-h"], ["-o", "-h"],
        ["-o", "xml", "--nmae"], ["--nmae", "-o", "xml"], ["-o", "tsv", "--o"], ["--o", "-o", "xml"],
    ]
    specific = {
        "job file list": [
            ["-d=OUTPUT"], ["-dOUTPUT"], ["--output-directory-id=OUTPUT"], ["--output-dir", "OUTPUT"],
            ["-d", "a", "-d", "b"], ["-d", "-x"], ["-d=-x"], ["-d-x"], ["-d", "-1"], ["-d", "-1.5"], ["-d", "-1e5"],
            ["-d", "-1\n"], ["-d", "-x y"], ["-d", "-"], ["-d", "--"], ["-d", ""], ["-d="], ["-d"], ["-d", "="],
            ["-d", "a=b"], ["--expiry", "5"], ["--expiry=+5"], ["--expiry", "1_0"], ["--expiry", " 7 "],
            ["--expiry", "-5"], ["--expiry", "x"], ["--expiry", "1__0"], ["--expiry", "_1"], ["--expiry", "0x10"],
            ["--expiry", "it's"], ["--expiry", 'say "hi"'], ["--expiry", "a'b\"c"], ["--expiry", "tab\there"],
            ["--expiry", "\x1b[0m"], ["--expiry", "caf\u00e9"], ["--expiry", "nb\u00a0sp"], ["--expiry", "1" * 4301],
            ["--expiry", "0" * 30 + "12"], ["--exp", "3"], ["--e", "3"], ["-p", "a", "--path=b"], ["-pa/b"],
            ["-jh"], ["-j"], ["-j", "other"], ["--job=x", "--job", "y"], ["--jo", "z"], ["-g"],
            ["-d", "x", "--nmae", "--expiry", "bad"],
        ],
        "storage file upload": [
            ["--path=-dir"], ["-p", "-dir"], ["-p-dir"], ["--source=", "-p", ""], ["--sou", "a"], ["--s", "a"],
            ["--sh", "s2"], ["-s=s2"], ["--account-key", "k", "--account-key=k2"], ["--account", "a"],
            ["--account-n", "a2"],
        ],
        "group create": [
            ["--tags", "a=b", "c=d"], ["--tags", "a=b", "--tags", "c"], ["--tags"], ["--tags=a", "b"],
            ["--ta", "x"], ["--re", "rg2"], ["--resource-group=rg3"], ["-grg4"], ["-n"], ["--tags", "-x"],
            ["--tags", "a", "-1", "--", "b"], ["-l"], ["--loc=westus", "-lnorth"],
        ],
        "cluster show": [
            ["--ids", "a", "b", "--ids", "c"], ["--ids"], ["--ids=a", "b"], ["--id", "x"],
        ],
        "cluster node exec": [
            ["-L", "1:a:2", "-L", "3:b:4"], ["-L=1:a:2"], ["-L1:a:2"], ["--addr", "x"], ["-L"],
            ["--exec", "ls -l", "--exec=-x"], ["-n=tvm-1", "-k", "key", "-p", "pw"], ["--exec", "-c"],
        ],
        "job delete": [
            ["-y"], ["--yes", "--yes"], ["-yn", "other"], ["-yx"], ["-y="], ["--yes=1"], ["-yy"], ["--no"],
            ["--no-wait", "-y"], ["-ny"], ["-y", "-n"], ["-hy"], ["-yh"],
        ],
        "cluster create": [
            ["--m", "1"], ["--mi", "1", "--ma", "3"], ["--min=-2", "--max", "-1"], ["--sub", "x"],
            ["--subn", "x"], ["-t", "3"], ["-t3"], ["-t=3"], ["--tar", "3"], ["-t", "three"], ["-t", "99999999999"],
            ["--vm-priority", "LowPriority"], ["--vm-p", "cheap"], ["--vm-priority", "dedicated", "--vm-priority"],
            ["-s", "Standard_NC6"], ["--generate-ssh-keys=yes"], ["--gen"], ["--use"], ["--use-"], ["--stor", "a"],
            ["-k", "key", "-p", "pw", "-u", "user"], ["-ku"], ["--ssh", "k"], ["--setup-task", "echo -n"],
            ["--setup-task=-x"], ["--setup", "x"], ["--afs-name", "s", "--afs", "t"],
        ],
    }[command]
    cases = []
    for extra in common + specific:
        cases.append((base + extra, 80))
        cases.append((extra, 80))  # required options missing
    for extra in (["--nmae", "x"], ["-o"], []):  # wrapping of the usage line at other widths
        for columns in (40, 60, 100, 1000):
            cases.append((extra, columns))
    return cases


def group_names(exe, env, path):
    """The subcommands `batchai <path>` lists in its usage line ("{a,b,...}")."""
    r = subprocess.run([exe] + path + ["--bogus"], env=dict(env, COLUMNS="10000"), capture_output=True, text=True)
    m = re.match(r"usage: .*? \[-h\] \{([^}]*)\} \.\.\.\n", r.stderr)
    assert m, r.stderr
    return m.group(1).split(",")


def misspellings(exe, env):
    """az's _check_value: the error line, then difflib's most similar choices, exit 2."""
    failures, count = [], 0
    cases = {(): ["clustr", "jbo", "grop", "storge", "worksapce", "file-servr", "xyz", "Cluster"],
             ("cluster",): ["craete", "shwo", "lst", "delet", "resiz", "nod", "auto-scal", "crelete", "crealete",
                            "creze"],
             ("job",): ["fil", "crate", "lis", "terminat", "wiat"],
             ("job", "file"): ["lst", "stream2", "strem"],
             ("batchai",): ["clustr", "jobs"],
             ("storage",): ["shar", "blb", "fil", "directroy"]}
    for path, words in cases.items():
        names = group_names(exe, env, list(path))
        prog = " ".join(("batchai",) + path)
        for word in words:
            count += 1
            expected = f"ERROR: {prog}: '{word}' is not in the '{prog}' command group. See '{prog} --help'.\n"
            similar = difflib.get_close_matches(word, names, cutoff=0.7)
            if similar:
                several = len(similar) > 1
                expected += (f"\nThe most similar choice{'s' if several else ''} to '{word}' "
                             f"{'are' if several else 'is'}:\n" + "\n".join("\t" + c for c in similar) + "\n")
            r = subprocess.run([exe] + list(path) + [word, "-h"], env=env, capture_output=True, text=True)
            if r.returncode != 2 or r.stderr != expected or r.stdout:
                failures.append(f"{prog} {word}: exit {r.returncode}\n--- expected\n{expected}--- got\n{r.stderr}")
    return count, failures


def main():
    if sys.version_info[:2] != (3, 11):
        print(f"skipped: the reference is Python 3.11's argparse (az 2.45 on Debian 12), this is {sys.version}")
        return 77
    exe = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="batchai-argparse-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AZURE_", "BATCHAI_"))}
        env["BATCHAI_HOME"] = home
        failures, total = [], 0
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=4)
        for command in TABLES:
            cases = corpus(command)
            refused = 0
            answers = pool.map(lambda case: batchai_answer(exe, env, command, *case), cases)
            for (argv, columns), got in zip(cases, answers):
                want = argparse_answer(command, argv, columns)
                refused += want[0] != 0
                if want[0] == 0 and want[1] is None:
                    want = (0, None, "")  # help: both print it and exit 0
                    got = (got[0], None, got[2])
                if want != got:
                    failures.append(f"batchai {command} {argv!r} (COLUMNS={columns})\n"
                                    f"  argparse: exit {want[0]} {json.dumps(want[1])}\n{want[2]}"
                                    f"  batchai:  exit {got[0]} {json.dumps(got[1])}\n{got[2]}")
            total += len(cases)
            print(f"{command}: {len(cases)} argv, {refused} refused by argparse")
        count, wrong = misspellings(exe, env)
        failures += wrong
        print(f"misspelled commands: {count}")
        # Without COLUMNS and with stdout not a terminal, argparse wraps at 80 columns.
        plain = {k: v for k, v in env.items() if k != "COLUMNS"}
        r = subprocess.run([exe, "cluster", "create", "--nmae"], env=plain, capture_output=True, text=True)
        if r.stderr != argparse_answer("cluster create", ["--nmae"], 80)[2]:
            failures.append("without COLUMNS the usage line is not wrapped at 80 columns:\n" + r.stderr)
    for f in failures:
        print("FAIL: " + f)
    print(f"{total} argv compared, {len(failures)} differences")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
