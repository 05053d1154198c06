#!/usr/bin/python3
"""Prints one closing line for meson test logs: 'N passed, N failed, N skipped'.

Before it, each test that failed: its name and result, and the lines of its
output that say what failed (TAP's "not ok", assertions, errors), so that
the end of a long log names them."""
import json
import re
import sys

WHAT_FAILED = re.compile(r"^(not ok|Bail out!)|ERROR|FAILED|Assertion|assertion failed|Traceback")

passed = failed = skipped = 0
failures = []
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            for line in f:
                record = json.loads(line)
                result = record.get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
                    said = [l for l in (record.get("stdout") or "").splitlines()
                            if WHAT_FAILED.search(l)]
                    failures.append((path, record.get("name"), result, said[-4:]))
    except FileNotFoundError:
        print(f"{path}: no test log", file=sys.stderr)
        failed += 1
for path, name, result, said in failures:
    print(f"failed: {name} ({result}) in {path}")
    for l in said:
        print(f"  {l[:300]}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
