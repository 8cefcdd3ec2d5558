#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Builds the Debian package in a staging copy of the tree, then runs lintian
# on it. packaging/debian becomes the copy's debian/; nothing is written into
# the source tree but OUT_DIR.
#
# usage: packaging/deb.sh OUT_DIR    (make deb: OUT_DIR = BUILD/deb)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
version=$(dpkg-parsechangelog -l "$root/packaging/debian/changelog" -S Version)
stage=$out/cacheperf-bpf-$version

rm -rf "$stage"
mkdir -p "$stage"
# the files the build reads, not the build directories or other worktrees' output
(cd "$root" && cp -r Makefile bpf include proto user vmlinux packaging "$stage"/)
cp -r "$root/packaging/debian" "$stage/debian"
(cd "$stage" && dpkg-buildpackage -b -us -uc -j2 >"$out/build.log" 2>&1) || {
	tail -30 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
}
deb=$out/cacheperf-bpf_${version}_amd64.deb
echo "deb: $deb"
# errors fail the build; warnings are shown
lintian --fail-on error "$deb"
