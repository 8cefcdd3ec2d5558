#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The man page cacheperf-bpf(8) and `cacheperf-bpf --help` document the same
# flags: each flag of one that the other lacks is named, with where it is
# missing. A flag added to options.c needs a line in both.
. "$(dirname "$0")/tap.sh"
MAN=$CP_ROOT/packaging/cacheperf-bpf.8

# The flags that start the option lines of --help ("  -a, --all-cpus   ...").
help_flags() {
	"$BIN" --help | grep -E '^  +-' | sed -E 's/^ +//; s/  .*//' |
		grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u
}

# The flags in the tag lines (the line after .TP) of the man page.
man_flags() {
	awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }' "$MAN" | sed 's/\\-/-/g; s/\\f[BIR]//g' |
		grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u
}

[ -x "$BIN" ] && [ -f "$MAN" ] || skip_all "no $BIN or $MAN"

help=$(help_flags)
man=$(man_flags)
if [ "$(echo "$help" | wc -l)" -lt 20 ]; then
	_not_ok "the flags of --help are found" "only: $help"
else
	_ok "the flags of --help are found ($(echo "$help" | wc -l))"
fi

# compare DESC FROM TO FLAGS...: FLAGS are the ones FROM lists and TO lacks.
compare() {
	local desc=$1 from=$2 to=$3 msgs=()
	shift 3
	for f in "$@"; do msgs+=("$f: in $from, missing in $to"); done
	if [ ${#msgs[@]} -gt 0 ]; then
		_not_ok "$desc" "${msgs[@]}"
	else
		_ok "$desc"
	fi
}
compare "every flag of --help is in the man page" "--help" "packaging/cacheperf-bpf.8" \
	$(comm -23 <(echo "$help") <(echo "$man"))
compare "every flag of the man page is in --help" "packaging/cacheperf-bpf.8" "--help" \
	$(comm -13 <(echo "$help") <(echo "$man"))

# The page renders without groff warnings (a broken macro would hide a flag).
if command -v groff >/dev/null; then
	warn=$(LC_ALL=C groff -man -Tutf8 -ww -z "$MAN" 2>&1)
	if [ -n "$warn" ]; then
		_not_ok "the man page renders without warnings" "$warn"
	else
		_ok "the man page renders without warnings"
	fi
else
	skip "no groff"
fi
done_testing
