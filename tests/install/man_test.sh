#!/usr/bin/env bash
# batchai(1), written at build time by docs/gen-cli-doc.sh --format man: groff renders it without
# a warning, `man -l` shows it, it has a section for every group the executable lists and for
# every command docs/cli.md has (the same walk), and nothing more.
# Usage: man_test.sh MAN_PAGE_GZ BATCHAI_EXECUTABLE SOURCE_DIR
set -uo pipefail
page="${1:?usage: man_test.sh MAN_PAGE_GZ BATCHAI_EXECUTABLE SOURCE_DIR}" exe="${2:?}" source="${3:?}"
tmp="$(mktemp -d -t batchai-man-test.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

zcat "$page" > "$tmp/batchai.1" || { fail "$page is not gzip"; exit 1; }
groff -man -Tutf8 -ww -z "$tmp/batchai.1" > "$tmp/warnings" 2>&1 || fail "groff exited $?"
[ -s "$tmp/warnings" ] && { head "$tmp/warnings"; fail "groff warns"; }
if command -v man > /dev/null; then
  MANWIDTH=100 man -l "$page" > "$tmp/rendered" 2> "$tmp/man-errors" || fail "man -l exited $?"
  [ -s "$tmp/man-errors" ] && { head "$tmp/man-errors"; fail "man -l complains"; }
  grep -q '^NAME' "$tmp/rendered" || fail "man -l rendered no NAME section"
fi

# The sections: "batchai <words>" of the page, the headings of docs/cli.md, the executable's groups.
sed -n 's/^\.SS "\(batchai.*\)"$/\1/p' "$tmp/batchai.1" | sort > "$tmp/man-sections"
sed -n 's/^#\{2,4\} \(batchai.*\)$/\1/p' "$source/docs/cli.md" | sort > "$tmp/md-sections"
diff "$tmp/md-sections" "$tmp/man-sections" > "$tmp/diff" || { cat "$tmp/diff"; fail "the man page's commands are not docs/cli.md's"; }
for group in $("$exe" -h | awk '/^Subcommands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }'); do
  [ "$group" = batchai ] && continue
  grep -qx "batchai $group" "$tmp/man-sections" || fail "no section for the group $group"
done
[ "$(wc -l < "$tmp/man-sections")" -gt 50 ] || fail "only $(wc -l < "$tmp/man-sections") sections"

[ "$failures" = 0 ] && echo "man page checks passed ($(wc -l < "$tmp/man-sections") command sections)" || echo "$failures man page check(s) failed"
[ "$failures" = 0 ]
