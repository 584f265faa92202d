#!/usr/bin/env bash
# All SQL of the product lives in src/control_plane/store/ (issue 54): a string literal that opens
# an SQL statement, code that prepares or runs SQL on the store, or SQLite's own API anywhere else
# under src/ or include/ fails this test, and so does SQL that searches JSON text for a kind
# (LIKE '%...', json_type) anywhere but in a schema step. The files listed in
# sql_outside_store.txt still hold SQL of their own, to be moved: the list may only shrink (a
# listed file without SQL fails too, until it leaves the list).
# Usage: sql_in_store_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: sql_in_store_test.sh SOURCE_DIR}
cd "$src" || exit 2
here=tests/walls
sql='"(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH|ALTER|DROP|PRAGMA|BEGIN) |sqlite3_[a-z_]+\(|<sqlite3\.h>|(store|store_|store\(\))(\.|->)(prepare|exec)\('
fail=0
mapfile -t listed < <(grep -v '^#' "$here/sql_outside_store.txt" | grep -v '^$')
is_listed() {
  local f
  for f in "${listed[@]}"; do [[ $f == "$1" ]] && return 0; done
  return 1
}
while IFS= read -r file; do
  [[ $file == src/control_plane/store/* ]] && continue
  if ! is_listed "$file"; then
    echo "FAIL: $file holds SQL; SQL belongs in src/control_plane/store/ (one file per table):"
    grep -nE "$sql" "$file" | head -3
    fail=1
  fi
done < <(grep -rlE "$sql" src include | sort)
for file in "${listed[@]}"; do
  if [[ ! -f $file ]] || ! grep -qE "$sql" "$file"; then
    echo "FAIL: $file no longer holds SQL: take it off $here/sql_outside_store.txt"
    fail=1
  fi
done
json_search="LIKE '%|json_type\\("
while IFS= read -r hit; do
  [[ $hit == src/control_plane/store/migrations.cpp:* ]] && continue
  echo "FAIL: SQL searching JSON text (make it a column): $hit"
  fail=1
done < <(grep -rnE "$json_search" src include)
(( fail == 0 )) && echo "all SQL is in src/control_plane/store/ but for the ${#listed[@]} listed files"
exit $fail
