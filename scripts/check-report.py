#!/usr/bin/env python3
"""Checks one Lambda function's answer: a RunReport of the expected operation, nothing failed.

    check-report.py NAME OPERATION FILE [--emulated]

FILE holds the function's response (`cargo lambda invoke --output-format json`), or with
--emulated the result scripts/lambda-runtime-emulator.py wrote ({"kind": ..., "body": ...}),
whose kind must be "response". Prints the summary and one line per table; exits non-zero,
saying why, on anything else. Shared by scripts/local-invoke.sh and scripts/qemu-invoke.sh.
"""

import json
import sys

args = [a for a in sys.argv[1:] if a != "--emulated"]
if len(args) != 3:
    sys.exit(__doc__)
name, operation, path = args
with open(path) as f:
    text = f.read()
try:
    report = json.loads(text)
except ValueError:
    sys.exit(f"{name}: the response is not JSON: {text[:500]}")
if "--emulated" in sys.argv:
    if report.get("kind") != "response":
        sys.exit(f"{name}: no response; the Runtime API got {json.dumps(report, indent=1)[:3000]}")
    report = report["body"]
if not isinstance(report, dict) or "operation" not in report:
    sys.exit(f"{name}: the response is not a RunReport (no \"operation\"): {text[:500]}")
if report["operation"] != operation:
    sys.exit(f"{name}: operation {report['operation']!r}, expected {operation!r}")
failed = [t for t in report.get("tables", []) if t.get("outcome") == "failed"]
if failed or report.get("summary", {}).get("failed", 0) != 0:
    sys.exit(f"{name}: failed tables: {json.dumps(failed, indent=1)}")
s = report["summary"]
print(f"{name}: {report['operation']} at {report['at']}, current period {report['current_period']}: "
      f"{s['done']} done, {s['unchanged']} unchanged, {s['deferred']} deferred, {s['skipped']} skipped, "
      f"{s['failed']} failed")
for t in report.get("tables", []):
    print(f"  {t['table']}: {t['outcome']} - {t['reason']}")
