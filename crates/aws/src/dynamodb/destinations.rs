//! Kinesis data stream destinations on the SDK: DescribeKinesisStreamingDestination's answer
//! as [`ObservedDestination`]s, and EnableKinesisStreamingDestination's request.

use aws_sdk_dynamodb::types::{
    ApproximateCreationDateTimePrecision, EnableKinesisStreamingConfiguration, KinesisDataStreamDestination,
};

use ddb_rollover::policy::Precision;
use ddb_rollover::table::{DestinationStatus, ObservedDestination};

/// One destination as the API describes it.
pub(super) fn observed_destination(destination: &KinesisDataStreamDestination) -> ObservedDestination {
    ObservedDestination {
        stream_arn: destination.stream_arn().unwrap_or_default().to_string(),
        status: DestinationStatus::from_wire(
            destination
                .destination_status()
                .map_or("UNKNOWN", |status| status.as_str()),
        ),
        description: destination
            .destination_status_description()
            .filter(|text| !text.is_empty())
            .map(str::to_string),
        precision: destination
            .approximate_creation_date_time_precision()
            .and_then(|precision| Precision::from_wire(precision.as_str())),
    }
}

/// The request's configuration: the records' creation-time precision.
pub(super) fn enable_configuration(precision: Precision) -> EnableKinesisStreamingConfiguration {
    EnableKinesisStreamingConfiguration::builder()
        .approximate_creation_date_time_precision(ApproximateCreationDateTimePrecision::from(
            precision.as_wire(),
        ))
        .build()
}
