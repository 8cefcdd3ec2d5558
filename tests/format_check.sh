#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make format-check`: every C file of user/, include/ and bpf/ is as
# clang-format (the project's .clang-format) writes it, except the files in
# tests/format-legacy.txt. Those were written before the check, with
# tab-aligned trailing comments that clang-format 14 cannot keep; the list
# only shrinks: a listed file that is clean now is said, so that it leaves
# the list, and a file not listed must be clean. Exit status 1 on any
# unformatted file.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
legacy=tests/format-legacy.txt
if ! command -v clang-format >/dev/null; then
	echo "format-check: clang-format is not installed (packaging/deps.sh installs it)"
	exit 1
fi
bad=0 checked=0 listed=0
while IFS= read -r f; do
	if grep -qxF "$f" "$legacy"; then
		listed=$((listed + 1))
		clang-format --dry-run -Werror "$f" >/dev/null 2>&1 &&
			echo "format-check: $f is clean now: remove it from $legacy"
		continue
	fi
	checked=$((checked + 1))
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "format-check: $f differs from clang-format's (clang-format -i $f)"
		bad=1
	fi
done < <(git ls-files 'user/*.[ch]' 'include/*.h' 'bpf/*.[ch]' | sort)
while IFS= read -r f; do
	[ -f "$f" ] || { echo "format-check: $legacy lists $f, which does not exist"; bad=1; }
done <"$legacy"
[ "$bad" -eq 0 ] && echo "format-check: ok ($checked files clean, $listed legacy files listed)"
exit "$bad"
