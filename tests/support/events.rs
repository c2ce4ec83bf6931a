//! EventBridge events read back on moto: a queue subscribed to the default bus's
//! `ddb-rollover` events through a rule, and what reached it.

use ddb_rollover::aws::events::EVENT_SOURCE;
use ddb_rollover::aws::signed::{Service, SignedClient, EVENTBRIDGE};
use serde_json::{json, Value};

const SQS: Service = Service::json("sqs", "sqs", "SQS", "AmazonSQS", "application/x-amz-json-1.0");

/// A queue subscribed to every `ddb-rollover` event on the default bus; its URL.
pub async fn subscribe(signed: &SignedClient) -> String {
    let queue = signed
        .json(SQS, "CreateQueue", &json!({"QueueName": "rollover-events"}))
        .await
        .unwrap();
    let url = queue["QueueUrl"].as_str().unwrap().to_owned();
    let attributes = signed
        .json(
            SQS,
            "GetQueueAttributes",
            &json!({"QueueUrl": url, "AttributeNames": ["QueueArn"]}),
        )
        .await
        .unwrap();
    let arn = attributes["Attributes"]["QueueArn"].as_str().unwrap().to_owned();
    let pattern = json!({"source": [EVENT_SOURCE]}).to_string();
    signed
        .json(
            EVENTBRIDGE,
            "PutRule",
            &json!({"Name": "rollover", "EventPattern": pattern}),
        )
        .await
        .unwrap();
    signed
        .json(
            EVENTBRIDGE,
            "PutTargets",
            &json!({"Rule": "rollover", "Targets": [{"Id": "queue", "Arn": arn}]}),
        )
        .await
        .unwrap();
    url
}

/// Every event delivered to the queue so far: (detail type, table).
pub async fn received(signed: &SignedClient, url: &str) -> Vec<(String, String)> {
    let mut events = Vec::new();
    loop {
        let batch = signed
            .json(
                SQS,
                "ReceiveMessage",
                &json!({"QueueUrl": url, "MaxNumberOfMessages": 10}),
            )
            .await
            .unwrap();
        let messages = batch["Messages"].as_array().cloned().unwrap_or_default();
        if messages.is_empty() {
            return events;
        }
        for message in messages {
            let event: Value = serde_json::from_str(message["Body"].as_str().unwrap()).unwrap();
            assert_eq!(event["source"], EVENT_SOURCE, "{event}");
            events.push((
                event["detail-type"].as_str().unwrap().to_owned(),
                event["detail"]["table"].as_str().unwrap().to_owned(),
            ));
            signed
                .json(
                    SQS,
                    "DeleteMessage",
                    &json!({"QueueUrl": url, "ReceiptHandle": message["ReceiptHandle"]}),
                )
                .await
                .unwrap();
        }
    }
}
