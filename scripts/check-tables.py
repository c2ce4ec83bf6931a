#!/usr/bin/env python3
"""Reads the tables back from the server after a create_new / resize_old round and checks them
against a policy stated here independently of the template (scripts/qemu-invoke.sh).

    check-tables.py --endpoint URL --prefix P --period day|hour --premake N
                    --partition NAME:TYPE [--sort NAME:TYPE] --hot R/W --warm R/W
                    --cold R/W|on_demand [--ttl ATTR]
                    --created RESULT... --resized RESULT

RESULT files are scripts/lambda-runtime-emulator.py results holding a RunReport. Checked:
  - the tables named PREFIX_* are exactly the current and the next N periods' of every
    create_new run (its report's "at"), none missing, none more, beside the family's ledger
    PREFIX_ledger (keyed by family and record, holding the runs' records);
  - each has the key schema and attribute types, is ACTIVE, and (with --ttl) has Time to Live
    on that attribute;
  - its capacity is its phase's as of the resize_old run: age 0 or less hot, 1 warm, 2 or more
    cold (R/W provisioned, or on-demand billing).
Period labels are UTC (the parameter sets use TimeZone=UTC). Uses boto3 (moto's venv has it).
"""

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone

import boto3

FORMATS = {"day": ("%Y-%m-%d", timedelta(days=1)), "hour": ("%Y-%m-%dT%H", timedelta(hours=1))}


def report_of(path):
    with open(path) as f:
        result = json.load(f)
    if result.get("kind") != "response":
        sys.exit(f"{path}: not a response: {result}")
    return result["body"]


def main():
    p = argparse.ArgumentParser()
    for flag in ("--endpoint", "--prefix", "--period", "--partition", "--hot", "--warm", "--cold", "--resized"):
        p.add_argument(flag, required=True)
    p.add_argument("--premake", type=int, required=True)
    p.add_argument("--sort")
    p.add_argument("--ttl")
    p.add_argument("--created", nargs="+", required=True)
    a = p.parse_args()
    fmt, step = FORMATS[a.period]

    def floor(t: datetime) -> datetime:
        t = t.astimezone(timezone.utc)
        return t.replace(minute=0, second=0, microsecond=0, **({"hour": 0} if a.period == "day" else {}))

    def at(report) -> datetime:
        return datetime.fromisoformat(report["at"].replace("Z", "+00:00"))

    def name(start: datetime) -> str:
        return f"{a.prefix}_{start.strftime(fmt)}"

    want = set()
    for path in a.created:
        start = floor(at(report_of(path)))
        want |= {name(start + k * step) for k in range(a.premake + 1)}
    now_period = floor(at(report_of(a.resized)))

    ddb = boto3.client("dynamodb", endpoint_url=a.endpoint, region_name="us-east-1",
                       aws_access_key_id="test", aws_secret_access_key="test")
    have = set()
    for page in ddb.get_paginator("list_tables").paginate():
        have |= {t for t in page["TableNames"] if t.startswith(a.prefix + "_")}
    errors = []
    # The family's ledger (the stack makes it; here, with no stack, the first run did): keyed
    # by family and record, holding the runs' records of this family.
    ledger = a.prefix + "_ledger"
    if ledger in have:
        have.discard(ledger)
        d = ddb.describe_table(TableName=ledger)["Table"]
        got = sorted((k["KeyType"], k["AttributeName"]) for k in d["KeySchema"])
        records = ddb.query(TableName=ledger, KeyConditionExpression="#f = :f",
                            ExpressionAttributeNames={"#f": "family"},
                            ExpressionAttributeValues={":f": {"S": a.prefix}})["Count"]
        print(f"  {ledger}: the family's ledger, {records} records")
        if got != [("HASH", "family"), ("RANGE", "record")]:
            errors.append(f"{ledger}: key schema {got}")
        if records == 0:
            errors.append(f"{ledger}: no records")
    else:
        errors.append(f"no ledger {ledger}")
    if have != want:
        errors.append(f"tables {sorted(have)}, expected {sorted(want)}")

    def capacity(spec):
        return None if spec == "on_demand" else tuple(int(x) for x in spec.split("/"))

    keys = [("HASH", *a.partition.split(":"))] + ([("RANGE", *a.sort.split(":"))] if a.sort else [])
    for table in sorted(have & want):
        d = ddb.describe_table(TableName=table)["Table"]
        age = round((now_period - datetime.strptime(table[len(a.prefix) + 1:], fmt).replace(tzinfo=timezone.utc)) / step)
        phase, spec = (0, a.hot) if age <= 0 else (1, a.warm) if age == 1 else (2, a.cold)
        got_keys = sorted((k["KeyType"], k["AttributeName"]) for k in d["KeySchema"])
        types = {x["AttributeName"]: x["AttributeType"] for x in d.get("AttributeDefinitions", [])}
        billing = d.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
        rw = (d["ProvisionedThroughput"]["ReadCapacityUnits"], d["ProvisionedThroughput"]["WriteCapacityUnits"])
        line = f"{table}: age {age}, phase {phase}, {d['TableStatus']}, {billing}"
        line += "" if billing == "PAY_PER_REQUEST" else f" {rw[0]}/{rw[1]}"
        problems = []
        if d["TableStatus"] != "ACTIVE":
            problems.append("not ACTIVE")
        if got_keys != sorted((t, n) for t, n, _ in keys):
            problems.append(f"key schema {got_keys}")
        for _, n, ty in keys:
            if types.get(n) != ty:
                problems.append(f"attribute {n} is {types.get(n)}, expected {ty}")
        want_cap = capacity(spec)
        if want_cap is None and billing != "PAY_PER_REQUEST":
            problems.append("expected on-demand billing")
        if want_cap is not None and (billing != "PROVISIONED" or rw != want_cap):
            problems.append(f"expected provisioned {want_cap[0]}/{want_cap[1]}")
        if a.ttl:
            ttl = ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]
            line += f", TTL {ttl.get('TimeToLiveStatus')} on {ttl.get('AttributeName')}"
            if ttl.get("TimeToLiveStatus") != "ENABLED" or ttl.get("AttributeName") != a.ttl:
                problems.append(f"expected TTL on {a.ttl}")
        print("  " + line + ("" if not problems else "  <- " + "; ".join(problems)))
        errors += [f"{table}: {x}" for x in problems]
    if errors:
        sys.exit("check-tables: " + "\n  ".join(errors))
    print(f"check-tables: {len(have)} tables of {a.prefix} as the policy says")


main()
