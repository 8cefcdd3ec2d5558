#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make doc-names`: docs/architecture.md is the map of the code, and a map
# that names what is gone sends a reader nowhere. Every `name()` it quotes
# must appear as a call or definition in the sources (user/, bpf/,
# include/, tests/, packaging/), every path it quotes must exist (from the
# top, from user/, or as a file name somewhere there), and every .c file of
# user/ must be named in it. Prints each miss; exit status 1 on any.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
doc=$root/docs/architecture.md
cd "$root" || exit 1

src_dirs=(user bpf include tests packaging)
bad=0
miss() {
	echo "doc-names: docs/architecture.md: $*" >&2
	bad=1
}

# the sources once, for the names: one text to search
corpus=$(mktemp)
trap 'rm -f "$corpus"' EXIT
find "${src_dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.sh' \) \
	-print0 | xargs -0 cat >"$corpus"
files=$(find "${src_dirs[@]}" -type f -printf '%f\n' | sort -u)

# backquoted tokens, one per line
tokens=$(grep -o '`[^`]*`' "$doc" | tr -d '`' | sort -u)

while IFS= read -r t; do
	case "$t" in
	*'()')
		name=${t%()}
		# an identifier, maybe an abbreviation of the one before (`__on_free()`)
		[[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || continue
		grep -qF -- "$name(" "$corpus" || miss "names $t, which no source calls or defines"
		;;
	*/*.c | */*.h | */*.sh | */*.S | */*.md | */*.py | */*.proto)
		[[ $t =~ ^[A-Za-z0-9_./-]+$ ]] || continue
		[ -e "$t" ] || [ -e "user/$t" ] || [ -e "docs/$t" ] ||
			miss "names $t, which does not exist"
		;;
	*.c | *.h)
		[[ $t =~ ^[A-Za-z0-9_.-]+$ ]] || continue
		grep -qxF -- "$t" <<<"$files" || miss "names $t, which no folder holds"
		;;
	esac
done <<<"$tokens"

# every source file of user/ has its place on the map
while IFS= read -r f; do
	base=${f#user/}
	grep -qF -- "\`${base##*/}\`" "$doc" || grep -qF -- "\`$base\`" "$doc" ||
		miss "does not name $f"
done < <(find user -name '*.c' | sort)

[ "$bad" -eq 0 ] && echo "doc-names: ok (every name and path docs/architecture.md quotes exists)"
exit "$bad"
