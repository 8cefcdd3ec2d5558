#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make doc-names`: docs/architecture.md is the map of the code, and a map
# that names what is gone sends a reader nowhere. Every `name()` it quotes
# (with or without arguments) must appear as a call or definition in the
# sources (user/, bpf/, include/, tests/, packaging/), every `struct cp_*`
# and `CP_*` name in them too, every path it quotes
# must exist (from the top, or user/, docs/, include/, tests/; a file name
# alone somewhere there; build/ is made, not checked), and every .c file of
# user/ must be named in it. Fenced blocks are left out. Prints each miss;
# exit status 1 on any.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
doc=${CP_DOC:-$root/docs/architecture.md}	# CP_DOC: another copy (tests/e2e/test_doc_names.sh)
cd "$root" || exit 1

src_dirs=(user bpf include tests packaging)
bad=0
miss() {
	echo "doc-names: ${doc#"$root"/}: $*" >&2
	bad=1
}

# one pass over the sources: every identifier they call or define (followed
# by its "("), every struct cp_* and CP_* name the C sources spell; and
# every file name
declare -A called=() word=() file=()
while IFS=: read -r path w; do
	case "$w" in
	*'(') called[${w%(}]=1 ;;&
	*'(' | struct\ cp_* | CP_*) [[ $path == *.sh ]] || word[${w%(}]=1 ;;
	esac
done < <(find "${src_dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \
	-o -name '*.S' -o -name '*.sh' \) -print0 |
	xargs -0 -r grep -oHE 'struct cp_[A-Za-z0-9_]+|[A-Za-z_][A-Za-z0-9_]*\(|\bCP_[A-Z0-9_]+' |
	sort -u)
while IFS= read -r f; do file[$f]=1; done < <(find "${src_dirs[@]}" -type f | sed 's,.*/,,')

# backquoted tokens, fenced blocks left out, a span that breaks a line joined
tokens=$(awk '/^```/ { fenced = !fenced; next } !fenced' "$doc" | tr '\n' ' ' |
	grep -o '`[^`]*`' | tr -d '`' | sort -u)

while IFS= read -r t; do
	case "$t" in
	'struct cp_'* | CP_*)
		# the project's own types and constants (struct perf_tool is perf's)
		[[ $t =~ ^(struct\ cp_[A-Za-z0-9_]+|CP_[A-Z0-9_]+)$ ]] || continue
		[ -n "${word[$t]:-}" ] || miss "names $t, which no source spells"
		;;
	build/* | '$(BUILD)'/*)
		continue # made by the build: not in a fresh clone
		;;
	[A-Za-z_]*'('*')')
		# a call, with or without arguments: its function's name
		name=${t%%(*}
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
		if [[ $name == __* ]]; then
			# an abbreviation of the name before it (`__on_free()`)
			printf '%s\n' "${!called[@]}" | grep -q -- "[A-Za-z0-9_]${name}\$" ||
				miss "names $t, which no source calls or defines"
		elif [ -z "${called[$name]:-}" ]; then
			miss "names $t, which no source calls or defines"
		fi
		;;
	*/*)
		# a path of the tree (a folder ends in /), from the top or a root it is read from
		[[ $t =~ ^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?$ ]] || continue
		found=
		for r in . user docs include tests; do
			[ -e "$r/$t" ] && found=1 && break
		done
		[ -n "$found" ] || miss "names $t, which does not exist"
		;;
	*.c | *.h)
		[[ $t =~ ^[A-Za-z0-9_.-]+$ ]] || continue
		[ -n "${file[$t]:-}" ] || miss "names $t, which no folder holds"
		;;
	esac
done <<<"$tokens"

# every source file of user/ has its place on the map
while IFS= read -r f; do
	base=${f#user/}
	grep -qF -- "\`${base##*/}\`" "$doc" || grep -qF -- "\`$base\`" "$doc" ||
		miss "does not name $f"
done < <(find user -name '*.c' | sort)

[ "$bad" -eq 0 ] && echo "doc-names: ok (every name and path ${doc#"$root"/} quotes exists)"
exit "$bad"
