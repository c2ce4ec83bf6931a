"""The table to write to now, from the parameter ddb-rollover publishes after each create_new run.

    python current_table.py PREFIX [INSTANT]

Reads /ddb-rollover/PREFIX/tables (boto3, the usual credentials and Region) and prints the
table whose period [start, end) holds INSTANT (ISO 8601, default: now). A writer keeps the
parameter for a minute or so and reads it again; each entry's status is DynamoDB's (write to
ACTIVE tables only). Run by the tests against moto (tests/lambda/publish.rs).
"""

import json
import sys
from datetime import datetime, timezone

import boto3


def current_table(prefix, instant):
    ssm = boto3.client("ssm")
    value = ssm.get_parameter(Name=f"/ddb-rollover/{prefix}/tables")["Parameter"]["Value"]
    for table in json.loads(value)["tables"]:
        start = datetime.fromisoformat(table["start"])
        end = datetime.fromisoformat(table["end"])
        if start <= instant < end and table["status"] == "ACTIVE":
            return table["table"]
    raise LookupError(f"no ACTIVE table of {prefix} holds {instant.isoformat()}")


if __name__ == "__main__":
    prefix = sys.argv[1]
    if len(sys.argv) > 2:
        instant = datetime.fromisoformat(sys.argv[2].replace("Z", "+00:00"))
    else:
        instant = datetime.now(timezone.utc)
    print(current_table(prefix, instant))
