#!/usr/bin/env python3
"""Removes from a Cargo target directory the units no build has used for a while.

    scripts/prune-target.py TARGET_DIR [--days N] [--dry-run]

Cargo never removes an artifact: a changed dependency version, feature set or profile leaves the
old unit's files behind, and a kept target directory grows until the disk is full. Every build
reads the fingerprint of each unit it needs (`.fingerprint/<name>-<hash>/`), whether it compiles
it or finds it fresh, so the files' access times say when a unit was last part of a build (with
`relatime`, to within a day). A unit whose fingerprint nobody has read for N days (default 7)
goes, with everything of its hash: `deps/*-<hash>*`, `build/*-<hash>`, `.fingerprint/*-<hash>`,
in every profile directory (debug, release, the plugin target's). What is in use stays, so the
next build compiles nothing more than it would have. On a file system mounted `noatime` access
times say nothing, and nothing is removed.
"""
import argparse
import os
import re
import shutil
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


def prune(target_dir, days, dry_run):
    if "noatime" in mount_options(target_dir):
        print(f"prune-target: {target_dir} is on a file system mounted noatime; nothing removed",
              file=sys.stderr)
        return
    cutoff = time.time() - days * 86400
    removed_bytes = removed_units = 0
    for profile in profile_dirs(target_dir):
        fingerprints = os.path.join(profile, ".fingerprint")
        stale = set()
        for entry in os.listdir(fingerprints):
            m = HASHED.match(entry)
            if m and last_used(os.path.join(fingerprints, entry)) < cutoff:
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
    verb = "would remove" if dry_run else "removed"
    print(f"prune-target: {verb} {removed_units} units unused for {days} days, "
          f"{removed_bytes / 2**30:.1f} GiB, from {target_dir}", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target_dir")
    parser.add_argument("--days", type=float, default=7)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    if os.path.isdir(args.target_dir):
        prune(args.target_dir, args.days, args.dry_run)


if __name__ == "__main__":
    main()
