"""CPU per request of one Go benchmark in two test binaries (old, new).

CPU is the user+system time (getrusage) of a run of HI requests minus that
of a run of LO requests, over HI-LO: the benchmark's set-up (catalog,
gateway, table) cancels out. The binaries run interleaved, old then new,
ROUNDS times, so a busy machine weighs on both alike; the medians' ratio
is the figure, the rounds show the spread. Used by cpu-against.sh.

    python3 cpu_per_request.py OLD_BIN OLD_DIR NEW_BIN NEW_DIR BENCH LO HI ROUNDS
"""
import os
import resource
import statistics
import subprocess
import sys


def cpu(binary, cwd, bench, n):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([binary, "-test.run", "^$", "-test.bench", bench,
                          "-test.benchtime", f"{n}x", "-test.benchmem"],
                         cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{binary} {bench}: exit {out.returncode}\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    lines = [l for l in out.stdout.splitlines() if l.startswith("Benchmark")]
    if not lines:
        sys.exit(f"{binary}: no benchmark matches {bench}")
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return used, lines[-1]


def main():
    old_bin, old_dir, new_bin, new_dir, bench = sys.argv[1:6]
    lo, hi, rounds = int(sys.argv[6]), int(sys.argv[7]), int(sys.argv[8])
    runs = {"old": (old_bin, old_dir), "new": (new_bin, new_dir)}
    us = {"old": [], "new": []}
    for _ in range(rounds):
        for name, (binary, cwd) in runs.items():
            c_lo, _ = cpu(binary, cwd, bench, lo)
            c_hi, line = cpu(binary, cwd, bench, hi)
            us[name].append((c_hi - c_lo) / (hi - lo) * 1e6)
            print(f"{name} {us[name][-1]:.1f} cpu-us/op  {line}", flush=True)
    for name in us:
        print(f"{name} median {statistics.median(us[name]):.1f} cpu-us/op, rounds "
              + ", ".join(f"{x:.1f}" for x in us[name]))
    print(f"ratio old/new of the medians: {statistics.median(us['old']) / statistics.median(us['new']):.2f}")


if __name__ == "__main__":
    main()
