//! Just enough of IAM policy evaluation for the template's own statements: identity policies,
//! `Allow` and `Deny`, `Action` and `Resource` with `*` and `?` wildcards. No conditions,
//! `NotAction` or `NotResource`: the checks refuse statements that use them.

/// One policy statement, intrinsics resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub sid: Option<String>,
    pub effect: String,
    pub actions: Vec<String>,
    pub not_actions: Vec<String>,
    pub resources: Vec<String>,
    pub not_resources: Vec<String>,
    pub has_condition: bool,
}

impl Statement {
    /// A short name for messages.
    pub fn label(&self) -> String {
        self.sid
            .clone()
            .unwrap_or_else(|| format!("{} {:?}", self.effect, self.actions))
    }

    fn applies(&self, action: &str, resource: &str) -> bool {
        self.actions.iter().any(|p| action_matches(p, action))
            && self.resources.iter().any(|p| glob_match(p, resource))
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
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed(_))
    }
}

/// IAM's order for one identity policy set: an explicit Deny wins, then any Allow, else deny.
pub fn evaluate(statements: &[Statement], action: &str, resource: &str) -> Decision {
    if let Some(s) = statements
        .iter()
        .find(|s| s.effect == "Deny" && s.applies(action, resource))
    {
        return Decision::ExplicitDeny(s.label());
    }
    match statements
        .iter()
        .find(|s| s.effect == "Allow" && s.applies(action, resource))
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

/// `arn:aws:dynamodb:REGION:ACCOUNT:table/NAME` in the imagined stack's Region and account.
pub fn table_arn(table: &str) -> String {
    format!(
        "arn:{}:dynamodb:{}:{}:table/{table}",
        crate::template::PARTITION,
        crate::template::REGION,
        crate::template::ACCOUNT_ID
    )
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
            has_condition: false,
        }
    }

    #[test]
    fn deny_wins_then_allow_then_implicit_deny() {
        let allow = statement("Allow", &["dynamodb:*"], &["*"]);
        let deny = statement("Deny", &["dynamodb:DeleteTable"], &["*"]);
        let both = [allow.clone(), deny];
        assert!(evaluate(&both, "dynamodb:CreateTable", "x").is_allowed());
        assert!(matches!(
            evaluate(&both, "dynamodb:DeleteTable", "x"),
            Decision::ExplicitDeny(_)
        ));
        assert_eq!(evaluate(&[allow], "sqs:SendMessage", "x"), Decision::ImplicitDeny);
    }
}
