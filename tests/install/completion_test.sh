#!/usr/bin/env bash
# Bash completion (written at build time by docs/gen-cli-doc.sh --format completion), driven as
# bash drives it: COMP_WORDS/COMP_CWORD set, the function run, COMPREPLY read. Groups, commands,
# options, fixed values, resource names from the store scoped by -g/-w/-e, hostile words, and the
# time of one completion with 10,000 groups and 10,000 clusters in the store (at most 50 ms).
# Usage: completion_test.sh COMPLETION_FILE BATCHAI_EXECUTABLE
set -uo pipefail
completion="${1:?usage: completion_test.sh COMPLETION_FILE BATCHAI_EXECUTABLE}" exe="${2:?}"
exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")"
tmp="$(mktemp -d -t batchai-completion-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export BATCHAI_HOME="$tmp/state" BATCHAI_SIM_DELAY_S=0 HOME="$tmp/home"
unset AZURE_DEFAULTS_GROUP
mkdir -p "$HOME"

# shellcheck source=/dev/null
source "$completion" || { fail "sourcing $completion"; exit 1; }
[ "$(complete -p batchai)" = "complete -F _batchai batchai" ] || fail "complete -p batchai: $(complete -p batchai)"
# expect <expected words> <command line words...>: the completion of the last word.
expect() {
  local want="$1"
  shift
  COMP_WORDS=("$@")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _batchai
  [ "${COMPREPLY[*]}" = "$want" ] || fail "completing '$*': got '${COMPREPLY[*]}', expected '$want'"
}

b="$exe"
"$b" group create -n rg1 -l eastus -o none && "$b" group create -n rg2 -l eastus -o none &&
  "$b" workspace create -g rg1 -n ws -l eastus -o none && "$b" experiment create -g rg1 -w ws -n exp -o none &&
  "$b" cluster create -g rg1 -w ws -n c1 -s Standard_D1 -t 0 -u tester -p Secret.123 -o none &&
  "$b" cluster create -g rg1 -w ws -n c2 -s Standard_D1 -t 0 -u tester -p Secret.123 -o none ||
  fail "making the resources"

expect "group storage workspace experiment cluster file-server list-usages job batchai train serve version" "$b" ""
expect "cluster" "$b" clu
expect "create show list delete resize auto-scale node file" "$b" cluster ""
expect "--resource-group" "$b" cluster show --re
expect "dedicated lowpriority" "$b" cluster create --vm-priority ""
expect "table tsv" "$b" job list -o t
expect "cpu cuda" "$b" train --backend c
expect "rg1 rg2" "$b" cluster show -g ""
expect "ws" "$b" cluster list -g rg1 -w ""
expect "c1 c2" "$b" cluster show -g rg1 -w ws -n ""
expect "c1 c2" "$b" batchai cluster show -g RG1 -w WS -n c   # `batchai batchai`, names are case-blind
expect "exp" "$b" job list -g rg1 -w ws -e ""
expect "rg2" "$b" group show -n rg2
"$b" group create -n MixedCase -l eastus -o none || fail "making MixedCase"
expect "MixedCase" "$b" group show -n Mi     # as created; the prefix is case-blind, as names are
expect "MixedCase" "$b" group show -n mIX
"$b" group delete -n MixedCase -y -o none || fail "deleting MixedCase"
expect "" "$b" cluster show -g rg2 -w ws -n ""
expect "" "$b" cluster show -w ws -n ""          # no group: no guess
AZURE_DEFAULTS_GROUP=rg1 expect "c1 c2" "$b" cluster show -w ws -n ""

# Hostile words reach the store as data, and `batchai` typed bare is PATH's, never the folder's.
mkdir "$tmp/cwd" && cd "$tmp/cwd" || exit 1
printf '#!/bin/sh\ntouch %q/ran\n' "$tmp" > batchai && chmod +x batchai
PATH="$(dirname "$exe"):$PATH" expect "" batchai cluster show -g "x'; touch $tmp/ran; '" -w '$(touch '"$tmp"'/ran)' -n ""
PATH="$(dirname "$exe"):$PATH" expect "rg1 rg2" batchai group show -n ""
[ -e "$tmp/ran" ] && fail "completion ran something it should not have"
cd "$tmp" || exit 1

# 10,000 groups and 10,000 clusters more, written straight into the store.
if command -v sqlite3 > /dev/null; then
  db="$BATCHAI_HOME/state.db"
  cols="$(sqlite3 "$db" "SELECT group_concat(name) FROM pragma_table_info('clusters') WHERE name NOT IN ('id', 'name', 'name_lc')")"
  sqlite3 "$db" "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
    INSERT INTO resource_groups(name_lc, name, location, doc) SELECT 'g' || i, 'g' || i, location, doc FROM n,
      (SELECT location, doc FROM resource_groups WHERE name_lc = 'rg2');
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
    INSERT INTO clusters(name, name_lc, $cols) SELECT 'k' || i, 'k' || i, $cols FROM n,
      (SELECT $cols FROM clusters WHERE name_lc = 'c1');" || fail "filling the store"
  # timed <count> <words...>: completes 7 times and checks the count. The fastest wall time must
  # be within 50 ms; on a machine busier than its cores (a shared CI host), where wall time
  # measures the neighbours, the fastest CPU time (this shell and batchai) may be instead. (Not
  # CPU time alone there: neighbours slow a run down, never up, so a wall time within the bound
  # shows it even when the CPU clock, ticking in whole milliseconds under contention, says 51.)
  timed() {
    local want="$1" walls=() cpus=() r line busy
    shift
    COMP_WORDS=("$@")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    local TIMEFORMAT='%R %U %S'
    for r in 1 2 3 4 5 6 7; do
      { time _batchai; } 2> "$tmp/time"
      read -r line < "$tmp/time"
      walls+=("$(awk '{ printf "%d", $1 * 1000000 }' <<< "$line")")
      cpus+=("$(awk '{ printf "%d", ($2 + $3) * 1000000 }' <<< "$line")")
    done
    [ "${#COMPREPLY[@]}" = "$want" ] || fail "completing '$*' gave ${#COMPREPLY[@]} names, expected $want"
    mapfile -t walls < <(printf '%s\n' "${walls[@]}" | sort -n)
    mapfile -t cpus < <(printf '%s\n' "${cpus[@]}" | sort -n)
    busy="$(awk -v cores="$(nproc)" '{ print ($1 > cores) ? 1 : 0 }' /proc/loadavg)"
    echo "completing 'batchai ${*:2}' (${#COMPREPLY[@]} names): wall fastest ${walls[0]} us, median ${walls[3]} us;" \
         "CPU fastest ${cpus[0]} us; load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
    if (( walls[0] > 50000 )); then
      if [ "$busy" = 1 ]; then
        (( cpus[0] <= 50000 )) || fail "completing '$*' takes ${cpus[0]} us of CPU and ${walls[0]} us (more than 50 ms)"
      else
        fail "completing '$*' takes ${walls[0]} us (more than 50 ms)"
      fi
    fi
  }
  timed 10002 "$b" cluster show -g ""
  timed 10002 "$b" cluster show -g rg1 -w ws -n ""
  timed 1112 "$b" cluster show -g rg1 -w ws -n k1  # k1, k10-k19, k100-k199, k1000-k1999, k10000
else
  echo "note: no sqlite3; the 10,000-resource timing is not run"
fi

[ "$failures" = 0 ] && echo "completion checks passed" || echo "$failures completion check(s) failed"
[ "$failures" = 0 ]
