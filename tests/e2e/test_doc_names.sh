# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# `make doc-names` as a maintainer meets it: the real architecture doc
# passes, and a copy that names a function, a call with arguments, an
# abbreviation, a file, a folder, a struct or a constant that do not
# exist, or leaves a source file out, fails with each one named.
. "$(dirname "$0")/tap.sh"

dir=$(mktemp -d)
trap 'rm -rf "$dir" "$tap_out"' EXIT
check="$CP_ROOT/tests/doc_names.sh"
# names built here, so that no source (this file among them) holds them
g=gone$$

run_cmd "$check"
if [ "$rc" -eq 0 ]; then _ok "docs/architecture.md names only what exists"; else
	_not_ok "docs/architecture.md names only what exists"; fi

# a span broken over two lines, a generated file, a fenced block: not misses
cp "$CP_ROOT/docs/architecture.md" "$dir/good.md"
printf '\nSee `cp_profile__feed(p,\ndata, size)` and `build/cacheperf.skel.h`.\n\n```\n`%s_fenced()`\n```\n' \
	"$g" >>"$dir/good.md"
CP_DOC=$dir/good.md run_cmd "$check"
if [ "$rc" -eq 0 ]; then _ok "a broken span, build/ and fenced blocks pass"; else
	_not_ok "a broken span, build/ and fenced blocks pass"; fi

sed "s/\`gzip.c\`/\`${g}.c\`/" "$CP_ROOT/docs/architecture.md" >"$dir/bad.md"
printf '\n`%s_fn()`, `cp_%s(a, b)`, `__%s_tail()`, `live/%s.c`, `%s.h`, `user/%s/`, `struct cp_%s`, `CP_%s`\n' \
	"$g" "$g" "$g" "$g" "$g" "$g" "$g" "${g^^}" >>"$dir/bad.md"
CP_DOC=$dir/bad.md run_cmd "$check"
if [ "$rc" -eq 1 ]; then _ok "a stale name fails the check"; else _not_ok "a stale name fails the check" "status $rc"; fi
for want in "names ${g}_fn(), which no source" "names cp_${g}(a, b), which no source" \
	"names __${g}_tail(), which no source" "names live/${g}.c, which does not exist" \
	"names ${g}.h, which no folder holds" "names user/${g}/, which does not exist" \
	"names ${g}.c, which no folder holds" "does not name user/util/gzip.c" \
	"names struct cp_${g}, which no source spells" "names CP_${g^^}, which no source spells"; do
	if grep -qF -- "$want" "$tap_out"; then _ok "said: $want"; else _not_ok "said: $want"; fi
done

done_testing
