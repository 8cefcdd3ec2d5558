# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The recording reader under libFuzzer for a bounded time (CP_FUZZ_SECONDS,
# default 30), from the seed corpus: no crash, leak or bad access. New inputs
# go to a scratch directory, never into the checked-in corpus.
. "$(dirname "$0")/tap.sh"

fuzzer=$CP_BUILD/tests/fuzz/fuzz_recording
if [ ! -x "$fuzzer" ]; then
	skip "no fuzzer built (needs clang with libFuzzer: libclang-rt-14-dev)"
	done_testing
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work" "$tap_out"' EXIT
secs=${CP_FUZZ_SECONDS:-30}
run_cmd "$fuzzer" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
	-artifact_prefix="$work/" "$work" "$CP_ROOT/tests/fuzz/corpus"
runs=$(grep -oE "^#[0-9]+" "$tap_out" | tail -1)
if [ "$rc" -eq 0 ] && [ -n "$runs" ]; then
	_ok "${secs} s of fuzzing the recording reader: no crash (${runs#\#} inputs)"
else
	_not_ok "fuzzing the recording reader" "status $rc" \
		"$(grep -E "ERROR|SUMMARY|artifact" "$tap_out" | head -5)"
fi
done_testing
