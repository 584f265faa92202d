#!/usr/bin/env bash
# All SQL of the product lives in src/control_plane/store/ (issue 54): a string literal that opens
# an SQL statement, code that prepares or runs SQL on the store, or SQLite's own API anywhere else
# under src/ or include/ fails this test, and so does SQL that searches JSON text for a kind
# (LIKE '%...', json_type) anywhere but in a schema step. No file is excused.
# Usage: sql_in_store_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?usage: sql_in_store_test.sh SOURCE_DIR}
cd "$src" || exit 2
sql='"(SELECT|INSERT|UPDATE|DELETE|CREATE|WITH|ALTER|DROP|PRAGMA|BEGIN) |sqlite3_[a-z_]+\(|<sqlite3\.h>|(store|store_|store\(\))(\.|->)(prepare|exec)\('
fail=0
while IFS= read -r file; do
  [[ $file == src/control_plane/store/* ]] && continue
  echo "FAIL: $file holds SQL; SQL belongs in src/control_plane/store/ (one file per table):"
  grep -nE "$sql" "$file" | head -3
  fail=1
done < <(grep -rlE "$sql" src include | sort)
json_search="LIKE '%|json_type\\("
while IFS= read -r hit; do
  [[ $hit == src/control_plane/store/migrations.cpp:* ]] && continue
  echo "FAIL: SQL searching JSON text (make it a column): $hit"
  fail=1
done < <(grep -rnE "$json_search" src include)
(( fail == 0 )) && echo "all SQL is in src/control_plane/store/"
exit $fail
