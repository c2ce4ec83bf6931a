//! DynamoDB's Kinesis Data Streams destinations as a state machine (DynamoDB API Reference:
//! EnableKinesisStreamingDestination, DescribeKinesisStreamingDestination,
//! DisableKinesisStreamingDestination, UpdateKinesisStreamingDestination; Developer Guide,
//! "Using Kinesis Data Streams to capture changes to DynamoDB"):
//!
//! - a table streams to one Kinesis data stream: Enable is refused while any of its
//!   destinations [holds](Status::holds) the table (anything but DISABLED or ENABLE_FAILED), to
//!   the same stream or another, with the ValidationException AWS answers ([`NOT_ENABLEABLE`],
//!   its wording as users quote it: aws-cloudformation/cloudformation-coverage-roadmap#707);
//!   the new destination is ENABLING;
//! - Disable and Update need an ACTIVE destination to that stream ([`not_active`]; AWS's own
//!   wording is not documented, so it reads like Enable's): DISABLING and UPDATING;
//! - each transition ends ([`Status::settled`]): ENABLING in ACTIVE when the stream exists,
//!   else ENABLE_FAILED ([`enable_failed`] says why); DISABLING in DISABLED; UPDATING in
//!   ACTIVE.
//!
//! fake-aws ends a transition after a delay of its fake time, testkit's proxy after a number
//! of Describe answers; both decide what is allowed and where it ends with these rules.

/// A destination's `DestinationStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Enabling: no records flow yet.
    Enabling,
    /// Records flow into the stream.
    Active,
    /// Disabling: records stop.
    Disabling,
    /// Disabled: another destination may be enabled.
    Disabled,
    /// Enabling failed (the stream is missing or DynamoDB cannot access it).
    EnableFailed,
    /// Its precision is being updated: records still flow.
    Updating,
}

impl Status {
    /// The status as the API spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Enabling => "ENABLING",
            Status::Active => "ACTIVE",
            Status::Disabling => "DISABLING",
            Status::Disabled => "DISABLED",
            Status::EnableFailed => "ENABLE_FAILED",
            Status::Updating => "UPDATING",
        }
    }

    /// Whether a destination in this status holds the table (no other may be enabled).
    pub fn holds(self) -> bool {
        !matches!(self, Status::Disabled | Status::EnableFailed)
    }

    /// Whether the table's item changes flow into the stream in this status.
    pub fn streams(self) -> bool {
        matches!(self, Status::Active | Status::Updating)
    }

    /// Where the transition in progress ends: ENABLING in ACTIVE if the stream `exists` then
    /// (else ENABLE_FAILED), DISABLING in DISABLED, UPDATING in ACTIVE; the others stay.
    pub fn settled(self, exists: bool) -> Status {
        match self {
            Status::Enabling if exists => Status::Active,
            Status::Enabling => Status::EnableFailed,
            Status::Disabling => Status::Disabled,
            Status::Updating => Status::Active,
            other => other,
        }
    }
}

/// The start of the ValidationException EnableKinesisStreamingDestination answers while the
/// table holds a destination.
pub const NOT_ENABLEABLE: &str = "Table is not in a valid state to enable Kinesis Streaming Destination";

/// Whether a table whose destinations have `statuses` may enable another: `Err` is AWS's
/// refusal (the ValidationException's message), naming the destination that holds the table.
pub fn may_enable<'a>(destinations: impl IntoIterator<Item = (&'a str, Status)>) -> Result<(), String> {
    match destinations.into_iter().find(|(_, status)| status.holds()) {
        None => Ok(()),
        Some((stream_arn, status)) => Err(format!(
            "{NOT_ENABLEABLE}: EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation (the table's destination {stream_arn} is {})",
            status.as_str()
        )),
    }
}

/// Whether `operation` (Disable or Update, `verb` "disable" or "update") may change the
/// table's destination to `stream_arn`, whose status is `status` (`None`: the table has none
/// to that stream): `Err` is the ValidationException's message.
pub fn needs_active(
    operation: &str,
    verb: &str,
    stream_arn: &str,
    status: Option<Status>,
) -> Result<(), String> {
    match status {
        Some(Status::Active) => Ok(()),
        other => Err(not_active(
            operation,
            verb,
            &format!(
                "the destination {stream_arn} is {}",
                other.map_or("not on the table", Status::as_str)
            ),
        )),
    }
}

/// The refusal of `operation` (`verb`: "disable", "update") on a destination that is not
/// ACTIVE, with `detail` in parentheses.
pub fn not_active(operation: &str, verb: &str, detail: &str) -> String {
    format!(
        "Table is not in a valid state to {verb} Kinesis Streaming Destination: {operation} must be ACTIVE to perform {} operation ({detail})",
        verb.to_uppercase()
    )
}

/// DestinationStatusDescription of an enable that failed because the stream `stream_arn` is
/// missing; `lookup` is how the stream was looked up and what it answered, when known.
pub fn enable_failed(stream_arn: &str, lookup: Option<&str>) -> String {
    let why = format!("Kinesis data stream {stream_arn} does not exist or DynamoDB cannot access it");
    match lookup {
        None => why,
        Some(lookup) => format!("{why} ({lookup})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Status; 6] = [
        Status::Enabling,
        Status::Active,
        Status::Disabling,
        Status::Disabled,
        Status::EnableFailed,
        Status::Updating,
    ];

    #[test]
    fn one_destination_holds_a_table_until_disabled_or_failed() {
        assert_eq!(may_enable([]), Ok(()));
        assert_eq!(
            may_enable([("a", Status::Disabled), ("b", Status::EnableFailed)]),
            Ok(())
        );
        for held in [
            Status::Enabling,
            Status::Active,
            Status::Disabling,
            Status::Updating,
        ] {
            let why = may_enable([("a", Status::Disabled), ("b", held)]).unwrap_err();
            assert!(why.starts_with(NOT_ENABLEABLE), "{why}");
            assert!(why.contains(&format!("b is {}", held.as_str())), "{why}");
        }
    }

    #[test]
    fn transitions_end_where_aws_ends_them() {
        let ends: Vec<(Status, Status, Status)> = ALL
            .iter()
            .map(|s| (*s, s.settled(true), s.settled(false)))
            .collect();
        assert_eq!(
            ends,
            [
                (Status::Enabling, Status::Active, Status::EnableFailed),
                (Status::Active, Status::Active, Status::Active),
                (Status::Disabling, Status::Disabled, Status::Disabled),
                (Status::Disabled, Status::Disabled, Status::Disabled),
                (Status::EnableFailed, Status::EnableFailed, Status::EnableFailed),
                (Status::Updating, Status::Active, Status::Active),
            ]
        );
        let streaming: Vec<Status> = ALL.into_iter().filter(|s| s.streams()).collect();
        assert_eq!(streaming, [Status::Active, Status::Updating]);
    }

    #[test]
    fn disable_and_update_need_an_active_destination() {
        let op = "DisableKinesisStreamingDestination";
        assert_eq!(needs_active(op, "disable", "s", Some(Status::Active)), Ok(()));
        let why = needs_active(op, "disable", "s", Some(Status::Enabling)).unwrap_err();
        assert!(
            why.contains("must be ACTIVE to perform DISABLE operation (the destination s is ENABLING)"),
            "{why}"
        );
        let why = needs_active(op, "disable", "s", None).unwrap_err();
        assert!(why.ends_with("(the destination s is not on the table)"), "{why}");
    }
}
