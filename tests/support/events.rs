//! EventBridge events read back on moto: a queue subscribed to the default bus's
//! `ddb-rollover` events through a rule, and what reached it.

use ddb_rollover_aws::events::EVENT_SOURCE;
use serde_json::{json, Value};

/// The SQS queue the rule delivers to, and its URL.
pub(crate) struct Queue {
    sqs: aws_sdk_sqs::Client,
    url: String,
}

/// A queue subscribed to every `ddb-rollover` event on the default bus at `endpoint`.
pub(crate) async fn subscribe(endpoint: &str) -> Queue {
    let config = crate::support::sdk_config(endpoint).await;
    let sqs = aws_sdk_sqs::Client::new(&config);
    let events = aws_sdk_eventbridge::Client::new(&config);
    let url = sqs
        .create_queue()
        .queue_name("rollover-events")
        .send()
        .await
        .unwrap()
        .queue_url()
        .unwrap()
        .to_owned();
    let attributes = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await
        .unwrap();
    let arn = attributes
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
        .unwrap()
        .clone();
    events
        .put_rule()
        .name("rollover")
        .event_pattern(json!({"source": [EVENT_SOURCE]}).to_string())
        .send()
        .await
        .unwrap();
    events
        .put_targets()
        .rule("rollover")
        .targets(
            aws_sdk_eventbridge::types::Target::builder()
                .id("queue")
                .arn(arn)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    Queue { sqs, url }
}

/// Every event delivered to the queue so far: (detail type, table).
pub(crate) async fn received(queue: &Queue) -> Vec<(String, String)> {
    let mut events = Vec::new();
    loop {
        let batch = queue
            .sqs
            .receive_message()
            .queue_url(&queue.url)
            .max_number_of_messages(10)
            .send()
            .await
            .unwrap();
        if batch.messages().is_empty() {
            return events;
        }
        for message in batch.messages() {
            let event: Value = serde_json::from_str(message.body().unwrap()).unwrap();
            assert_eq!(event["source"], EVENT_SOURCE, "{event}");
            events.push((
                event["detail-type"].as_str().unwrap().to_owned(),
                event["detail"]["table"].as_str().unwrap().to_owned(),
            ));
            queue
                .sqs
                .delete_message()
                .queue_url(&queue.url)
                .receipt_handle(message.receipt_handle().unwrap())
                .send()
                .await
                .unwrap();
        }
    }
}
