#!/usr/bin/env bash
# docs/cli.md must be what docs/gen-cli-doc.sh writes from the executable's help today.
# Usage: cli_doc_fresh_test.sh BATCHAI_EXECUTABLE
set -uo pipefail
exe="${1:?usage: cli_doc_fresh_test.sh BATCHAI_EXECUTABLE}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
fresh="$(mktemp -t batchai-cli-md.XXXXXX)"
trap 'rm -f "$fresh"' EXIT
bash "$root/docs/gen-cli-doc.sh" "$exe" > "$fresh" || { echo "FAIL: gen-cli-doc.sh failed"; exit 1; }
if ! diff -u "$root/docs/cli.md" "$fresh"; then
  echo "FAIL: docs/cli.md is stale: regenerate it with docs/gen-cli-doc.sh > docs/cli.md"
  exit 1
fi
# The toolkit pages the docs link to (one per job toolkit).
missing=0
for kit in caffe caffe2 chainer cntk custom custommpi horovod pytorch tensorflow; do
  [ -s "$root/docs/toolkits/$kit.md" ] || { echo "FAIL: docs/toolkits/$kit.md is missing"; missing=1; }
done
[ "$missing" = 0 ] && echo "docs/cli.md is up to date; every toolkit page exists"
[ "$missing" = 0 ]
