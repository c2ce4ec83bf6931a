//! Just enough of IAM policy evaluation for the template's own statements: identity policies,
//! `Allow` and `Deny`, `Action` and `Resource` with `*` and `?` wildcards, and `Condition`
//! blocks with the operators `StringEquals`, `StringEqualsIfExists`, `StringLike` and `Null` on the keys
//! `aws:ResourceTag/KEY` (the target resource's tags), `aws:RequestTag/KEY` (the tags the
//! request writes) and the single-valued service keys of [`CONTEXT_KEYS`]. Any other operator
//! or key, `NotAction` or `NotResource` is refused: the template reader
//! ([`crate::role`]) reports it as an error rather than evaluating a statement it does not
//! understand.

use std::collections::BTreeMap;

/// Tags, key to value.
pub type Tags = BTreeMap<String, String>;

/// Tags from pairs: `tags(&[("ddb-rollover:family", "ts")])`.
pub fn tags(pairs: &[(&str, &str)]) -> Tags {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The condition operators this check evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// The key is present and its value equals one of the values (case-sensitive).
    StringEquals,
    /// The key is absent, or its value equals one of the values.
    StringEqualsIfExists,
    /// The key is present and its value matches one of the values, `*` and `?` wildcards as in
    /// resources ([`glob_match`]).
    StringLike,
    /// `"true"`: the key is absent; `"false"`: the key is present.
    Null,
}

impl Operator {
    /// The operator of a `Condition` block's key, or why it is not evaluated.
    pub fn parse(name: &str) -> Result<Operator, String> {
        match name {
            "StringEquals" => Ok(Operator::StringEquals),
            "StringEqualsIfExists" => Ok(Operator::StringEqualsIfExists),
            "StringLike" => Ok(Operator::StringLike),
            "Null" => Ok(Operator::Null),
            other => Err(format!(
                "condition operator {other:?} is not evaluated by this check (only StringEquals, \
                 StringEqualsIfExists, StringLike and Null are): extend aws_model::iam before using it"
            )),
        }
    }
}

/// The condition keys this check evaluates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConditionKey {
    /// `aws:ResourceTag/KEY`: the tag KEY of the resource the request acts on.
    ResourceTag(String),
    /// `aws:RequestTag/KEY`: the tag KEY the request writes (CreateTable's or TagResource's
    /// `Tags`).
    RequestTag(String),
    /// A service's key with one string value per request, one of [`CONTEXT_KEYS`], lowercased:
    /// the Application Auto Scaling statements' `application-autoscaling:service-namespace` and
    /// `iam:AWSServiceName`, the publishing statement's `events:source`, the archive listing's
    /// `s3:prefix`, the event source mapping statements' `lambda:FunctionArn`.
    Context(String),
}

/// The single-valued service condition keys this check evaluates ([`ConditionKey::Context`]),
/// lowercased (IAM condition key names are case-insensitive).
pub const CONTEXT_KEYS: [&str; 6] = [
    "application-autoscaling:service-namespace",
    "application-autoscaling:scalable-dimension",
    "iam:awsservicename",
    "events:source",
    "s3:prefix",
    // The function an event source mapping invokes: CreateEventSourceMapping's FunctionName
    // (as its ARN), and the mapping's function for UpdateEventSourceMapping and
    // DeleteEventSourceMapping (Service Authorization Reference, "Actions, resources, and
    // condition keys for AWS Lambda").
    "lambda:functionarn",
];

impl ConditionKey {
    /// IAM condition key names are case-insensitive: `AWS:resourcetag/K` is `aws:ResourceTag/K`.
    pub fn parse(name: &str) -> Result<ConditionKey, String> {
        let lower = name.to_ascii_lowercase();
        if CONTEXT_KEYS.contains(&lower.as_str()) {
            return Ok(ConditionKey::Context(lower));
        }
        let (prefix, tag) = name
            .split_once('/')
            .ok_or_else(|| format!("condition key {name:?} is not evaluated by this check"))?;
        match prefix.to_ascii_lowercase().as_str() {
            "aws:resourcetag" if !tag.is_empty() => Ok(ConditionKey::ResourceTag(tag.to_owned())),
            "aws:requesttag" if !tag.is_empty() => Ok(ConditionKey::RequestTag(tag.to_owned())),
            _ => Err(format!(
                "condition key {name:?} is not evaluated by this check (only aws:ResourceTag/KEY and \
                 aws:RequestTag/KEY are): extend aws_model::iam before using it"
            )),
        }
    }

