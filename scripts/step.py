#!/usr/bin/env python3
"""Runs one step of a make target and writes where its time went.

    scripts/step.py NAME -- COMMAND [ARG...]     run COMMAND as step NAME
    scripts/step.py --report                     print the table of this run's steps

Each step appends one line to $CAPW_STEPS (a TSV file: step, wall seconds, CPU seconds of the
step and everything it started, exit status, start time), and prints a line when it ends, so
every run of `make demo`, `make check` and `make test` reports where its time went. The CPU time
is the step's children's user + system time (getrusage), which on a shared machine is the steadier
figure beside wall time. Steps that run side by side each report their own wall time; the report
gives the run's own wall time beside their sum.
"""
import os
import resource
import subprocess
import sys
import time


def steps_file():
    path = os.environ.get("CAPW_STEPS")
    if not path:
        sys.exit("step.py: CAPW_STEPS is not set (the file this run's step times go to)")
    return path


def run(name, command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    start_mono = time.monotonic()
    try:
        status = subprocess.call(command)
    except FileNotFoundError as err:
        print(f"step {name}: {err}", file=sys.stderr)
        status = 127
    wall = time.monotonic() - start_mono
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(steps_file(), "a") as out:
        out.write(f"{name}\t{wall:.1f}\t{cpu:.1f}\t{status}\t{started:.0f}\n")
    verdict = "ok" if status == 0 else f"FAILED (exit {status})"
    print(f"== step {name}: {verdict}, {fmt(wall)} wall, {fmt(cpu)} CPU", file=sys.stderr, flush=True)
    return status


def fmt(seconds):
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    return f"{seconds // 60} min {seconds % 60:02d} s"


def report():
    path = steps_file()
    if not os.path.exists(path):
        return 0
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 5:
                rows.append((parts[0], float(parts[1]), float(parts[2]), int(parts[3]), float(parts[4])))
    if not rows:
        return 0
    first = min(r[4] for r in rows)
    last = max(r[4] + r[1] for r in rows)
    width = max(len(r[0]) for r in rows)
    print(f"\nwhere the time went ({path}):", file=sys.stderr)
    print(f"  {'step':<{width}}  {'starts at':>10}  {'wall':>12}  {'CPU':>12}", file=sys.stderr)
    for name, wall, cpu, status, start in rows:
        mark = "" if status == 0 else f"  exit {status}"
        print(f"  {name:<{width}}  {fmt(start - first):>10}  {fmt(wall):>12}  {fmt(cpu):>12}{mark}", file=sys.stderr)
    total_cpu = sum(r[2] for r in rows)
    print(f"  {'run, end to end':<{width}}  {'':>10}  {fmt(last - first):>12}  {fmt(total_cpu):>12}", file=sys.stderr)
    return 0


def main(argv):
    if argv[1:2] == ["--report"]:
        return report()
    if len(argv) < 4 or argv[2] != "--":
        sys.exit(__doc__)
    return run(argv[1], argv[3:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
