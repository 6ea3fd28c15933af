#!/usr/bin/env python3
"""Removes from a Cargo target directory the units no build has used for a while.

    scripts/prune-target.py TARGET_DIR [--days N] [--dry-run] [--in-use "CARGO ARGS"]...

Cargo never removes an artifact: a changed dependency version, feature set or profile leaves the
old unit's files behind, and a kept target directory grows until the disk is full. Every build
reads the fingerprint of each unit it needs (`.fingerprint/<name>-<hash>/`), whether it compiles
it or finds it fresh, so the files' access times say when a unit was last part of a build (with
`relatime`, to within a day). A unit whose fingerprint nobody has read for N days (default 7)
goes, with everything of its hash: `deps/*-<hash>*`, `build/*-<hash>`, `.fingerprint/*-<hash>`,
in every profile directory (debug, release, the plugin target's). What is in use stays, so the
next build compiles nothing more than it would have. The compile cache the CLI's tests keep in
starters/compiled/ goes by the same rule, entry by entry. On a file system mounted `noatime` access
times say nothing, and nothing is removed by age.

A week of work leaves more than that: every change to a dependency's version or features gives
each crate above it, every test binary among them, a new hash, and the old ones stay for the
week (on 2026-12-05, 17.9 of the debug build's 23 GiB were units no build of the suite used).
With `--in-use`, the debug profile keeps only the units the cargo commands named use (each is
run with `--message-format=json` and must find its build fresh: `make test` names its test
build and the image's build right after making them); any other unit of debug/ goes whatever
its age. A build not named (`make demo`'s capw, a `cargo build -p` of one crate) compiles its
few units again the next time. Cargo's lock of the debug build is held while units go.
"""
import argparse
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HASHED = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})(?:\..*)?$")


def mount_options(path):
    """The mount options of the file system holding `path` (the longest mount point above it)."""
    path = os.path.realpath(path)
    best, options = "", ""
    try:
        with open("/proc/mounts") as f:
            for line in f:
                fields = line.split()
                if len(fields) < 4:
                    continue
                point = fields[1]
                if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
                    best, options = point, fields[3]
    except OSError:
        pass
    return options.split(",")


def profile_dirs(target_dir):
    """Directories with a deps/ and a .fingerprint/: <target>/<profile>, <target>/<triple>/<profile>."""
    base = target_dir.rstrip("/").count(os.sep)
    for dirpath, dirnames, _ in os.walk(target_dir):
        if "deps" in dirnames and ".fingerprint" in dirnames:
            yield dirpath
            dirnames[:] = []
        elif dirpath.count(os.sep) - base >= 2:
            dirnames[:] = []


def last_used(unit_dir):
    newest = 0.0
    for dirpath, _, files in os.walk(unit_dir):
        for name in files:
            try:
                st = os.stat(os.path.join(dirpath, name))
            except OSError:
                continue
            newest = max(newest, st.st_atime, st.st_mtime)
    return newest


def size(path):
    if os.path.isdir(path) and not os.path.islink(path):
        total = 0
        for dirpath, _, files in os.walk(path):
            for name in files:
                try:
                    total += os.lstat(os.path.join(dirpath, name)).st_size
                except OSError:
                    pass
        return total
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0


def unit_hash(path):
    """The unit hash in an artifact's path: in its name (`deps/libfoo-<hash>.rlib`), or in its
    directory's (`build/foo-<hash>/build-script-build`, `build/foo-<hash>/out`)."""
    for part in (os.path.basename(path), os.path.basename(os.path.dirname(path))):
        m = HASHED.match(part)
        if m:
            return m.group("hash")
    return None


class Uplifted:
    """The unit hash of an executable or library Cargo copied out of deps/ under its plain name
    (`debug/capw`, `debug/examples/crds`): a hard link to `deps/<name>-<hash>`, found by inode."""

    def __init__(self):
        self.inodes = {}

    def hash_of(self, path):
        try:
            st = os.stat(path)
        except OSError:
            return None
        folder = os.path.dirname(path)
        if os.path.basename(folder) != "examples":
            folder = os.path.join(folder, "deps")
        if folder not in self.inodes:
            found = self.inodes[folder] = {}
            for entry in os.listdir(folder) if os.path.isdir(folder) else []:
                m = HASHED.match(entry)
                if m:
                    try:
                        found[os.stat(os.path.join(folder, entry)).st_ino] = m.group("hash")
                    except OSError:
                        pass
        return self.inodes[folder].get(st.st_ino)