    /// The key's value in `request`, if present. Tag keys are looked up case-insensitively, as
    /// IAM matches the key part of these condition keys.
    fn value<'r>(&self, request: &'r Request) -> Option<&'r str> {
        let (tags, key) = match self {
            ConditionKey::ResourceTag(k) => (&request.resource_tags, k),
            ConditionKey::RequestTag(k) => (&request.request_tags, k),
            ConditionKey::Context(k) => (&request.context, k),
        };
        tags.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str())
    }
}

/// One `Operator: {Key: values}` entry of a statement's `Condition` block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    /// How the values are compared.
    pub operator: Operator,
    /// The context key compared.
    pub key: ConditionKey,
    /// One or more values; the key matches if it matches any of them.
    pub values: Vec<String>,
}

impl Condition {
    /// A condition from the names and values of a policy; an error for anything this check
    /// cannot evaluate.
    pub fn parse(operator: &str, key: &str, values: Vec<String>) -> Result<Condition, String> {
        let operator = Operator::parse(operator)?;
        let key = ConditionKey::parse(key)?;
        if values.is_empty() {
            return Err(format!("condition {key:?}: no value"));
        }
        if operator == Operator::Null && values.iter().any(|v| v != "true" && v != "false") {
            return Err(format!(
                "condition Null {key:?}: values must be true or false, got {values:?}"
            ));
        }
        Ok(Condition {
            operator,
            key,
            values,
        })
    }

    /// Whether the condition holds for `request`.
    pub fn holds(&self, request: &Request) -> bool {
        let value = self.key.value(request);
        let equals = |v: &str| self.values.iter().any(|want| want == v);
        match (self.operator, value) {
            (Operator::StringEquals, Some(v)) => equals(v),
            (Operator::StringEquals, None) => false,
            (Operator::StringEqualsIfExists, Some(v)) => equals(v),
            (Operator::StringEqualsIfExists, None) => true,
            (Operator::StringLike, Some(v)) => self.values.iter().any(|want| glob_match(want, v)),
            (Operator::StringLike, None) => false,
            (Operator::Null, v) => self.values.iter().any(|want| (want == "true") == v.is_none()),
        }
    }
}

/// What IAM evaluates: the action, the resource, and the request context the template's
/// conditions read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// `dynamodb:UpdateTable`.
    pub action: String,
    /// The resource ARN, or `*`.
    pub resource: String,
    /// The tags the resource carries when the request is made: none for a resource that does
    /// not exist yet (CreateTable), nor for one whose type has no `aws:ResourceTag` key.
    pub resource_tags: Tags,
    /// The tags the request writes (CreateTable's `Tags`, TagResource's `Tags`).
    pub request_tags: Tags,
    /// Service condition keys ([`CONTEXT_KEYS`]) and their values in this request.
    pub context: Tags,
}

impl Request {
    /// `action` on `resource`, with no tags on either side.
    pub fn new(action: &str, resource: &str) -> Request {
        Request {
            action: action.to_owned(),
            resource: resource.to_owned(),
            ..Request::default()
        }
    }

    /// The request with the resource's tags (`aws:ResourceTag/...`).
    pub fn with_resource_tags(mut self, tags: Tags) -> Request {
        self.resource_tags = tags;
        self
    }

    /// The request with the tags it writes (`aws:RequestTag/...`).
    pub fn with_request_tags(mut self, tags: Tags) -> Request {
        self.request_tags = tags;
        self
    }

    /// A service condition key's value in the request (`iam:AWSServiceName`, ...).
    pub fn with_context(mut self, key: &str, value: &str) -> Request {
        self.context.insert(key.to_ascii_lowercase(), value.to_owned());
        self
    }
}

/// One policy statement, intrinsics resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    /// Its Sid, if any.
    pub sid: Option<String>,
    /// Allow or Deny.
    pub effect: String,
    /// `Action`'s patterns.
    pub actions: Vec<String>,
    /// `NotAction`'s patterns.
    pub not_actions: Vec<String>,
    /// `Resource`'s patterns.
    pub resources: Vec<String>,
    /// `NotResource`'s patterns.
    pub not_resources: Vec<String>,
    /// Every entry of the `Condition` block: all must hold for the statement to apply.
    pub conditions: Vec<Condition>,
}

