#!/usr/bin/env python3
"""Runs the command examples of README.md and docs/*.md, so that the docs cannot go stale.

A command example is a fenced block tagged `sh` (or `bash`, `shell`, `console`), or a `text`
block whose first line is a `$ ` prompt. Each one runs, unless an HTML comment on the lines
just above its fence says otherwise:

    <!-- example: skip: REASON -->                 not run; REASON says why (listed by --list)
    <!-- example: session NAME, step N -->         run in session NAME, in the order of N
    <!-- example: session NAME, step N, always --> ... even when an earlier step failed
    <!-- example: output -->                       (above a `text` block) the shown output of the
                                                   example run last before it in its file

A session is one scratch directory, shared by its examples across files; an example with no
session runs in a scratch directory of its own. The scratch directory links the checkout's
directories (`examples/`, `deploy/`, `plugins/`, `tests/`, `wit/`, ...) and `target/` to the build
the suite made ($CARGO_TARGET_DIR), `capw` and `kubectl` are on PATH, and `make` with no
Makefile in the current directory runs the checkout's. Each example runs with `bash -eo
pipefail` in its own process group, which is killed when it ends (a server it started with `&`
goes with it).

Shown output is compared line by line after both sides are redacted (times, name suffixes, ids,
digests, addresses, failure-domain letters, runs of blanks): every shown line must appear in the output, in order; a
`<word>` or `…` in a shown line matches any text, and a line `...` stands for lines left out.

    scripts/doc-examples.py            run every example
    scripts/doc-examples.py --list     list every example: where, and run, session or skip reason
    scripts/doc-examples.py --only docs/conformance.md[:LINE]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND_TAGS = {"sh", "bash", "shell", "console"}
MARKER = re.compile(r"<!--\s*example:\s*(.*?)\s*-->")
SESSION = re.compile(r"session\s+([\w-]+)(?:,\s*step\s+(\d+))?(,\s*always)?$")
TIMEOUT = 15 * 60


@dataclass
class Example:
    file: str
    line: int  # of the opening fence
    tag: str
    body: str
    marker: str | None
    output: "Output | None" = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def skip(self) -> str | None:
        if self.marker and self.marker.startswith("skip"):
            return self.marker.partition(":")[2].strip() or "(no reason given)"
        return None

    def session(self) -> tuple[str, int, bool]:
        """(session, step, always); an example with no session marker is a session of its own."""
        m = SESSION.match(self.marker or "")
        if m:
            return m.group(1), int(m.group(2) or 0), bool(m.group(3))
        return self.where, 0, False


@dataclass
class Output:
    file: str
    line: int
    body: str


@dataclass
class Problem:
    where: str
    what: str


def blocks(path: Path):
    """(line of the fence, tag, body, marker above it) of each fenced block of a Markdown file."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(`{3,})(\w*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        fence, tag, start = m.group(1), m.group(2), i
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != fence:
            j += 1
        marker = None
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0 and (mm := MARKER.search(lines[k])):
            marker = mm.group(1)
        yield start + 1, tag, "\n".join(lines[start + 1 : j]) + "\n", marker
        i = j + 1


def collect(files: list[Path], problems: list[Problem]) -> list[Example]:
    examples = []
    for path in files:
        rel = str(path.relative_to(ROOT))
        last = None
        for line, tag, body, marker in blocks(path):
            where = f"{rel}:{line}"
            if marker == "output":
                if last is None or last.skip:
                    problems.append(Problem(where, "an output marker with no run example before it"))
                else:
                    last.output = Output(rel, line, body)
                continue
            prompt = tag == "text" and body.startswith("$ ")
            if tag in COMMAND_TAGS or prompt:
                ex = Example(rel, line, tag, body, marker)
                if prompt and not ex.skip:
                    problems.append(Problem(where, "a `$ ` transcript in a text block: make it a "
                                            "`sh` block with its output below, or mark it skipped"))
                    continue
                if marker and not ex.skip and not SESSION.match(marker):
                    problems.append(Problem(where, f"unknown marker `{marker}`"))
                    continue
                examples.append(ex)
                if not ex.skip:
                    last = ex
    return examples


