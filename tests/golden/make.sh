#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Remakes the golden files (tests/golden/README.md says when, and what to
# review before checking them in): builds chain from chain.c once, runs it
# from $REC_DIR under `cacheperf-bpf -p PID --record` (root), and replays the
# recording into chain.txt, chain.json, chain.html, chain.pb.gz (pprof) and
# chain.folded, and its diff with itself into chain-diff.txt and chain-diff.json.
# Usage: tests/golden/make.sh BUILD_DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-build}" && pwd)/cacheperf-bpf
REC_DIR=/tmp/cacheperf-golden	# the path the recording names; test_golden.sh maps it here
rm -rf "$REC_DIR"
mkdir -p "$REC_DIR"
trap 'rm -rf "$REC_DIR"' EXIT

# no C library; its debug info names tests/golden/chain.c and
# tests/workloads/alloc_chain.h, wherever the tree is
root=$(cd "$here/../.." && pwd)
(cd "$root" && gcc -static -nostdlib -fno-builtin -fno-stack-protector -g -O1 \
	-fdebug-prefix-map="$root"=. -Itests/workloads \
	-fno-omit-frame-pointer -Wall -Wextra -Wl,--build-id -o tests/golden/chain tests/golden/chain.c)
cp "$here/chain" "$REC_DIR/chain"

# -p, not `-- CMD`: the probes of a launched command are its launcher's (libc),
# and chain has none; attached to chain itself, they find its malloc
mkfifo "$REC_DIR/go"
"$REC_DIR/chain" <"$REC_DIR/go" >"$REC_DIR/out" &
exec 7>"$REC_DIR/go"
for _ in $(seq 50); do grep -q "^ready" "$REC_DIR/out" && break; sleep 0.1; done
pid=$(awk '/^ready/ { print $2 }' "$REC_DIR/out")
"$bin" -v --source faults --record "$here/chain.cprec" -p "$pid" >/dev/null 2>"$REC_DIR/err" &
prof=$!
for _ in $(seq 100); do grep -q "sampling events" "$REC_DIR/err" && break; sleep 0.1; done
echo go >&7
exec 7>&-
wait "$prof"
"$bin" report --path-map "$REC_DIR=$here" --json "$here/chain.json" --html "$here/chain.html" \
	--pprof "$here/chain.pb.gz" --folded "$here/chain.folded" "$here/chain.cprec" >"$here/chain.txt"
chmod 0644 "$here/chain.pb.gz" "$here/chain.folded"
# the recording against itself, named as test_diff.sh names it (from this directory)
(cd "$here" && "$bin" diff --path-map="$REC_DIR=$here" --json chain-diff.json chain.cprec \
	chain.cprec >chain-diff.txt)
echo "wrote $here/chain.{cprec,txt,json,html,pb.gz,folded} and chain-diff.{txt,json}: review" \
	"them (README.md) before checking them in"
