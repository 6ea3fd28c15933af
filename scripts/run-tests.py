#!/usr/bin/env python3
"""Builds the workspace's test binaries once and runs them, several at a time.

    scripts/run-tests.py [--build-only] [--jobs N] [--only PKG[/TARGET],...] -- CARGO_TEST_ARGS... [-- TEST_ARGS...]

`cargo test` runs one test binary after the other; most of capw's binaries spend their time
waiting (on an API server, on processes of a workload cluster, on a simulated cloud's delays),
so three at a time on two cores take far less wall time than one (on 2026-12-05, 1,023 s for
the suite's binaries, where two at a time with fewer beside each other took 1,502 s; 20 CPU
minutes either way). Binaries whose tests compare timings (they would measure the neighbour's
load, not their own), and the CLI's, whose starter matrix compiles on both cores, run alone,
after the others: the SERIAL set below, by package or package/target.

The others run longest first, by the wall times of the last run (kept in the target directory as
test-times.json), so that the long binaries do not start last and run alone at the end.

Each binary runs as `cargo test` runs it: from its package's directory, with CARGO_MANIFEST_DIR
and CARGO_PKG_* set. Its output is printed whole when it ends, with how long it took and its CPU time (its own and
its reaped children's). The last line is the suite's count, `N passed, N failed, N skipped`, and the exit status is non-zero when
any test failed or any binary did not finish its run. `--only` keeps the integration tests of the
packages (or package/target) named, and every package's unit tests.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time

# Binaries whose assertions compare durations or count work done within a time: run alone.
SERIAL = {
    # Not timing-bound itself, but when its starters or their SDKs changed it builds and
    # compiles providers in five languages (the starter matrix) on both cores: beside it,
    # real-boot scenarios starve past their waits. With nothing changed it builds nothing.
    "capw/cli",
    "capw-kube/kube",  # sharding and hand-over timings against the API server
    "capw-local/hung",  # a provider's one-second deadline beside a cluster that converges
    "capw-runtime/all",  # deadlines and fuel against wall time
    "capw-workload/workload",  # probe timeouts against a silent API
}

RESULT = re.compile(r"^test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored")
PANIC = re.compile(r"^thread '(.*)' (?:\(\d+\) )?panicked at (.*)$")
# How many lines of a panic's message the summary repeats.
PANIC_LINES = 12


def panics(output):
    """Each panic in a binary's output: the test (thread) it ended, where, and the first lines
    of its message. A failing test's own output can run to thousands of lines (a controller's
    log); the summary repeats only why it failed, so that the end of a run says it."""
    found = []
    lines = output.splitlines()
    for i, line in enumerate(lines):
        m = PANIC.match(line)
        if not m:
            continue
        message = []
        for follow in lines[i + 1 : i + 1 + PANIC_LINES]:
            if follow.startswith("note: run with `RUST_BACKTRACE") or follow.startswith("---- "):
                break
            message.append(follow)
        found.append((m.group(1), m.group(2).rstrip(":"), message))
    return found


# The wall time a binary not yet timed is taken to need when ordering the run.
UNSEEN = 120.0


def times_file():
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(os.getcwd(), "target")
    return os.path.join(target, "test-times.json")


def load_times():
    try:
        with open(times_file()) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def save_times(times):
    path = times_file()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".new", "w") as f:
            json.dump(times, f, indent=1, sort_keys=True)
        os.replace(path + ".new", path)
    except OSError as e:
        print(f"run-tests: the binaries' times were not kept ({e})", file=sys.stderr)


def build(cargo_args):
    cmd = ["cargo", "test", "--no-run", "--message-format=json-render-diagnostics", *cargo_args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    binaries = []
    for line in proc.stdout:
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            continue
        if msg.get("reason") != "compiler-artifact" or not msg.get("executable"):
            continue
        if not msg.get("profile", {}).get("test"):
            continue
        target = msg["target"]
        package = msg["package_id"]
        binaries.append(
            {
                "package": package_name(package, msg["manifest_path"]),
                "target": target["name"],
                "kind": target["kind"][0],
                "exe": msg["executable"],
                "dir": os.path.dirname(msg["manifest_path"]),
                "version": package_version(package),
            }
        )
    if proc.wait() != 0:
        sys.exit(f"run-tests: `{' '.join(cmd)}` failed")
    return binaries


def package_name(package_id, manifest_path):
    # path+file:///work/main/host/api#capw-api@0.1.0, or ...#0.1.0 when the name is the dir's
    frag = package_id.rsplit("#", 1)[-1]
    if "@" in frag:
        return frag.split("@")[0]
    with open(manifest_path) as f:
        for line in f:
            m = re.match(r'^name\s*=\s*"([^"]+)"', line)
            if m:
                return m.group(1)
    return os.path.basename(os.path.dirname(manifest_path))


def package_version(package_id):
    frag = package_id.rsplit("#", 1)[-1]
    return frag.split("@")[-1]


def label(b):
    return f"{b['package']}/{b['target']}" + (" (unit)" if b["kind"] in ("lib", "bin") else "")


def run_one(b, test_args, lock, totals):
    env = dict(os.environ)
    env["CARGO_MANIFEST_DIR"] = b["dir"]
    env["CARGO_PKG_NAME"] = b["package"]
    env["CARGO_PKG_VERSION"] = b["version"]
    env["CARGO_CRATE_NAME"] = b["target"].replace("-", "_")
    started = time.monotonic()
    proc = subprocess.Popen(
        [b["exe"], *b.get("filters", []), *test_args], cwd=b["dir"], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, errors="replace",
    )
    stdout = proc.stdout.read()
    proc.stdout.close()
    # wait4, not wait: the binary's own CPU (its children's too, once reaped), beside its wall time.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    took = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime
    counts = [0, 0, 0]
    seen = False
    for line in stdout.splitlines():
        m = RESULT.match(line)
        if m:
            seen = True
            counts[0] += int(m.group(2))
            counts[1] += int(m.group(3))
            counts[2] += int(m.group(4))
    with lock:
        print(f"\n     Running {label(b)} ({os.path.basename(b['exe'])}), {took:.1f} s wall, {cpu:.1f} s CPU", flush=True)
        sys.stdout.write(stdout)
        sys.stdout.flush()
        totals["passed"] += counts[0]
        totals["failed"] += counts[1]
        totals["skipped"] += counts[2]
        totals["times"].append((took, cpu, label(b)))
        if not b.get("filters"):  # a part of a binary says little of the whole's time
            totals["last"][label(b)] = took
        if proc.returncode != 0 or not seen:
            totals["broken"].append(f"{label(b)} (exit {proc.returncode})")
            totals["panics"].extend((label(b), *p) for p in panics(stdout))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("CAPW_TEST_JOBS", "3")))
    parser.add_argument("--build-only", action="store_true", help="build the test binaries, run none")
    parser.add_argument("--only", default="", help="integration tests to run: PKG or PKG/TARGET, comma-separated")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    # Arguments after a second `--` go to every test binary.
    if "--" in rest:
        i = rest.index("--")
        cargo_args, test_args = rest[:i], rest[i + 1 :]
    else:
        cargo_args, test_args = rest, []

    binaries = build(cargo_args)
    if args.build_only:
        print(f"{len(binaries)} test binaries built")
        return 0
    # PKG, PKG/TARGET, or PKG/TARGET:FILTER (that binary's tests whose names contain FILTER).
    only = set()
    filters = {}
    for entry in (e for e in args.only.split(",") if e):
        name, _, pattern = entry.partition(":")
        only.add(name)
        if pattern:
            filters.setdefault(name, []).append(pattern)

    def wanted(b):
        if not only or b["kind"] in ("lib", "bin", "proc-macro"):
            return True
        return b["package"] in only or f"{b['package']}/{b['target']}" in only

    binaries = [b for b in binaries if wanted(b)]
    for b in binaries:
        b["filters"] = filters.get(f"{b['package']}/{b['target']}", [])
    serial = [b for b in binaries if f"{b['package']}/{b['target']}" in SERIAL]
    parallel = [b for b in binaries if b not in serial]

    # Longest first, by the last run's wall times: the long binaries start together at the
    # beginning instead of one of them alone at the end. A binary not seen before counts as long.
    last = load_times()
    parallel.sort(key=lambda b: -last.get(label(b), UNSEEN))

    lock = threading.Lock()
    totals = {"passed": 0, "failed": 0, "skipped": 0, "broken": [], "times": [], "panics": [], "last": dict(last)}
    queue = list(parallel)

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                b = queue.pop(0)
            run_one(b, test_args, lock, totals)

    started = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for b in serial:
        run_one(b, test_args, lock, totals)
    took = time.monotonic() - started

    save_times(totals["last"])

    print(f"\n{len(binaries)} test binaries in {took:.0f} s ({len(parallel)} {args.jobs} at a time, {len(serial)} alone); the slowest (wall, CPU):")
    for t, cpu, name in sorted(totals["times"], reverse=True)[:10]:
        print(f"  {t:7.1f} s  {cpu:7.1f} s  {name}")
    print(f"  {sum(t[1] for t in totals['times']):7.1f} s of CPU in all")
    if totals["broken"]:
        print("binaries that failed or did not finish: " + ", ".join(totals["broken"]))
    for binary, test, where, message in totals["panics"]:
        print(f"\n{binary}: {test} panicked at {where}")
        for line in message:
            print(f"    {line}")
    print(f"\n{totals['passed']} passed, {totals['failed']} failed, {totals['skipped']} skipped")
    return 1 if totals["failed"] or totals["broken"] else 0


if __name__ == "__main__":
    sys.exit(main())
