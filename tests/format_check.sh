#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make format-check`: every C file of user/, include/ and bpf/ is as
# clang-format (the project's .clang-format) writes it. Exit status 1 on
# any file that differs, each named with the command that fixes it.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
if ! command -v clang-format >/dev/null; then
	echo "format-check: clang-format is not installed (packaging/deps.sh installs it)"
	exit 1
fi
bad=0 checked=0
while IFS= read -r f; do
	checked=$((checked + 1))
	if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
		echo "format-check: $f differs from clang-format's (clang-format -i $f)"
		bad=1
	fi
done < <(git ls-files 'user/*.[ch]' 'include/*.h' 'bpf/*.[ch]' | sort)
[ "$bad" -eq 0 ] && echo "format-check: ok ($checked files clean)"
exit "$bad"
