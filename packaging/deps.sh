#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Installs every build and test dependency of cacheperf-bpf from Debian's
# archive. Idempotent: when every package is present it does nothing.
set -eu

pkgs=(
	make gcc clang clang-format llvm pkg-config libclang-rt-14-dev
	libbpf-dev bpftool libelf-dev libdw-dev libdebuginfod-dev zlib1g-dev
	libzydis-dev
	protobuf-c-compiler libprotobuf-c-dev golang-go
	libcmocka-dev
	chromium
	g++ libgoogle-perftools-dev libjemalloc-dev libmimalloc-dev
	procps util-linux iproute2 debuginfod
	redis-server redis-tools
	prometheus prometheus-node-exporter curl python3-yaml
	debhelper dpkg-dev lintian fakeroot groff-base
)

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
