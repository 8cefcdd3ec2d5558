#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Installs cacheperf-bpf's dependencies from Debian's archive:
#   deps.sh demo    what `make demo` needs: build the profiler, run its demo
#   deps.sh [check] that and what `make check` needs besides (test tools,
#                   allocators and services the tests profile, readers of
#                   the outputs, packaging)
# Idempotent: when every package is present it does nothing.
set -eu

demo_pkgs=(
	make gcc clang llvm pkg-config
	libbpf-dev bpftool libelf-dev libdw-dev libdebuginfod-dev zlib1g-dev
	libzydis-dev protobuf-c-compiler libprotobuf-c-dev
	procps
)
check_pkgs=(
	clang-format libclang-rt-14-dev golang-go
	libcmocka-dev
	chromium
	g++ libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev
	util-linux iproute2 debuginfod libc6-dbg
	redis-server redis-tools
	prometheus prometheus-node-exporter curl python3-yaml
	debhelper dpkg-dev lintian fakeroot groff-base
)

case "${1:-check}" in
demo) pkgs=("${demo_pkgs[@]}") ;;
check) pkgs=("${demo_pkgs[@]}" "${check_pkgs[@]}") ;;
*)
	echo "usage: deps.sh [demo|check]" >&2
	exit 2
	;;
esac

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
