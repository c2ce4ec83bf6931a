//! Condition functions: the template's `Conditions` (what `Fn::If` reads) and `Rules` (what
//! lets a stack be created), with `Fn::Equals`, `Fn::Not`, `Fn::And`, `Fn::Or` and
//! `Condition`.

use super::{intrinsic, Template, Value};

/// How deep conditions may name other conditions before the check calls it a cycle.
const MAX_CONDITION_DEPTH: usize = 32;

impl Template {
    /// Whether the named entry of `Rules` lets a stack with the current parameters be created:
    /// its `RuleCondition` (absent: always) is false, or every `Assertions[].Assert` holds.
    pub fn rule_holds(&self, name: &str) -> Result<bool, String> {
        let rule = self
            .root
            .get("Rules")
            .and_then(|r| r.get(name))
            .ok_or_else(|| format!("no rule {name} in Rules"))?;
        if let Some(condition) = rule.get("RuleCondition") {
            if !self.eval_condition(condition, 0)? {
                return Ok(true);
            }
        }
        let assertions = rule
            .get("Assertions")
            .and_then(Value::as_sequence)
            .ok_or_else(|| format!("rule {name}: no Assertions"))?;
        for assertion in assertions {
            let assert = assertion
                .get("Assert")
                .ok_or_else(|| format!("rule {name}: an assertion without Assert"))?;
            if !self.eval_condition(assert, 0)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether the named entry of `Conditions` holds for the current parameters.
    pub fn condition(&self, name: &str) -> Result<bool, String> {
        self.named_condition(name, 0)
    }

    fn named_condition(&self, name: &str, depth: usize) -> Result<bool, String> {
        // Conditions may name each other; CloudFormation refuses cycles, so must we.
        if depth > MAX_CONDITION_DEPTH {
            return Err(format!("condition {name}: nested too deep (a cycle?)"));
        }
        let body = self
            .root
            .get("Conditions")
            .and_then(|c| c.get(name))
            .ok_or_else(|| format!("no condition {name} in Conditions"))?;
        self.eval_condition(body, depth + 1)
            .map_err(|e| format!("condition {name}: {e}"))
    }

    /// A condition function: `Fn::Equals`, `Fn::Not`, `Fn::And`, `Fn::Or`, `Condition`.
    fn eval_condition(&self, value: &Value, depth: usize) -> Result<bool, String> {
        if let Some(name) = condition_reference(value) {
            return self.named_condition(name, depth);
        }
        let (function, arg) = intrinsic(value).ok_or_else(|| format!("not a condition: {value:?}"))?;
        let args = |n: Option<usize>| -> Result<&Vec<Value>, String> {
            match arg {
                Value::Sequence(items) if n.is_none_or(|n| items.len() == n) => Ok(items),
                _ => Err(format!("Fn::{function}: wrong arguments {arg:?}")),
            }
        };
        match function.as_str() {
            "Equals" => {
                let items = args(Some(2))?;
                Ok(self.resolve(&items[0])? == self.resolve(&items[1])?)
            }
            "Not" => Ok(!self.eval_condition(&args(Some(1))?[0], depth)?),
            "And" | "Or" => {
                let items = args(None)?;
                if !(2..=10).contains(&items.len()) {
                    return Err(format!("Fn::{function} takes 2 to 10 conditions"));
                }
                let values = items
                    .iter()
                    .map(|c| self.eval_condition(c, depth))
                    .collect::<Result<Vec<bool>, String>>()?;
                Ok(if function == "And" {
                    values.iter().all(|&b| b)
                } else {
                    values.iter().any(|&b| b)
                })
            }
            other => Err(format!("Fn::{other} is not a condition function")),
        }
    }

    /// The branch `Fn::If [Condition, then, else]` chooses.
    pub(super) fn if_branch<'v>(&self, arg: &'v Value) -> Result<&'v Value, String> {
        match arg {
            Value::Sequence(items) if items.len() == 3 => {
                let name = items[0]
                    .as_str()
                    .ok_or("Fn::If's first item must be a condition name")?;
                Ok(if self.condition(name)? {
                    &items[1]
                } else {
                    &items[2]
                })
            }
            _ => Err(format!("Fn::If needs [Condition, then, else], got {arg:?}")),
        }
    }
}

/// The name in `!Condition Name` or `{Condition: Name}` (how And / Or / Not refer to one).
fn condition_reference(value: &Value) -> Option<&str> {
    match value {
        Value::Tagged(t) if t.tag.to_string().trim_start_matches('!') == "Condition" => t.value.as_str(),
        Value::Mapping(m) if m.len() == 1 => m.get("Condition").and_then(Value::as_str),
        _ => None,
    }
}
