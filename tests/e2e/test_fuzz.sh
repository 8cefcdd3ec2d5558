# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The libFuzzer targets (tests/fuzz/fuzz_NAME.c) for a bounded time each
# (CP_FUZZ_SECONDS, default 30), from their seeds: no crash, leak, hang, bad
# access or undefined behaviour. New inputs go to a scratch directory, never
# into the checked-in seeds.
#   recording     the recording reader, the replay, the report; seeds: corpus/
#   elf           the project's own readers of a tenant's ELF file; corpus_elf/,
#                 inputs cut at 64 KiB (the seeds' sections fit)
#   tenant_bytes  a tenant's code, heap and /proc text as the project reads
#                 them; corpus_bytes/
. "$(dirname "$0")/tap.sh"

work=$(mktemp -d)
trap 'rm -rf "$work" "$tap_out"' EXIT
secs=${CP_FUZZ_SECONDS:-30}
# undefined behaviour stops the run as a crash does (the build recovers by default)
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# fuzz NAME SEEDS MAX_LEN WHAT (MAX_LEN 0: libFuzzer's, from the seeds)
fuzz() {
	local fuzzer=$CP_BUILD/tests/fuzz/fuzz_$1 len=()

	if [ ! -x "$fuzzer" ]; then
		skip "$4: no fuzzer built (needs clang with libFuzzer: libclang-rt-14-dev)"
		return
	fi
	mkdir -p "$work/$1"
	[ "$3" -gt 0 ] && len=(-max_len="$3")
	run_cmd "$fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 "${len[@]}" \
		-artifact_prefix="$work/$1/" "$work/$1" "$CP_ROOT/tests/fuzz/$2"
	runs=$(grep -oE "^#[0-9]+" "$tap_out" | tail -1)
	if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
		_ok "${secs} s of fuzzing $4: no crash (${runs#\#} inputs)"
	else
		_not_ok "fuzzing $4" "status $rc" \
			"$(grep -E "ERROR|SUMMARY|artifact|runtime error" "$tap_out" | head -5)"
	fi
}

fuzz recording corpus 0 "the recording reader"
fuzz elf corpus_elf 65536 "the ELF readers"
fuzz tenant_bytes corpus_bytes 16384 "the readers of a tenant's code, heap and /proc text"
done_testing
