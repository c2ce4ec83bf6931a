//! What a test sets on a [`super::Proxy`]: the faults it injects ([`Fault`]), which requests
//! get them ([`Rule`]), AWS's documented per-account rates and table quota, and the record of
//! what the proxy received ([`Call`]).

use std::time::Duration;

/// DynamoDB's documented per-account rates ([`super::Proxy::aws_rates`] sets these).
pub use aws_model::rates::AWS_RATES;

/// DynamoDB's default table quota per account and Region (adjustable in Service Quotas).
pub const DEFAULT_TABLE_QUOTA: usize = 2_500;

/// One request the proxy received, in arrival order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The operation from `X-Amz-Target` (`DescribeTable`), or `""` if the header is missing.
    pub operation: String,
    /// The body's `TableName`, else the table named by its `ResourceArn` or `TableArn`.
    pub table: Option<String>,
    /// [`Fault::label`] of the fault this request got (`"throttle"` from a rate limit).
    pub fault: Option<String>,
}

/// What happens to a request a [`Rule`] picks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Read the request, then close the connection without a response (FIN): the client
    /// cannot know whether the call was carried out.
    Drop,
    /// Read the request, then abort the connection with a TCP RST (`SO_LINGER` 0).
    Reset,
    /// A server-side failure with an AWS-shaped body: 500 is `InternalServerError`, any other
    /// code `ServiceUnavailable`. The request is not forwarded.
    Status(u16),
    /// HTTP 400 `ThrottlingException` "Rate exceeded": what DynamoDB's control plane answers
    /// when a per-account API rate is exceeded. The request is not forwarded.
    Throttle,
    /// Any AWS error (`LimitExceededException`, `ResourceNotFoundException`,
    /// `ValidationException`, ...) with this status and message. The request is not forwarded.
    Error {
        /// The HTTP status.
        status: u16,
        /// The error's `__type`.
        error_type: String,
        /// Its message.
        message: String,
    },
    /// Wait this long, then forward the request.
    Latency(Duration),
    /// Delete the request's table on the upstream first (and wait until it is gone), then
    /// forward the request: as if another run deleted the table between two of our calls.
    VanishBefore,
    /// HTTP 400 `LimitExceededException` "Subscriber limit exceeded: There is a limit of N
    /// tables per subscriber": what CreateTable gets when the account already has its quota of
    /// N tables. [`super::Proxy::table_quota`] answers with it; a rule may too. Not forwarded.
    TableQuota(usize),
}

impl Fault {
    /// The name recorded in [`Call::fault`]: `drop`, `reset`, `status 503`, `throttle`,
    /// `error LimitExceededException`, `latency 200ms`, `vanish` or `quota`.
    pub fn label(&self) -> String {
        match self {
            Fault::Drop => "drop".into(),
            Fault::Reset => "reset".into(),
            Fault::Status(code) => format!("status {code}"),
            Fault::Throttle => "throttle".into(),
            Fault::Error { error_type, .. } => format!("error {error_type}"),
            Fault::Latency(delay) => format!("latency {delay:?}"),
            Fault::VanishBefore => "vanish".into(),
            Fault::TableQuota(_) => "quota".into(),
        }
    }

    /// Whether the request is still forwarded (and so still subject to a rate limit).
    pub(super) fn forwards(&self) -> bool {
        matches!(self, Fault::Latency(_) | Fault::VanishBefore)
    }
}

/// Which requests get a fault.
///
/// A rule matches requests of its operation and table (`None`: any). It lets the first `skip`
/// matching requests through, counted from when it was added and whether or not an earlier rule
/// took them; then the next `times` matching requests that no earlier rule took get its fault,
/// and the rule is spent. Rules are checked in the order they were added.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The operation it applies to (`None`: any).
    pub operation: Option<String>,
    /// The table it applies to (`None`: any).
    pub table: Option<String>,
    /// How many matching requests it fails.
    pub times: usize,
    /// How many matching requests pass before it fails one.
    pub skip: usize,
}

impl Rule {
    /// Every request, once.
    pub fn any() -> Rule {
        Rule {
            operation: None,
            table: None,
            times: 1,
            skip: 0,
        }
    }

    /// Requests of `operation` (`"DescribeTable"`), once.
    pub fn op(operation: &str) -> Rule {
        Rule {
            operation: Some(operation.to_owned()),
            ..Rule::any()
        }
    }

    /// Only requests for table `name`.
    pub fn on_table(self, name: &str) -> Rule {
        Rule {
            table: Some(name.to_owned()),
            ..self
        }
    }

    /// Fault `n` matching requests instead of one.
    pub fn times(self, n: usize) -> Rule {
        Rule { times: n, ..self }
    }

    /// Fault every matching request, for as long as the rule is in place.
    pub fn always(self) -> Rule {
        self.times(usize::MAX)
    }

    /// Let the first `n` matching requests through first.
    pub fn skip(self, n: usize) -> Rule {
        Rule { skip: n, ..self }
    }

    pub(super) fn matches(&self, operation: &str, table: Option<&str>) -> bool {
        self.operation.as_deref().is_none_or(|op| op == operation)
            && self.table.as_deref().is_none_or(|t| Some(t) == table)
    }
}
