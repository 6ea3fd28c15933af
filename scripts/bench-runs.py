#!/usr/bin/env python3
"""Run the call benchmarks several times, each in a new process, and print for every benchmark
the median of the runs' medians with their range, its ratio to native and, for the webhook
variants, to the fresh-instance call.

On a shared machine the same binary's median moves a lot from one process to the next while
the spread inside one run stays small; one run says little, several say more. Each run is
pinned to one core with taskset when it is there.

Reads the JSON messages of `cargo bench --no-run --message-format=json` on stdin to find the
benchmark executable.

    cargo bench -p capw-runtime --bench calls --no-run --message-format=json \\
        | scripts/bench-runs.py --runs 7 --criterion target/criterion
"""
import argparse
import json
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import time


def executable(lines, target):
    for line in lines:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if (
            msg.get("reason") == "compiler-artifact"
            and msg.get("target", {}).get("name") == target
            and msg.get("executable")
        ):
            return msg["executable"]
    sys.exit(f"bench-runs: no executable for the benchmark `{target}` in cargo's output")


def medians(root, since):
    """The medians criterion wrote after `since` (other benchmarks' results stay there)."""
    found = {}
    for est in sorted(root.glob("*/*/new/estimates.json")):
        if est.stat().st_mtime < since:
            continue
        group, bench = est.parts[-4], est.parts[-3]
        found[(group, bench)] = json.loads(est.read_text())["median"]["point_estimate"]
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--target", default="calls")
    ap.add_argument("--criterion", type=pathlib.Path, required=True,
                    help="criterion's output directory (CARGO_TARGET_DIR/criterion)")
    ap.add_argument("--warm-up-time", default="2", help="seconds; the benchmark sets its own measurement time")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("bench-runs: --runs must be at least 1")

    exe = executable(sys.stdin, args.target)
    pin = ["taskset", "-c", "1"] if shutil.which("taskset") else []
    samples = {}
    cpu = []
    for run in range(1, args.runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"run {run}/{args.runs}", file=sys.stderr, flush=True)
        started = time.time()
        done = subprocess.run(
            pin + [exe, "--bench", "--warm-up-time", args.warm_up_time],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            sys.exit(f"bench-runs: run {run} failed with exit code {done.returncode}")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
                    time.time() - started))
        for key, ns in medians(args.criterion, started).items():
            samples.setdefault(key, []).append(ns)

    groups = sorted({g for g, _ in samples})
    print(f"medians of {args.runs} runs (range over the runs)")
    for group in groups:
        print(group)
        native = samples.get((group, "native"))
        native_median = statistics.median(native) if native else None
        fresh = samples.get((group, "fresh-instance"))
        fresh_median = statistics.median(fresh) if fresh else None
        for (g, bench), values in sorted(samples.items()):
            if g != group:
                continue
            mid = statistics.median(values)
            ratio = ""
            if native_median and bench != "native":
                ratio = f"  ({mid / native_median:.1f}x native)"
            if fresh_median and bench.startswith("webhook"):
                ratio += f"  ({mid / fresh_median:.1f}x fresh-instance)"
            # The contract versions side by side: each 0.2 call against its 0.1 twin.
            if bench.startswith("v0.2-"):
                twin = samples.get((group, "v0.1-" + bench[len("v0.2-"):]))
                if twin:
                    ratio += f"  ({mid / statistics.median(twin):.2f}x v0.1)"
            print(f"  {bench:24} {mid / 1000:8.2f} us  "
                  f"({min(values) / 1000:.2f}-{max(values) / 1000:.2f}){ratio}")
    for run, (user, system, wall) in enumerate(cpu, 1):
        print(f"run {run}: CPU {user:.1f} s user + {system:.1f} s system in {wall:.1f} s")


if __name__ == "__main__":
    main()