impl Statement {
    /// A short name for messages.
    pub fn label(&self) -> String {
        self.sid
            .clone()
            .unwrap_or_else(|| format!("{} {:?}", self.effect, self.actions))
    }

    /// Whether the statement covers `request`: its action, its resource, and every condition
    /// (IAM ANDs the operators of a block and the keys under each; a key's values are ORed).
    pub fn applies(&self, request: &Request) -> bool {
        self.actions.iter().any(|p| action_matches(p, &request.action))
            && self.resources.iter().any(|p| glob_match(p, &request.resource))
            && self.conditions.iter().all(|c| c.holds(request))
    }
}

/// The outcome of evaluating a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by the statement with this label.
    Allowed(String),
    /// Denied by an explicit Deny with this label.
    ExplicitDeny(String),
    /// No statement allows it.
    ImplicitDeny,
}

impl Decision {
    /// Whether the request is allowed.
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed(_))
    }
}

/// IAM's order for one identity policy set: an explicit Deny wins, then any Allow, else deny.
pub fn evaluate(statements: &[Statement], request: &Request) -> Decision {
    if let Some(s) = statements
        .iter()
        .find(|s| s.effect == "Deny" && s.applies(request))
    {
        return Decision::ExplicitDeny(s.label());
    }
    match statements
        .iter()
        .find(|s| s.effect == "Allow" && s.applies(request))
    {
        Some(s) => Decision::Allowed(s.label()),
        None => Decision::ImplicitDeny,
    }
}

/// Actions: `service:Name`, case-insensitive, wildcards allowed.
pub fn action_matches(pattern: &str, action: &str) -> bool {
    glob_match(&pattern.to_ascii_lowercase(), &action.to_ascii_lowercase())
}

