#!/usr/bin/env bash
# The Debian package: cpack makes batchai_<version>_amd64.deb from the build (no rebuild), then
# its control fields (Depends from shlibs), its contents (no CUDA plugin), apt-get install -s, the
# package unpacked into a folder and run from there, and lintian (no errors) when it is installed.
# Exit 77 (skipped) without dpkg-deb and dpkg-shlibdeps.
# Usage: deb_test.sh CPACK BUILD_DIR PROJECT_VERSION
set -uo pipefail
cpack="${1:?usage: deb_test.sh CPACK BUILD_DIR PROJECT_VERSION}" build="${2:?}" version="${3:?}"
build="$(cd "$build" && pwd -P)"
for tool in dpkg-deb dpkg-shlibdeps fakeroot; do
  command -v "$tool" > /dev/null || { echo "SKIP: no $tool"; exit 77; }
done
tmp="$(mktemp -d -t batchai-deb-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

"$cpack" --config "$build/CPackConfig.cmake" -B "$tmp/out" > "$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack"; exit 1; }
deb="$tmp/out/batchai_${version}_amd64.deb"
[ -f "$deb" ] || { ls "$tmp/out"; fail "no $(basename "$deb")"; exit 1; }
echo "package: $(basename "$deb"), $(stat -c %s "$deb") bytes, Installed-Size $(dpkg-deb -f "$deb" Installed-Size) KiB"

field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = batchai ] || fail "Package is $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version is $(field Version)"
[ "$(field Architecture)" = amd64 ] || fail "Architecture is $(field Architecture)"
depends="$(field Depends)"
echo "Depends: $depends"
# What the executable and its plugins link, as dpkg-shlibdeps names it.
for lib in libc6 libstdc++6 libsqlite3-0 libopenmpi3 libdnnl2 libhdf5 libssl3; do
  [[ ", $depends" == *", $lib"* ]] || fail "Depends has no $lib"
done
[[ "$depends" == *cuda* || "$depends" == *cudnn* || "$depends" == *nccl* ]] && fail "Depends names CUDA libraries"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' > "$tmp/contents"
for f in /usr/bin/batchai /usr/lib/batchai/libbatchai_trainer.so /usr/lib/batchai/libbatchai_serve.so \
         /usr/share/batchai/schemas/2018-05-01/job.json /usr/share/batchai/examples/horovod-cifar10/tutorial.sh \
         /usr/share/doc/batchai/copyright /usr/share/doc/batchai/changelog.gz /usr/share/doc/batchai/README.md \
         /usr/share/man/man1/batchai.1.gz /usr/share/bash-completion/completions/batchai \
         /usr/lib/systemd/system/batchai-serve.service /usr/lib/systemd/user/batchai-serve.service; do
  grep -qx -- "$f" "$tmp/contents" || fail "the package has no $f"
done
grep -q libbatchai_cuda "$tmp/contents" && fail "the package holds the CUDA plugin"

# Unpacked anywhere, it runs from there: the plugins found relative to the executable.
dpkg-deb -x "$deb" "$tmp/root"
[ "$("$tmp/root/usr/bin/batchai" version --query plugins.trainer.path -o tsv)" = "$tmp/root/usr/lib/batchai/libbatchai_trainer.so" ] ||
  fail "the unpacked batchai does not find its trainer plugin in usr/lib/batchai"
grep -rlF "$build" "$tmp/root/usr/lib" "$tmp/root/usr/bin" > /dev/null && echo "note: the binaries name the build folder (debug strings)"

# apt resolves what it needs (a simulation: this machine is not changed).
if command -v apt-get > /dev/null; then
  apt-get install -s -q "$deb" > "$tmp/apt" 2>&1 || { tail -5 "$tmp/apt"; fail "apt-get install -s exited $?"; }
  grep -q '^Inst batchai ' "$tmp/apt" || { tail -5 "$tmp/apt"; fail "apt-get would not install batchai"; }
fi

if command -v lintian > /dev/null; then
  lintian --tag-display-limit 0 "$deb" > "$tmp/lintian" 2>&1
  cat "$tmp/lintian"
  grep -q '^E: ' "$tmp/lintian" && fail "lintian reports errors"
else
  echo "note: lintian is not installed; not run"
fi

[ "$failures" = 0 ] && echo "package checks passed" || echo "$failures package check(s) failed"
[ "$failures" = 0 ]
