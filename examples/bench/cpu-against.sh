#!/usr/bin/env bash
# CPU per request of one modules/gateway benchmark at REV and in this tree,
# measured in one run (cpu_per_request.py says how). This tree's benchmark
# files BENCH_FILES (default: delta_bench_test.go sharing_bench_test.go) are
# copied into REV's, so both run the same benchmark.
#
#   bash examples/bench/cpu-against.sh REV BENCH LO HI ROUNDS
#   bash examples/bench/cpu-against.sh 26a01dd '^BenchmarkDeltaLoadTable$' 200 2200 5
#
# Environment: LAKEGATE_TEST_REDIS as for go test (benchmarks that need it).
set -euo pipefail
rev=${1:?usage: cpu-against.sh REV BENCH LO HI ROUNDS}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'git -C "$repo" worktree remove --force "$work/old" 2>/dev/null || true; rm -rf "$work"' EXIT
git -C "$repo" worktree add -q --detach "$work/old" "$rev"
for f in ${BENCH_FILES:-delta_bench_test.go sharing_bench_test.go}; do
	cp "$repo/modules/gateway/$f" "$work/old/modules/gateway/"
done
(cd "$work/old" && go test -c -o "$work/old.test" ./modules/gateway)
(cd "$repo" && go test -c -o "$work/new.test" ./modules/gateway)
python3 "$repo/examples/bench/cpu_per_request.py" "$work/old.test" "$work/old/modules/gateway" \
	"$work/new.test" "$repo/modules/gateway" "$2" "$3" "$4" "$5"