/// IAM's wildcard matching (case-sensitive, as for resource ARNs): `*` matches any run of
/// characters, `/` and `:` included, even an empty one; `?` matches exactly one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last `*` was, and how much text it has swallowed so far.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_like_iam() {
        assert!(glob_match("*", ""));
        assert!(glob_match("*", "arn:aws:dynamodb:us-east-1:1:table/x"));
        assert!(glob_match("table/ts_*", "table/ts_"));
        assert!(glob_match("table/ts_*", "table/ts_2018-10-25"));
        assert!(glob_match("table/ts_*", "table/ts_2018/index/x"));
        assert!(!glob_match("table/ts_*", "table/tsX_2018-10-25"));
        assert!(!glob_match("table/ts_*", "table/ts"));
        assert!(!glob_match("table/ts_*", "other/table/ts_1"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(glob_match("a*b*c", "abc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("*c", "abcbc"));
        assert!(!glob_match("Table/*", "table/x"), "resources are case-sensitive");
        assert!(action_matches("DynamoDB:describeTable", "dynamodb:DescribeTable"));
        assert!(action_matches("dynamodb:Describe*", "dynamodb:DescribeTable"));
        assert!(!action_matches("dynamodb:Describe*", "dynamodb:UpdateTable"));
    }

    fn statement(effect: &str, actions: &[&str], resources: &[&str]) -> Statement {
        Statement {
            sid: None,
            effect: effect.into(),
            actions: actions.iter().map(|s| s.to_string()).collect(),
            not_actions: vec![],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            not_resources: vec![],
            conditions: vec![],
        }
    }

    #[test]
    fn deny_wins_then_allow_then_implicit_deny() {
        let allow = statement("Allow", &["dynamodb:*"], &["*"]);
        let deny = statement("Deny", &["dynamodb:DeleteTable"], &["*"]);
        let both = [allow.clone(), deny];
        assert!(evaluate(&both, &Request::new("dynamodb:CreateTable", "x")).is_allowed());
        assert!(matches!(
            evaluate(&both, &Request::new("dynamodb:DeleteTable", "x")),
            Decision::ExplicitDeny(_)
        ));
        assert_eq!(
            evaluate(&[allow], &Request::new("sqs:SendMessage", "x")),
            Decision::ImplicitDeny
        );
    }

    fn condition(operator: &str, key: &str, values: &[&str]) -> Condition {
        Condition::parse(operator, key, values.iter().map(|v| v.to_string()).collect()).unwrap()
    }

    #[test]
    fn string_equals_needs_the_key_and_if_exists_passes_without_it() {
        let equals = condition("StringEquals", "aws:ResourceTag/team", &["a", "b"]);
        let if_exists = condition("StringEqualsIfExists", "aws:ResourceTag/team", &["a"]);
        let request = |t: &[(&str, &str)]| Request::new("x:Y", "r").with_resource_tags(tags(t));
        assert!(equals.holds(&request(&[("team", "a")])));
        assert!(equals.holds(&request(&[("team", "b")])), "values are ORed");
        assert!(!equals.holds(&request(&[("team", "c")])));
        assert!(
            !equals.holds(&request(&[("team", "A")])),
            "values are case-sensitive"
        );
        assert!(
            !equals.holds(&request(&[])),
            "StringEquals on an absent key is false"
        );
        assert!(!equals.holds(&request(&[("other", "a")])));
        assert!(
            if_exists.holds(&request(&[])),
            "IfExists on an absent key is true"
        );
        assert!(if_exists.holds(&request(&[("other", "x")])));
        assert!(if_exists.holds(&request(&[("team", "a")])));
        assert!(!if_exists.holds(&request(&[("team", "b")])));
        assert!(
            equals.holds(&request(&[("TEAM", "a")])),
            "tag keys match case-insensitively"
        );
    }

    #[test]
    fn resource_and_request_tags_are_separate_keys() {
        let resource = condition("StringEquals", "aws:ResourceTag/f", &["ts"]);
        let request_tag = condition("StringEquals", "AWS:requestTag/f", &["ts"]);
        let on_resource = Request::new("x:Y", "r").with_resource_tags(tags(&[("f", "ts")]));
        let in_request = Request::new("x:Y", "r").with_request_tags(tags(&[("f", "ts")]));
        assert!(resource.holds(&on_resource) && !resource.holds(&in_request));
        assert!(request_tag.holds(&in_request) && !request_tag.holds(&on_resource));
    }

    #[test]
    fn string_like_matches_wildcards_on_a_present_key() {
        let like = condition("StringLike", "s3:prefix", &["ddb-rollover/*"]);
        let with = |prefix: &str| Request::new("s3:ListBucket", "r").with_context("s3:prefix", prefix);
        assert!(like.holds(&with("ddb-rollover/")) && like.holds(&with("ddb-rollover/t/AWSDynamoDB/")));
        assert!(!like.holds(&with("ddb-rolloverX/")) && !like.holds(&with("")));
        assert!(
            !like.holds(&Request::new("s3:ListBucket", "r")),
            "an absent key matches nothing"
        );
    }

    #[test]
    fn lambda_function_arn_scopes_event_source_mappings_to_one_function() {
        const CONSUMER: &str = "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer";
        let mut s = statement(
            "Allow",
            &["lambda:DeleteEventSourceMapping"],
            &["arn:aws:lambda:us-east-1:123456789012:event-source-mapping:*"],
        );
        // Condition key names are case-insensitive, as the template spells it.
        s.conditions = vec![condition("StringEquals", "lambda:FunctionArn", &[CONSUMER])];
        let statements = [s];
        let delete = |function: Option<&str>| {
            let request = Request::new(
                "lambda:DeleteEventSourceMapping",
                "arn:aws:lambda:us-east-1:123456789012:event-source-mapping:6d9bce8e-836b-442c-8070-74e77903c815",
            );
            match function {
                Some(arn) => request.with_context("lambda:FunctionArn", arn),
                None => request,
            }
        };
        assert!(evaluate(&statements, &delete(Some(CONSUMER))).is_allowed());
        for other in [
            "arn:aws:lambda:us-east-1:123456789012:function:orders-consumer",
            "arn:aws:lambda:us-east-1:123456789012:function:ingest-consumer:live",
            "ingest-consumer",
        ] {
            assert_eq!(
                evaluate(&statements, &delete(Some(other))),
                Decision::ImplicitDeny,
                "{other}"
            );
        }
        assert_eq!(
            evaluate(&statements, &delete(None)),
            Decision::ImplicitDeny,
            "a request without the key"
        );
        assert_eq!(
            ConditionKey::parse("Lambda:functionArn"),
            Ok(ConditionKey::Context("lambda:functionarn".into()))
        );
    }

    #[test]
    fn the_function_a_mapping_invokes_is_a_request_key() {
        let arn = "arn:aws:lambda:us-east-1:123456789012:function:consumer";
        let equals = condition("StringEquals", "lambda:FunctionArn", &[arn]);
        let with = |function: &str| {
            Request::new("lambda:CreateEventSourceMapping", "*").with_context("lambda:FunctionArn", function)
        };
        assert!(equals.holds(&with(arn)));
        assert!(!equals.holds(&with("arn:aws:lambda:us-east-1:123456789012:function:other")));
        assert!(
            !equals.holds(&with(&arn.to_uppercase())),
            "StringEquals is case-sensitive"
        );
        assert!(
            !equals.holds(&Request::new("lambda:CreateEventSourceMapping", "*")),
            "an absent key matches nothing"
        );
    }

    #[test]
    fn null_tests_presence() {
        let absent = condition("Null", "aws:RequestTag/f", &["true"]);
        let present = condition("Null", "aws:RequestTag/f", &["false"]);
        let with = Request::new("x:Y", "r").with_request_tags(tags(&[("f", "")]));
        let without = Request::new("x:Y", "r");
        assert!(absent.holds(&without) && !absent.holds(&with));
        assert!(present.holds(&with) && !present.holds(&without));
        assert!(Condition::parse("Null", "aws:RequestTag/f", vec!["maybe".into()]).is_err());
    }

    #[test]
    fn unknown_operators_and_keys_are_refused() {
        for operator in [
            "StringNotLike",
            "StringNotEquals",
            "ForAllValues:StringEquals",
            "stringequals",
            "ArnLike",
        ] {
            let e = Condition::parse(operator, "aws:ResourceTag/f", vec!["x".into()]).unwrap_err();
            assert!(e.contains("not evaluated"), "{operator}: {e}");
        }
        for key in [
            "aws:TagKeys",
            "aws:SourceIp",
            "dynamodb:LeadingKeys",
            "aws:ResourceTag/",
        ] {
            let e = Condition::parse("StringEquals", key, vec!["x".into()]).unwrap_err();
            assert!(e.contains("not evaluated"), "{key}: {e}");
        }
        assert!(Condition::parse("StringEquals", "aws:ResourceTag/f", vec![]).is_err());
    }

    #[test]
    fn every_condition_of_a_statement_must_hold() {
        let mut s = statement("Allow", &["dynamodb:TagResource"], &["t"]);
        s.conditions = vec![
            condition("StringEqualsIfExists", "aws:ResourceTag/f", &["ts"]),
            condition("StringEqualsIfExists", "aws:RequestTag/f", &["ts"]),
        ];
        let request = |resource: &[(&str, &str)], req: &[(&str, &str)]| {
            Request::new("dynamodb:TagResource", "t")
                .with_resource_tags(tags(resource))
                .with_request_tags(tags(req))
        };
        let statements = [s];
        assert!(evaluate(&statements, &request(&[], &[])).is_allowed());
        assert!(evaluate(&statements, &request(&[("f", "ts")], &[("f", "ts")])).is_allowed());
        assert_eq!(
            evaluate(&statements, &request(&[("f", "ts_eu")], &[("f", "ts")])),
            Decision::ImplicitDeny
        );
        assert_eq!(
            evaluate(&statements, &request(&[("f", "ts")], &[("f", "other")])),
            Decision::ImplicitDeny
        );
        // A conditioned Deny denies only where its condition holds.
        let mut deny = statement("Deny", &["dynamodb:TagResource"], &["t"]);
        deny.conditions = vec![condition("Null", "aws:RequestTag/f", &["true"])];
        let allow = statement("Allow", &["dynamodb:TagResource"], &["t"]);
        let both = [allow, deny];
        assert!(matches!(
            evaluate(&both, &request(&[], &[])),
            Decision::ExplicitDeny(_)
        ));
        assert!(evaluate(&both, &request(&[], &[("f", "x")])).is_allowed());
    }
}
