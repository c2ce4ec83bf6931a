"""The AWS blog's Python "DailyResize" Lambda, as a baseline for scripts/bench.sh.

A copy written for the benchmark, after the blog's function (one DynamoDB table per day):
`create_new` creates the next day's table `{prefix}_{date}` with 300 RCU / 1000 WCU;
`resize_old` sets yesterday's table to 100 RCU / 1 WCU and the day before's to 1 / 1. Nothing
is read first, nothing is checked: the blog's function does just these calls.

The Lambda handlers take `datetime.date.today()`; for a simulated clock the bench passes the
instant, as ddb-rollover's `--at`:

    python daily_resize.py create_new 2018-10-25T23:45:00Z
    python daily_resize.py resize_old 2018-10-26T00:15:00Z

The endpoint, region and credentials come from the environment (AWS_ENDPOINT_URL, AWS_REGION,
...), as for any boto3 client. TABLE_PREFIX defaults to the blog's "timeseries".
"""

import datetime
import os
import sys

import boto3

PREFIX = os.environ.get("TABLE_PREFIX", "timeseries")

dynamodb = boto3.client("dynamodb")


def table_name(day):
    return "{}_{}".format(PREFIX, day.isoformat())


def create_new(today):
    """Creates tomorrow's table with the write-heavy capacity."""
    tomorrow = today + datetime.timedelta(days=1)
    dynamodb.create_table(
        TableName=table_name(tomorrow),
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "N"},
            {"AttributeName": "sk", "AttributeType": "N"},
        ],
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        ProvisionedThroughput={"ReadCapacityUnits": 300, "WriteCapacityUnits": 1000},
    )


def resize_old(today):
    """Dials yesterday's table down to reads only, and the day before's to the minimum."""
    yesterday = today - datetime.timedelta(days=1)
    dynamodb.update_table(
        TableName=table_name(yesterday),
        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 1},
    )
    day_before = today - datetime.timedelta(days=2)
    dynamodb.update_table(
        TableName=table_name(day_before),
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
    )


def main(argv):
    if len(argv) != 3 or argv[1] not in ("create_new", "resize_old"):
        sys.exit("usage: daily_resize.py create_new|resize_old RFC3339-INSTANT")
    instant = datetime.datetime.fromisoformat(argv[2].replace("Z", "+00:00"))
    today = instant.astimezone(datetime.timezone.utc).date()
    {"create_new": create_new, "resize_old": resize_old}[argv[1]](today)


if __name__ == "__main__":
    main(sys.argv)
