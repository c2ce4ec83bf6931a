//! `[rates]`: how fast a run may call the DynamoDB APIs that AWS rate-limits per account.
//!
//! From the DynamoDB API Reference: "You can call ListTagsOfResource up to 10 times per
//! second, per account", and TagResource and UntagResource "up to five times per second, per
//! account". Every stack and script of the account shares those, so a policy may only lower
//! them.

use serde::{Deserialize, Serialize};

/// AWS's per-account rates: ListTagsOfResource.
pub(crate) const MAX_LIST_TAGS_PER_SECOND: u32 = 10;
/// AWS's per-account rates: TagResource and UntagResource together.
pub(crate) const MAX_TAG_WRITES_PER_SECOND: u32 = 5;

/// The validated `[rates]` section: calls per second, 1 up to AWS's rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Rates {
    /// ListTagsOfResource calls per second.
    pub list_tags_of_resource: u32,
    /// TagResource and UntagResource calls per second, together.
    pub tag_resource: u32,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            list_tags_of_resource: MAX_LIST_TAGS_PER_SECOND,
            tag_resource: MAX_TAG_WRITES_PER_SECOND,
        }
    }
}

/// The `[rates]` section as written.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatesDocument {
    /// ListTagsOfResource calls per second, 1 to 10; default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_tags_of_resource: Option<i64>,
    /// TagResource and UntagResource calls per second together, 1 to 5; default 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag_resource: Option<i64>,
}

impl RatesDocument {
    /// The rates, or every problem as (field, what to change).
    pub fn validate(&self) -> Result<Rates, Vec<(&'static str, String)>> {
        let mut problems = Vec::new();
        let mut rate = |field: &'static str, value: Option<i64>, max: u32| match value {
            None => max,
            Some(v) if (1..=i64::from(max)).contains(&v) => v as u32,
            Some(v) => {
                problems.push((
                    field,
                    format!("{v} calls per second is out of range: use 1 to {max} (AWS's per-account rate)"),
                ));
                max
            }
        };
        let rates = Rates {
            list_tags_of_resource: rate(
                "list_tags_of_resource",
                self.list_tags_of_resource,
                MAX_LIST_TAGS_PER_SECOND,
            ),
            tag_resource: rate("tag_resource", self.tag_resource, MAX_TAG_WRITES_PER_SECOND),
        };
        if problems.is_empty() {
            Ok(rates)
        } else {
            Err(problems)
        }
    }
}

impl Rates {
    /// The document that validates to these rates; `None` for AWS's own, so the policy
    /// document (and its hash) of a policy without `[rates]` stays as it was.
    pub fn to_document(self) -> Option<RatesDocument> {
        (self != Rates::default()).then(|| RatesDocument {
            list_tags_of_resource: Some(i64::from(self.list_tags_of_resource)),
            tag_resource: Some(i64::from(self.tag_resource)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_awss_rates_and_may_only_be_lowered() {
        assert_eq!(RatesDocument::default().validate(), Ok(Rates::default()));
        let lowered = RatesDocument {
            list_tags_of_resource: Some(4),
            tag_resource: Some(1),
        };
        assert_eq!(
            lowered.validate(),
            Ok(Rates {
                list_tags_of_resource: 4,
                tag_resource: 1
            })
        );
        let problems = RatesDocument {
            list_tags_of_resource: Some(11),
            tag_resource: Some(0),
        }
        .validate()
        .unwrap_err();
        let fields: Vec<&str> = problems.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["list_tags_of_resource", "tag_resource"]);
        assert!(problems[0].1.contains("1 to 10"), "{}", problems[0].1);
        assert_eq!(Rates::default().to_document(), None);
    }
}