def redact(text: str) -> str:
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)
    text = re.sub(r"sha256:[0-9a-f…]+", "sha256:<digest>", text)
    text = re.sub(r"\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b", "<address>", text)
    text = re.sub(r"\b\d+(\.\d+)?\s?(ns|µs|us|ms|s|min|m|h)\b", "<time>", text)
    text = re.sub(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<uuid>", text)
    text = re.sub(r"-[0-9a-f]{5}\b", "-<suffix>", text)
    text = re.sub(r"\bi-\d+\b", "i-<id>", text)
    text = re.sub(r"\bzone-[a-z]\b", "zone-<zone>", text)
    return re.sub(r"\s+", " ", text).strip()


def pattern(shown: str) -> re.Pattern:
    parts = re.split(r"(<[\w-]+>|…)", shown)
    return re.compile("".join(".*?" if i % 2 else re.escape(p) for i, p in enumerate(parts)))


def compare(shown: str, actual: str) -> str | None:
    """None when every shown line is in `actual`, in order; else what is missing."""
    got = [redact(line) for line in actual.splitlines()]
    got = [line for line in got if line]
    at = 0
    for raw in shown.splitlines():
        want = redact(raw)
        if not want or want == "...":
            continue
        pat = pattern(want)
        for i in range(at, len(got)):
            if pat.fullmatch(got[i]):
                at = i + 1
                break
        else:
            return f"shown line not in the output (in order): {raw.strip()!r}"
    return None


PRELUDE = r"""
make() {
	if [ -f Makefile ] || [ -f makefile ] || [[ " $* " == *" -C "* ]]; then command make "$@"
	else command make -C "$CAPW_CHECKOUT" --no-print-directory "$@"; fi
}
"""


def scratch(target: Path) -> Path:
    d = Path(tempfile.mkdtemp(prefix="capw-doc-"))
    for entry in ROOT.iterdir():
        if entry.name in {"target", ".git", ".capw", "Makefile", "Cargo.toml", "Cargo.lock"}:
            continue
        (d / entry.name).symlink_to(entry)
    (d / "target").symlink_to(target)
    return d


def run(ex: Example, cwd: Path, env: dict) -> tuple[bool, str, float]:
    """Runs one example; its output goes to a file, not a pipe, since a server it started in
    the background would hold a pipe open past the example's end."""
    start = time.monotonic()
    with tempfile.TemporaryFile("w+", errors="replace") as out:
        proc = subprocess.Popen(
            ["bash", "-eo", "pipefail", "-c", PRELUDE + ex.body],
            cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            code = proc.wait(timeout=TIMEOUT)
            note = "" if code == 0 else f"\n(exit {code})"
        except subprocess.TimeoutExpired:
            code, note = None, f"\n(did not end within {TIMEOUT} s)"
        finally:
            # The example's group, with whatever it left running in the background.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.seek(0)
        text = out.read() + note
    return code == 0, text, time.monotonic() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--only", help="FILE or FILE:LINE; the other steps of its session run too")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    args = ap.parse_args()

    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    problems: list[Problem] = []
    examples = collect(files, problems)

    if args.list:
        for ex in examples:
            how = f"skip: {ex.skip}" if ex.skip else (
                ex.marker if SESSION.match(ex.marker or "") else "run")
            if ex.output:
                how += f", output at {ex.output.line}"
            print(f"{ex.where:48} {how}")
        for p in problems:
            print(f"{p.where:48} PROBLEM: {p.what}")
        return 1 if problems else 0

    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")).resolve()
    env = dict(os.environ)
    kube_bin = subprocess.run(
        [str(ROOT / "tests/kube-env/kube-env.sh"), "bin-dir", quickstart_version()],
        capture_output=True, text=True, check=True).stdout.strip()
    env["PATH"] = os.pathsep.join([str(target / "debug"), kube_bin, env.get("PATH", "")])
    env["CAPW_CHECKOUT"] = str(ROOT)
    env.pop("CAPW_STATE_DIR", None)

    sessions: dict[str, list[Example]] = {}
    for ex in examples:
        if ex.skip:
            continue
        sessions.setdefault(ex.session()[0], []).append(ex)
    if args.only:
        def wanted(ex: Example) -> bool:
            return ex.where == args.only or ex.file == args.only
        sessions = {k: v for k, v in sessions.items() if any(wanted(e) for e in v)}

    failed, ran = 0, 0
    for name, steps in sessions.items():
        steps.sort(key=lambda e: e.session()[1])
        cwd = scratch(target)
        broken = False
        for ex in steps:
            if broken and not ex.session()[2]:
                print(f"  SKIP  {ex.where} (an earlier step of session {name} failed)")
                continue
            ok, out, secs = run(ex, cwd, env)
            ran += 1
            why = None if ok else "the commands failed"
            if ok and ex.output:
                why = compare(ex.output.body, out)
                if why:
                    why = f"output shown at {ex.output.file}:{ex.output.line}: {why}"
            print(f"  {'ok  ' if not why else 'FAIL'}  {ex.where} ({secs:.1f} s)", flush=True)
            if why:
                failed += 1
                broken = True
                print(f"        {why}\n        output:")
                # Its first lines (where an error says what failed) and its last (how it ended):
                # a backtrace in between is cut.
                lines = out.splitlines()
                if len(lines) > 60:
                    lines = lines[:20] + [f"… {len(lines) - 60} lines …"] + lines[-40:]
                print("\n".join("        | " + line for line in lines))
        if args.keep:
            print(f"  session {name}: {cwd}")
        else:
            shutil.rmtree(cwd, ignore_errors=True)
    for p in problems:
        print(f"  FAIL  {p.where}: {p.what}")
    skipped = sum(1 for ex in examples if ex.skip)
    print(f"doc examples: {ran - failed} passed, {failed + len(problems)} failed, {skipped} skipped "
          f"(scripts/doc-examples.py --list says why)")
    return 1 if failed or problems else 0


def quickstart_version() -> str:
    text = (ROOT / "examples/quickstart/20-clusters.yaml").read_text()
    return re.search(r"^\s*version:\s*(\S+)", text, re.M).group(1)


if __name__ == "__main__":
    sys.exit(main())
