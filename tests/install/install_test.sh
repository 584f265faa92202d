#!/usr/bin/env bash
# `cmake --install <build> --prefix <temporary prefix>`, then batchai used from there as a user
# would, from a folder outside both trees, with PATH naming only the prefix and the system: the
# layout, no RUNPATH into the build tree, resource commands, a custom job calling
# `batchai train`, `batchai serve --port 0` and the installed tutorial script. What was loaded is
# read from the loader (LD_DEBUG=files) and from /proc/<pid>/maps: nothing may come from the
# build or the source tree.
# Usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR PROJECT_VERSION
set -uo pipefail
cmake="${1:?usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR PROJECT_VERSION}" build="${2:?}" source="${3:?}" version="${4:?}"
build="$(cd "$build" && pwd -P)" source="$(cd "$source" && pwd -P)"
tmp="$(mktemp -d -t batchai-install-test.XXXXXX)"
serve_pid=""
cleanup() {
  [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
  BATCHAI_HOME="$tmp/state" "$prefix/bin/batchai" group delete -n rg -y --no-wait >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
prefix="$tmp/prefix"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# from_trees <file>: the lines of <file> that name the build or the source tree.
from_trees() { grep -F -e "$build" -e "$source" "$1"; }

"$cmake" --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "cmake --install"; exit 1; }

# The layout.
for f in bin/batchai lib/batchai/libbatchai_trainer.so lib/batchai/libbatchai_serve.so \
         share/batchai/schemas/2018-05-01/job.json share/batchai/examples/horovod-cifar10/tutorial.sh \
         share/batchai/examples/horovod-cifar10/job.json share/doc/batchai/README.md share/doc/batchai/copyright \
         share/doc/batchai/cli.md share/doc/batchai/behaviour.md share/man/man1/batchai.1.gz \
         share/bash-completion/completions/batchai lib/systemd/system/batchai-serve.service \
         lib/systemd/user/batchai-serve.service; do
  [ -f "$prefix/$f" ] || fail "$f is not installed"
done
[ -x "$prefix/share/batchai/examples/horovod-cifar10/tutorial.sh" ] || fail "tutorial.sh is not executable"
if [ -f "$build/src/cli/libbatchai_cuda.so" ] && [ ! -f "$prefix/lib/batchai/libbatchai_cuda.so" ]; then
  fail "the CUDA plugin was built but not installed"
fi
for elf in "$prefix"/bin/batchai "$prefix"/lib/batchai/*.so; do
  readelf -d "$elf" > "$tmp/dynamic" 2>&1 || fail "readelf $elf"
  from_trees "$tmp/dynamic" && fail "$elf has a RUNPATH into the build or source tree"
done

# A user's shell: only the prefix and the system on PATH, in a folder of its own.
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin" BATCHAI_HOME="$tmp/state" BATCHAI_SIM_DELAY_S=0 HOME="$tmp/home"
unset BATCHAI_CUDA_PLUGIN AZURE_DEFAULTS_GROUP
mkdir -p "$tmp/work" "$HOME" && cd "$tmp/work" || exit 1
[ "$(command -v batchai)" = "$prefix/bin/batchai" ] || fail "batchai on PATH is $(command -v batchai)"

# The installed version names the installed plugins.
bash "$(dirname "$0")/version_test.sh" "$prefix/bin/batchai" "$version" "$prefix/lib/batchai" ||
  fail "version_test.sh of the installed batchai"

# Resource commands.
step() { "$@" > "$tmp/out" 2> "$tmp/err" || { fail "$* (exit $?): $(cat "$tmp/err")"; return 1; }; }
step batchai group create -n rg -l eastus -o none
step batchai workspace create -g rg -n ws -l eastus -o none
step batchai experiment create -g rg -w ws -n exp -o none
step batchai cluster create -g rg -w ws -n c1 -s Standard_D1 -t 1 -u tester -p Secret.123 -o none
step batchai cluster show -g rg -w ws -n c1 --query allocationState -o tsv
[ "$(cat "$tmp/out")" = steady ] || fail "cluster c1 is $(cat "$tmp/out"), not steady"

# A custom job whose command line calls `batchai train`: the node's PATH finds the installed one,
# whose trainer plugin is the installed one (the loader says which files it opened).
cat > "$tmp/job.json" <<'JOB'
{"properties": {"nodeCount": 1, "stdOutErrPathPrefix": "$AZ_BATCHAI_JOB_MOUNT_ROOT",
  "customToolkitSettings": {"commandLine": "command -v batchai; LD_DEBUG=files batchai train --synthetic 64 --epochs 1 --steps-per-epoch 2 --batch-size 8 --validation-images 16 --backend cpu --threads 1 --dir $AZ_BATCHAI_JOB_TEMP/t"}}}
JOB
step batchai job create -g rg -w ws -e exp -n train -c c1 -f "$tmp/job.json" -o none
batchai job wait -g rg -w ws -e exp -n train --interval 1 > /dev/null 2>&1 || fail "the train job failed"
batchai job file stream -g rg -w ws -e exp -j train -f stdout.txt > "$tmp/job-stdout" 2>/dev/null
batchai job file stream -g rg -w ws -e exp -j train -f stderr.txt > "$tmp/job-stderr" 2>/dev/null
[ "$(head -1 "$tmp/job-stdout")" = "$prefix/bin/batchai" ] || fail "the job's batchai is $(head -1 "$tmp/job-stdout")"
grep -q '^Test accuracy: ' "$tmp/job-stdout" || fail "the job's training did not finish: $(tail -5 "$tmp/job-stdout")"
grep -q "file=$prefix/lib/batchai/libbatchai_trainer.so .*dynamically loaded" "$tmp/job-stderr" ||
  fail "the trainer plugin was not loaded from $prefix/lib/batchai"
from_trees "$tmp/job-stderr" && fail "the job's batchai loaded files from the build or source tree"

# batchai serve --port 0: up, answering, and mapping only installed files of batchai.
batchai serve --port 0 > "$tmp/serve.out" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do grep -q 'listening on https://127.0.0.1:' "$tmp/serve.out" && break; sleep 0.1; done
port="$(sed -n 's/.*listening on https:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/serve.out")"
if [ -z "$port" ]; then
  fail "batchai serve did not start: $(cat "$tmp/serve.out")"
else
  grep -E '\.so|/batchai' "/proc/$serve_pid/maps" | awk '{ print $6 }' | sort -u > "$tmp/serve-maps"
  grep -q "^$prefix/lib/batchai/libbatchai_serve.so$" "$tmp/serve-maps" || fail "serve mapped no $prefix/lib/batchai/libbatchai_serve.so"
  grep -q "^$prefix/bin/batchai$" "$tmp/serve-maps" || fail "serve is not $prefix/bin/batchai"
  from_trees "$tmp/serve-maps" && fail "serve mapped files of the build or source tree"
  code="$(curl -sk -o /dev/null -w '%{http_code}' "https://127.0.0.1:$port/metadata/endpoints?api-version=2019-05-01" 2>/dev/null || true)"
  [ "$code" = 200 ] || [ -z "$(command -v curl)" ] || fail "serve answered $code to the discovery endpoint"
fi
kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; serve_pid=""

# The installed tutorial, as a user runs it: batchai from PATH, the job file beside the script.
BATCHAI_HOME="$tmp/tutorial-state" NODES=1 SYNTHETIC=64 EPOCHS=1 STEPS_PER_EPOCH=2 VALIDATION_IMAGES=16 STEP_PAUSE=0.2 \
  bash "$prefix/share/batchai/examples/horovod-cifar10/tutorial.sh" > "$tmp/tutorial.log" 2>&1 ||
  { tail -30 "$tmp/tutorial.log"; fail "the installed tutorial.sh failed"; }
grep -q '^\$ batchai workspace create ' "$tmp/tutorial.log" || fail "the tutorial does not print 'batchai workspace create'"
grep -q '^\$ batchai batchai ' "$tmp/tutorial.log" && fail "the tutorial prints the doubled 'batchai batchai'"
grep -q '^Test accuracy: ' "$tmp/tutorial.log" || fail "the tutorial's job did not finish"
from_trees "$tmp/tutorial.log" && fail "the tutorial names the build or source tree"

[ "$failures" = 0 ] && echo "install checks passed ($prefix)" || echo "$failures install check(s) failed"
[ "$failures" = 0 ]