def in_use(commands):
    """The hashes of every unit the cargo commands use, from their JSON messages; each command
    must succeed (a failed listing would make every unit look unused)."""
    hashes = set()
    uplifted = Uplifted()
    for command in commands:
        cmd = [os.environ.get("CARGO", "cargo"), *shlex.split(command), "--message-format=json"]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if proc.returncode != 0:
            sys.exit(f"prune-target: `{' '.join(cmd)}` failed; nothing removed")
        for line in proc.stdout.splitlines():
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            paths = list(msg.get("filenames") or [])
            if msg.get("reason") == "build-script-executed":
                paths.append(msg["out_dir"])
            found = {h for h in (unit_hash(p) or uplifted.hash_of(p) for p in paths) if h}
            hashes.update(found)
            if not found and msg.get("reason") == "compiler-artifact":
                # A cdylib's files carry no hash (`deps/libcapw_sim_infra.so`): its unit is
                # known by the fingerprint that names its library.
                hashes.add("lib-" + msg["target"]["name"].replace("-", "_"))
    return hashes


def kept(fingerprint, name_hash, keep):
    """Whether the unit of fingerprint directory `fingerprint` is among `keep` (hashes, and
    `lib-<name>` for the libraries known only by name)."""
    if name_hash in keep:
        return True
    try:
        return any(entry in keep for entry in os.listdir(fingerprint) if entry.startswith("lib-"))
    except OSError:
        return False


def prune(target_dir, days, dry_run, keep=None):
    """Removes the units of every profile unused for `days`, and with `keep` (unit hashes),
    every unit of the debug profile not in it."""
    by_age = "noatime" not in mount_options(target_dir)
    if not by_age:
        print(f"prune-target: {target_dir} is on a file system mounted noatime; nothing removed by age",
              file=sys.stderr)
    cutoff = time.time() - days * 86400 if by_age else 0.0
    debug = os.path.join(target_dir, "debug")
    removed_bytes = removed_units = 0
    for profile in profile_dirs(target_dir):
        fingerprints = os.path.join(profile, ".fingerprint")
        stale = set()
        unused = keep is not None and os.path.samefile(profile, debug)
        for entry in os.listdir(fingerprints):
            m = HASHED.match(entry)
            if not m:
                continue
            if unused and not kept(os.path.join(fingerprints, entry), m.group("hash"), keep):
                stale.add(m.group("hash"))
            elif by_age and last_used(os.path.join(fingerprints, entry)) < cutoff:
                stale.add(m.group("hash"))
        if not stale:
            continue
        removed_units += len(stale)
        for sub in ("deps", ".fingerprint", "build"):
            folder = os.path.join(profile, sub)
            if not os.path.isdir(folder):
                continue
            for entry in os.listdir(folder):
                m = HASHED.match(entry)
                if not m or m.group("hash") not in stale:
                    continue
                path = os.path.join(folder, entry)
                removed_bytes += size(path)
                if dry_run:
                    continue
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.remove(path)
                    except OSError:
                        pass
    if by_age:
        kept_units, kept_bytes = prune_compiled(os.path.join(target_dir, "starters", "compiled"), cutoff, dry_run)
        removed_units += kept_units
        removed_bytes += kept_bytes
    verb = "would remove" if dry_run else "removed"
    which = f"unused for {days} days" + (" or by the builds named" if keep is not None else "")
    print(f"prune-target: {verb} {removed_units} units {which}, "
          f"{removed_bytes / 2**30:.1f} GiB, from {target_dir}", file=sys.stderr)


def prune_compiled(folder, cutoff, dry_run):
    """The compile cache the CLI's starter matrix keeps in the target directory (capw's own:
    `<key>.cwasm` beside `<key>.sha256`, both read on every load): the entries no run has loaded
    since the cutoff. Returns how many entries went and their bytes."""
    if not os.path.isdir(folder):
        return 0, 0
    keys = {}
    for entry in os.listdir(folder):
        key = entry.split(".", 1)[0]
        keys.setdefault(key, []).append(os.path.join(folder, entry))
    units = removed = 0
    for paths in keys.values():
        if max(last_used(p) if os.path.isdir(p) else file_used(p) for p in paths) >= cutoff:
            continue
        units += 1
        for path in paths:
            removed += size(path)
            if not dry_run:
                try:
                    os.remove(path)
                except OSError:
                    pass
    return units, removed


def file_used(path):
    try:
        st = os.stat(path)
    except OSError:
        return 0.0
    return max(st.st_atime, st.st_mtime)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target_dir")
    parser.add_argument("--days", type=float, default=7)
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--in-use", action="append", metavar="CARGO_ARGS",
                        help="a cargo command (its arguments, as one string) whose units the debug profile keeps")
    args = parser.parse_args()
    if not os.path.isdir(args.target_dir):
        return
    if not args.in_use:
        prune(args.target_dir, args.days, args.dry_run)
        return
    keep = in_use(args.in_use)
    debug = os.path.join(args.target_dir, "debug")
    os.makedirs(debug, exist_ok=True)
    # Cargo's lock of the debug build (taken after the listing, whose cargo commands take it
    # too): no build of another checkout sharing this target directory reads a unit as it goes.
    with open(os.path.join(debug, ".cargo-lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        prune(args.target_dir, args.days, args.dry_run, keep)


if __name__ == "__main__":
    main()
