"""The demo's AWS side that is not ddb-rollover's (scripts/demo.sh runs it with moto's venv, which
has boto3), each against ENDPOINT with the environment's credentials and region:

  demo-aws.py setup ENDPOINT BUCKET STREAM     make the archive bucket and the one-shard change stream
  demo-aws.py write ENDPOINT TABLE DAY N       put N readings of sensor-1 (pk "sensor-1", sk DAY's
                                               times) into TABLE, as an application does
  demo-aws.py put ENDPOINT TABLE PK SK          one put, printing the error if it is refused
  demo-aws.py readings ENDPOINT TABLE          sensor-1's readings in TABLE, read back with a Query
  demo-aws.py records ENDPOINT STREAM N        the stream's first N records, one line each
"""

import json
import os
import sys

import boto3


def client(service, endpoint):
    return boto3.client(service, endpoint_url=endpoint, region_name=os.environ.get("AWS_REGION", "us-east-1"))


def setup(endpoint, bucket, stream):
    client("s3", endpoint).create_bucket(Bucket=bucket)
    kinesis = client("kinesis", endpoint)
    kinesis.create_stream(StreamName=stream, ShardCount=1)
    kinesis.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 1})
    print(f"s3://{bucket} and Kinesis stream {stream} made")


def write(endpoint, table, day, n):
    dynamodb = client("dynamodb", endpoint)
    for i in range(n):
        sk = f"{day}T{6 * i:02d}:00:00Z"
        dynamodb.put_item(
            TableName=table,
            Item={"pk": {"S": "sensor-1"}, "sk": {"S": sk}, "celsius": {"N": str(20 + i)}},
        )
    print(f"{n} readings of sensor-1 written to {table}")


def put(endpoint, table, pk, sk):
    dynamodb = client("dynamodb", endpoint)
    try:
        dynamodb.put_item(TableName=table, Item={"pk": {"S": pk}, "sk": {"S": sk}})
        print(f"PutItem {table}: written")
    except dynamodb.exceptions.ClientError as e:
        error = e.response["Error"]
        print(f"PutItem {table}: {error['Code']}: {error['Message']}")


def readings(endpoint, table):
    items = client("dynamodb", endpoint).query(
        TableName=table,
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "sensor-1"}},
        ConsistentRead=True,
    )["Items"]
    values = ", ".join(f"{i['sk']['S']} {i['celsius']['N']} C" for i in items if "celsius" in i)
    print(f"{len(items)} readings of sensor-1 in {table}: {values}")


def records(endpoint, stream, n):
    kinesis = client("kinesis", endpoint)
    shard = kinesis.list_shards(StreamName=stream)["Shards"][0]["ShardId"]
    iterator = kinesis.get_shard_iterator(
        StreamName=stream, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    for record in kinesis.get_records(ShardIterator=iterator, Limit=n)["Records"]:
        change = json.loads(record["Data"])
        keys = change["dynamodb"]["Keys"]
        image = change["dynamodb"].get("NewImage", {})
        print(
            f"{change['eventName']:<6}  {change['tableName']}"
            f"  pk={keys['pk']['S']} sk={keys['sk']['S']}  celsius={image.get('celsius', {}).get('N', '-')}"
        )


if __name__ == "__main__":
    command, endpoint, *rest = sys.argv[1:]
    if command == "setup":
        setup(endpoint, *rest)
    elif command == "write":
        write(endpoint, rest[0], rest[1], int(rest[2]))
    elif command == "put":
        put(endpoint, *rest)
    elif command == "readings":
        readings(endpoint, *rest)
    elif command == "records":
        records(endpoint, rest[0], int(rest[1]))
    else:
        sys.exit(f"demo-aws.py: unknown command {command!r}")
