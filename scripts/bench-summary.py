#!/usr/bin/env python3
"""Print the medians of the last criterion run, each variant's ratio to native, and each webhook
variant's ratio to the fresh-instance call."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
groups = {}
for est in sorted(root.glob("*/*/new/estimates.json")):
    group, bench = est.parts[-4], est.parts[-3]
    median_ns = json.loads(est.read_text())["median"]["point_estimate"]
    groups.setdefault(group, {})[bench] = median_ns

for group, benches in sorted(groups.items()):
    native = benches.get("native")
    fresh = benches.get("fresh-instance")
    print(group)
    for bench, ns in sorted(benches.items()):
        ratio = f"  ({ns / native:.1f}x native)" if native and bench != "native" else ""
        if fresh and bench.startswith("webhook"):
            ratio += f"  ({ns / fresh:.1f}x fresh-instance)"
        print(f"  {bench:16} median {ns / 1000:8.2f} us{ratio}")
