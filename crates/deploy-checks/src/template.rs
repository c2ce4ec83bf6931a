//! `template.yaml` as the checks need it: parameters, functions, schedules and roles, with the
//! intrinsic functions resolved the way CloudFormation would for a stack deployed with the
//! parameters' defaults (or [`Template::set_parameter`] overrides) in [`REGION`] of account
//! [`ACCOUNT_ID`].
//!
//! Supported: `Ref`, `Fn::GetAtt`, `Fn::Sub` (with a variable map), `Fn::FindInMap`,
//! `Fn::ToJsonString` (AWS::LanguageExtensions), `Conditions` and `Rules` with `Fn::Equals` /
//! `Fn::Not` / `Fn::And` / `Fn::Or` / `Condition`, `Fn::If`, and `AWS::NoValue` (a list item or
//! mapping entry that resolves to it is dropped, as CloudFormation drops it). Optional parts of
//! the template are written that way, so the checks must see exactly what a stack with given
//! parameters would get.
//!
//! IAM statements keep their `Condition` blocks, parsed into [`crate::iam::Condition`]s: an
//! operator or key the evaluation does not implement makes [`Template::role_statements`] fail.
//!
//! YAML: `yaml_serde` keeps CloudFormation's short-form tags (`!Sub`, `!Ref`, `!GetAtt`) as
//! `Value::Tagged`, which a plain YAML reader would reject or drop.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ddb_rollover::{Operation, Policy};
use ddb_rollover_lambda::grants::Grants;
use ddb_rollover_lambda::stack::StackParameters;
use ddb_rollover_lambda::InitError;
use yaml_serde::{Mapping, Value};

use crate::iam::{Condition, Statement};

/// Pseudo parameters of the imagined stack.
pub const REGION: &str = "us-east-1";
pub const ACCOUNT_ID: &str = "123456789012";
pub const PARTITION: &str = "aws";
pub const STACK_NAME: &str = "ddb-rollover";

/// What EventBridge Scheduler replaces with the schedule's own invocation time.
pub const SCHEDULED_TIME_PLACEHOLDER: &str = "<aws.scheduler.scheduled-time>";

/// `template.yaml` at the repository root.
pub fn template_path() -> PathBuf {
    testkit::repo_root().join("template.yaml")
}

/// `samconfig.toml` at the repository root.
pub fn samconfig_path() -> PathBuf {
    testkit::repo_root().join("samconfig.toml")
}

/// A parsed template and the values its `!Ref`s and `${}`s resolve to.
#[derive(Debug)]
pub struct Template {
    root: Mapping,
    /// Parameters (their defaults, or overrides) and pseudo parameters.
    vars: BTreeMap<String, String>,
}

/// One `AWS::Serverless::Function`.
#[derive(Clone, Debug)]
pub struct Function {
    pub logical_id: String,
    /// The cargo binary `sam build` packages: `Metadata.BuildProperties.Binary`, or else the
    /// package's at `CodeUri` (its name).
    pub binary: String,
    pub code_uri: String,
    /// Logical id of the `AWS::IAM::Role` named by `Role: !GetAtt X.Arn`, if any.
    pub role: Option<String>,
    /// `Globals.Function.Environment` merged with the function's own, resolved.
    pub environment: BTreeMap<String, String>,
    pub schedules: Vec<Schedule>,
}

/// One `ScheduleV2` event of a function.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub event: String,
    pub expression: String,
    pub timezone: Option<String>,
    /// The `Input` string as Scheduler gets it, placeholders not yet substituted.
    pub input: String,
    /// Whether Scheduler runs it: `State` ENABLED, its default when absent.
    pub enabled: bool,
}

impl Function {
    /// The operation the function's binary serves: `create-new` is `create_new`.
    pub fn operation(&self) -> Option<Operation> {
        [Operation::CreateNew, Operation::ResizeOld]
            .into_iter()
            .find(|op| op.as_str().replace('_', "-") == self.binary)
    }

    /// The policy the function builds at its cold start from this environment: the same
    /// code ([`ddb_rollover_lambda::policy_from_variables`]), so `ROLLOVER_POLICY` (the
    /// `PolicyOverride`) or the stack's parameters, one variable each.
    pub fn policy(&self) -> Result<Policy, InitError> {
        ddb_rollover_lambda::policy_from_variables(|name| self.environment.get(name).cloned())
    }

    /// What the function's cold start takes its role to be granted (`None`: no stack
    /// parameters in the environment, nothing is checked).
    pub fn grants(&self) -> Option<Grants> {
        StackParameters::from_lookup(|name| self.environment.get(name).cloned()).map(|stack| stack.grants())
    }
}

/// The environment variables template.yaml gives one function (its logical id, e.g.
/// `CreateNewFunction`, or its binary, `create-new`) for a stack with these parameters (the
/// rest at their defaults): what a release check runs a bootstrap with.
pub fn function_environment(
    parameters: &[(&str, &str)],
    function: &str,
) -> Result<BTreeMap<String, String>, String> {
    let mut template = Template::parse(
        &std::fs::read_to_string(template_path())
            .map_err(|e| format!("read {}: {e}", template_path().display()))?,
    )?;
    for (name, value) in parameters {
        if !template.section("Parameters").iter().any(|(n, _)| n == name) {
            return Err(format!("no parameter {name} in the template"));
        }
        template.set_parameter(name, value);
    }
    template
        .functions()?
        .into_iter()
        .find(|f| f.logical_id == function || f.binary == function)
        .map(|f| f.environment)
        .ok_or_else(|| format!("no function {function} in the template"))
}

impl Template {
    /// Reads and parses `template.yaml`, with the parameters' defaults. Panics with the reason.
    pub fn load() -> Template {
        let path = template_path();
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        Template::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Template, String> {
        let root = match yaml_serde::from_str::<Value>(text).map_err(|e| format!("not YAML: {e}"))? {
            Value::Mapping(m) => m,
            _ => return Err("the template is not a mapping".into()),
        };
        let mut template = Template {
            root,
            vars: BTreeMap::new(),
        };
        let defaults = template.parameter_defaults()?;
        template.vars = defaults;
        for (k, v) in [
            ("AWS::Region", REGION),
            ("AWS::AccountId", ACCOUNT_ID),
            ("AWS::Partition", PARTITION),
            ("AWS::StackName", STACK_NAME),
            ("AWS::URLSuffix", "amazonaws.com"),
        ] {
            template.vars.insert(k.into(), v.into());
        }
        Ok(template)
    }

    /// `Parameters.*.Default`, as strings. A parameter without a default is an error: the
    /// checks need a value for every `!Ref`.
    pub fn parameter_defaults(&self) -> Result<BTreeMap<String, String>, String> {
        let mut out = BTreeMap::new();
        for (name, param) in self.section("Parameters") {
            let default = param
                .get("Default")
                .ok_or_else(|| format!("parameter {name} has no Default"))?;
            out.insert(
                name.clone(),
                scalar(default).ok_or_else(|| format!("parameter {name}: Default is not a scalar"))?,
            );
        }
        Ok(out)
    }

    /// Overrides a parameter (as `sam deploy --parameter-overrides` would).
    pub fn set_parameter(&mut self, name: &str, value: &str) {
        assert!(
            self.section("Parameters").iter().any(|(n, _)| n == name),
            "no parameter {name} in the template"
        );
        self.vars.insert(name.into(), value.into());
    }

    /// The `Transform` declaration's macros, in the order CloudFormation runs them.
    pub fn transforms(&self) -> Vec<String> {
        match self.root.get("Transform") {
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Sequence(many)) => many.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    }

    /// A top-level section (`Parameters`, `Resources`, `Outputs`) as (logical id, body) pairs.
    pub fn section(&self, name: &str) -> Vec<(String, &Value)> {
        match self.root.get(name) {
            Some(Value::Mapping(m)) => m
                .iter()
                .filter_map(|(k, v)| k.as_str().map(|k| (k.to_owned(), v)))
                .collect(),
            _ => Vec::new(),
        }
    }

    /// Resources of one type, as (logical id, body) pairs.
    pub fn resources_of_type(&self, kind: &str) -> Vec<(String, &Value)> {
        self.section("Resources")
            .into_iter()
            .filter(|(_, r)| r.get("Type").and_then(Value::as_str) == Some(kind))
            .collect()
    }

    pub fn resource(&self, logical_id: &str) -> Option<&Value> {
        self.root.get("Resources").and_then(|r| r.get(logical_id))
    }

    /// Every `AWS::Serverless::Function`, with Globals applied.
    pub fn functions(&self) -> Result<Vec<Function>, String> {
        let globals = self
            .root
            .get("Globals")
            .and_then(|g| g.get("Function"))
            .cloned()
            .unwrap_or(Value::Null);
        let mut out = Vec::new();
        for (id, resource) in self.resources_of_type("AWS::Serverless::Function") {
            let props = resource.get("Properties").unwrap_or(&Value::Null);
            let code_uri = props
                .get("CodeUri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{id}: CodeUri is not a path"))?
                .to_owned();
            // sam build (rust-cargolambda) packages the one binary of the package at CodeUri,
            // unless Metadata.BuildProperties.Binary picks one of several.
            let binary = match resource
                .get("Metadata")
                .and_then(|m| m.get("BuildProperties"))
                .and_then(|b| b.get("Binary"))
            {
                Some(binary) => binary
                    .as_str()
                    .ok_or_else(|| format!("{id}: Metadata.BuildProperties.Binary is not a string"))?
                    .to_owned(),
                None => package_name(&code_uri).map_err(|e| format!("{id}: {e}"))?,
            };
            let role = match props.get("Role") {
                None => None,
                Some(v) => {
                    Some(getatt_target(v).ok_or_else(|| format!("{id}: Role is not !GetAtt ROLE.Arn"))?)
                }
            };

            let mut environment = BTreeMap::new();
            for source in [&globals, props] {
                if let Some(Value::Mapping(vars)) = source.get("Environment").and_then(|e| e.get("Variables"))
                {
                    for (k, v) in vars {
                        let k = k
                            .as_str()
                            .ok_or_else(|| format!("{id}: environment key is not a string"))?;
                        // A variable whose `Fn::If` chose `AWS::NoValue` is not set.
                        let v = self
                            .resolve_structure(v)
                            .and_then(|v| v.map(|v| self.resolve(&v)).transpose())
                            .map_err(|e| format!("{id}: environment {k}: {e}"))?;
                        if let Some(v) = v {
                            environment.insert(k.to_owned(), v);
                        }
                    }
                }
            }

            let mut schedules = Vec::new();
            if let Some(Value::Mapping(events)) = props.get("Events") {
                for (name, event) in events {
                    let name = name.as_str().unwrap_or_default().to_owned();
                    if event.get("Type").and_then(Value::as_str) != Some("ScheduleV2") {
                        continue;
                    }
                    let p = event.get("Properties").unwrap_or(&Value::Null);
                    let field = |key: &str| -> Result<Option<String>, String> {
                        p.get(key)
                            .map(|v| self.resolve(v))
                            .transpose()
                            .map_err(|e| format!("{id}.{name}.{key}: {e}"))
                    };
                    schedules.push(Schedule {
                        expression: field("ScheduleExpression")?
                            .ok_or_else(|| format!("{id}.{name}: no ScheduleExpression"))?,
                        timezone: field("ScheduleExpressionTimezone")?,
                        input: field("Input")?.ok_or_else(|| format!("{id}.{name}: no Input"))?,
                        enabled: match field("State")?.as_deref() {
                            None | Some("ENABLED") => true,
                            Some("DISABLED") => false,
                            Some(other) => {
                                return Err(format!(
                                    "{id}.{name}.State: {other} is neither ENABLED nor DISABLED"
                                ))
                            }
                        },
                        event: name,
                    });
                }
            }
            out.push(Function {
                logical_id: id,
                binary,
                code_uri,
                role,
                environment,
                schedules,
            });
        }
        Ok(out)
    }

    /// The statements of every inline policy of an `AWS::IAM::Role`, resolved. Managed
    /// policies cannot be evaluated here: a role that has any is an error.
    pub fn role_statements(&self, role: &str) -> Result<Vec<Statement>, String> {
        let resource = self.resource(role).ok_or_else(|| format!("no resource {role}"))?;
        if resource.get("Type").and_then(Value::as_str) != Some("AWS::IAM::Role") {
            return Err(format!("{role} is not an AWS::IAM::Role"));
        }
        let props = resource.get("Properties").unwrap_or(&Value::Null);
        if props.get("ManagedPolicyArns").is_some() {
            return Err(format!(
                "{role} has ManagedPolicyArns, which this check cannot evaluate: use inline policies"
            ));
        }
        // Conditional policies and statements (`!If [Cond, {...}, !Ref AWS::NoValue]`) are
        // chosen first, so what follows sees the role a stack with these parameters would get.
        let policies = match props.get("Policies") {
            Some(p) => self.resolve_structure(p)?.unwrap_or(Value::Null),
            None => Value::Null,
        };
        let mut out = Vec::new();
        for policy in policies.as_sequence().into_iter().flatten() {
            let name = policy.get("PolicyName").and_then(Value::as_str).unwrap_or("?");
            let statements = policy
                .get("PolicyDocument")
                .and_then(|d| d.get("Statement"))
                .ok_or_else(|| format!("{role} policy {name}: no PolicyDocument.Statement"))?;
            let statements = match statements {
                Value::Sequence(s) => s.clone(),
                one => vec![one.clone()],
            };
            for s in &statements {
                out.push(
                    self.statement(s)
                        .map_err(|e| format!("{role} policy {name}: {e}"))?,
                );
            }
        }
        Ok(out)
    }

    fn statement(&self, s: &Value) -> Result<Statement, String> {
        let list = |key: &str| -> Result<Vec<String>, String> {
            match s.get(key) {
                None => Ok(Vec::new()),
                Some(Value::Sequence(items)) => items.iter().map(|i| self.resolve(i)).collect(),
                Some(one) => Ok(vec![self.resolve(one)?]),
            }
        };
        Ok(Statement {
            sid: s.get("Sid").and_then(Value::as_str).map(str::to_owned),
            effect: s
                .get("Effect")
                .and_then(Value::as_str)
                .ok_or("a statement without Effect")?
                .to_owned(),
            actions: list("Action")?,
            not_actions: list("NotAction")?,
            resources: list("Resource")?,
            not_resources: list("NotResource")?,
            conditions: match s.get("Condition") {
                None => Vec::new(),
                Some(block) => self.conditions(block)?,
            },
        })
    }

    /// A statement's `Condition` block, `{Operator: {Key: value or [values]}}`, resolved. An
    /// operator or key [`iam`](crate::iam) cannot evaluate is an error, never skipped.
    fn conditions(&self, block: &Value) -> Result<Vec<Condition>, String> {
        let Value::Mapping(operators) = block else {
            return Err(format!("Condition is not a mapping: {block:?}"));
        };
        let mut out = Vec::new();
        for (operator, keys) in operators {
            // YAML reads a plain `Null:` key as null, not as the string: it is the operator.
            let operator = match operator {
                Value::Null => "Null",
                other => other
                    .as_str()
                    .ok_or_else(|| format!("Condition operator is not a string: {other:?}"))?,
            };
            let Value::Mapping(keys) = keys else {
                return Err(format!("Condition {operator}: not a mapping of keys to values"));
            };
            if keys.is_empty() {
                return Err(format!("Condition {operator}: no keys"));
            }
            for (key, values) in keys {
                let key = key
                    .as_str()
                    .ok_or_else(|| format!("Condition {operator}: key is not a string: {key:?}"))?;
                let values = match values {
                    Value::Sequence(items) => items.iter().map(|i| self.resolve(i)).collect(),
                    one => self.resolve(one).map(|v| vec![v]),
                }
                .map_err(|e| format!("Condition {operator} {key}: {e}"))?;
                out.push(Condition::parse(operator, key, values).map_err(|e| format!("Condition: {e}"))?);
            }
        }
        Ok(out)
    }

    /// A value as CloudFormation would pass it: strings and numbers as they are, `!Ref` of a
    /// parameter or pseudo parameter to its value, `!Sub` with `${Name}` substituted.
    /// References to resources become readable placeholders: `{ref:Id}`, `{Id.Attr}`.
    pub fn resolve(&self, value: &Value) -> Result<String, String> {
        if let Some(s) = scalar(value) {
            return Ok(s);
        }
        let (function, arg) = intrinsic(value).ok_or_else(|| format!("cannot resolve {value:?}"))?;
        match function.as_str() {
            "Ref" => {
                let name = arg.as_str().ok_or("Ref of a non-string")?;
                Ok(self.lookup(name))
            }
            "GetAtt" => {
                let (id, attr) = getatt_parts(arg).ok_or("GetAtt needs Id.Attr or [Id, Attr]")?;
                Ok(format!("{{{id}.{attr}}}"))
            }
            "Sub" => match arg {
                Value::String(s) => self.substitute(s, &BTreeMap::new()),
                Value::Sequence(items) if items.len() == 2 => {
                    let text = items[0].as_str().ok_or("Sub's first item must be a string")?;
                    let mut local = BTreeMap::new();
                    if let Value::Mapping(m) = &items[1] {
                        for (k, v) in m {
                            local.insert(k.as_str().unwrap_or_default().to_owned(), self.resolve(v)?);
                        }
                    }
                    self.substitute(text, &local)
                }
                _ => Err("Sub needs a string or [string, {vars}]".into()),
            },
            "If" => {
                let branch = self.if_branch(arg)?;
                if is_no_value(branch) {
                    return Err("Fn::If chose AWS::NoValue where a value is needed".into());
                }
                self.resolve(branch)
            }
            "FindInMap" => match arg {
                Value::Sequence(items) if items.len() == 3 => {
                    let keys = items
                        .iter()
                        .map(|k| self.resolve(k))
                        .collect::<Result<Vec<String>, String>>()?;
                    self.mapping_value(&keys[0], &keys[1], &keys[2])
                }
                _ => Err("FindInMap needs [MapName, TopLevelKey, SecondLevelKey]".into()),
            },
            "ToJsonString" => Ok(self.to_json(arg)?.to_string()),
            other => Err(format!("intrinsic {other} is not supported by this check")),
        }
    }

    /// `value` as the JSON that `Fn::ToJsonString` (AWS::LanguageExtensions) makes of it:
    /// conditions chosen, `AWS::NoValue` dropped, every other intrinsic resolved to its string.
    fn to_json(&self, value: &Value) -> Result<serde_json::Value, String> {
        let Some(value) = self.resolve_structure(value)? else {
            return Err("Fn::ToJsonString of AWS::NoValue".into());
        };
        if intrinsic(&value).is_some() {
            return self.resolve(&value).map(serde_json::Value::String);
        }
        match &value {
            Value::Mapping(m) => m
                .iter()
                .map(|(k, v)| {
                    let key = k.as_str().ok_or_else(|| format!("a non-string key {k:?}"))?;
                    Ok((key.to_owned(), self.to_json(v)?))
                })
                .collect::<Result<serde_json::Map<_, _>, String>>()
                .map(serde_json::Value::Object),
            Value::Sequence(items) => items
                .iter()
                .map(|item| self.to_json(item))
                .collect::<Result<Vec<_>, String>>()
                .map(serde_json::Value::Array),
            scalar => serde_json::to_value(scalar).map_err(|e| e.to_string()),
        }
    }

    /// `Mappings.map.top.second`, as a string.
    pub fn mapping_value(&self, map: &str, top: &str, second: &str) -> Result<String, String> {
        self.root
            .get("Mappings")
            .and_then(|m| m.get(map))
            .and_then(|m| m.get(top))
            .and_then(|m| m.get(second))
            .and_then(scalar)
            .ok_or_else(|| format!("FindInMap: no Mappings.{map}.{top}.{second}"))
    }

    /// `value` with every `Fn::If` replaced by the branch its condition chooses, and every
    /// `AWS::NoValue` removed: `None` if `value` itself is `AWS::NoValue`, list items and
    /// mapping entries that are dropped. Other intrinsics are kept for [`Template::resolve`].
    pub fn resolve_structure(&self, value: &Value) -> Result<Option<Value>, String> {
        if is_no_value(value) {
            return Ok(None);
        }
        if let Some((function, arg)) = intrinsic(value) {
            return match function.as_str() {
                "If" => self.resolve_structure(self.if_branch(arg)?),
                _ => Ok(Some(value.clone())),
            };
        }
        match value {
            Value::Mapping(m) => {
                let mut out = Mapping::new();
                for (k, v) in m {
                    if let Some(v) = self.resolve_structure(v)? {
                        out.insert(k.clone(), v);
                    }
                }
                Ok(Some(Value::Mapping(out)))
            }
            Value::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    out.extend(self.resolve_structure(item)?);
                }
                Ok(Some(Value::Sequence(out)))
            }
            other => Ok(Some(other.clone())),
        }
    }

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
    fn if_branch<'v>(&self, arg: &'v Value) -> Result<&'v Value, String> {
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

    fn lookup(&self, name: &str) -> String {
        match self.vars.get(name) {
            Some(v) => v.clone(),
            None => format!("{{ref:{name}}}"),
        }
    }

    /// `${Name}`, `${Id.Attr}` and `${!Literal}` as in Fn::Sub.
    fn substitute(&self, text: &str, local: &BTreeMap<String, String>) -> Result<String, String> {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let end = after
                .find('}')
                .ok_or_else(|| format!("unclosed ${{ in {text:?}"))?;
            let name = &after[..end];
            if let Some(literal) = name.strip_prefix('!') {
                out.push_str("${");
                out.push_str(literal);
                out.push('}');
            } else if let Some(v) = local.get(name) {
                out.push_str(v);
            } else if name.contains('.') && !self.vars.contains_key(name) {
                out.push_str(&format!("{{{name}}}"));
            } else {
                out.push_str(&self.lookup(name));
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// How deep conditions may name other conditions before the check calls it a cycle.
const MAX_CONDITION_DEPTH: usize = 32;

/// `!Ref AWS::NoValue` or `{Ref: AWS::NoValue}`.
/// The `[package] name` of the Cargo.toml in `code_uri` (relative to the repository root): the
/// binary of a package that has one, `src/main.rs`.
fn package_name(code_uri: &str) -> Result<String, String> {
    let path = testkit::repo_root().join(code_uri).join("Cargo.toml");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("CodeUri {code_uri}: read {}: {e}", path.display()))?;
    let manifest: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    manifest
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: no [package] name", path.display()))
}

fn is_no_value(value: &Value) -> bool {
    matches!(intrinsic(value), Some((f, Value::String(name))) if f == "Ref" && name == "AWS::NoValue")
}

/// The name in `!Condition Name` or `{Condition: Name}` (how And / Or / Not refer to one).
fn condition_reference(value: &Value) -> Option<&str> {
    match value {
        Value::Tagged(t) if t.tag.to_string().trim_start_matches('!') == "Condition" => t.value.as_str(),
        Value::Mapping(m) if m.len() == 1 => m.get("Condition").and_then(Value::as_str),
        _ => None,
    }
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `!Fn arg` or `{"Fn::Fn": arg}` / `{"Ref": arg}`, as (function name without `Fn::`, arg).
fn intrinsic(value: &Value) -> Option<(String, &Value)> {
    match value {
        Value::Tagged(t) => {
            let tag = t.tag.to_string();
            let name = tag.trim_start_matches('!');
            Some((name.to_owned(), &t.value))
        }
        Value::Mapping(m) if m.len() == 1 => {
            let (k, v) = m.iter().next()?;
            let k = k.as_str()?;
            let name = k.strip_prefix("Fn::").unwrap_or(k);
            (k == "Ref" || k.starts_with("Fn::")).then(|| (name.to_owned(), v))
        }
        _ => None,
    }
}

fn getatt_parts(arg: &Value) -> Option<(String, String)> {
    match arg {
        Value::String(s) => {
            let (id, attr) = s.split_once('.')?;
            Some((id.to_owned(), attr.to_owned()))
        }
        Value::Sequence(items) if items.len() == 2 => {
            Some((items[0].as_str()?.to_owned(), items[1].as_str()?.to_owned()))
        }
        _ => None,
    }
}

/// The logical id in `!GetAtt Id.Arn`.
fn getatt_target(value: &Value) -> Option<String> {
    let (function, arg) = intrinsic(value)?;
    if function != "GetAtt" {
        return None;
    }
    let (id, attr) = getatt_parts(arg)?;
    (attr == "Arn").then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
Parameters:
  Prefix:
    Type: String
    Default: ts
  Count:
    Type: Number
    Default: 3
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:ListTables
                Resource: "*"
              - Effect: Allow
                Action: [dynamodb:DescribeTable]
                Resource:
                  - !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/${Prefix}_*
                  - Fn::Sub: "${Q.Arn}"
"#;

    #[test]
    fn resolves_sub_ref_and_getatt() {
        let t = Template::parse(SMALL).unwrap();
        let text = |yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap()).unwrap();
        assert_eq!(text("!Ref Prefix"), "ts");
        assert_eq!(text("!Ref Count"), "3");
        assert_eq!(text("!Ref AWS::Region"), "us-east-1");
        assert_eq!(text("!Ref Queue"), "{ref:Queue}");
        assert_eq!(text("!GetAtt Queue.Arn"), "{Queue.Arn}");
        assert_eq!(
            text("!Sub '${Prefix}-${Count} ${!Literal} ${Q.Arn}'"),
            "ts-3 ${Literal} {Q.Arn}"
        );
        assert_eq!(text("!Sub ['${A}/${Prefix}', {A: !Ref Count}]"), "3/ts");
        assert_eq!(text("{Ref: Prefix}"), "ts");
    }

    #[test]
    fn to_json_string_keeps_types_and_resolves_what_it_holds() {
        let t = Template::parse(SMALL).unwrap();
        let text = |yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap()).unwrap();
        let json = text(
            "Fn::ToJsonString: {n: 3600, on: true, name: !Ref Prefix, list: [a, !Sub '${Prefix}-x', !Ref Queue]}",
        );
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&json).unwrap(),
            serde_json::json!({"n": 3600, "on": true, "name": "ts", "list": ["a", "ts-x", "{ref:Queue}"]})
        );
    }

    #[test]
    fn reads_role_statements() {
        let t = Template::parse(SMALL).unwrap();
        let statements = t.role_statements("Role").unwrap();
        assert_eq!(statements.len(), 2);
        assert_eq!(statements[0].resources, ["*"]);
        assert_eq!(
            statements[1].resources,
            ["arn:aws:dynamodb:us-east-1:123456789012:table/ts_*", "{Q.Arn}"]
        );
    }

    const WITH_CONDITIONS: &str = r#"
Parameters:
  Prefix:
    Type: String
    Default: ts
  Strict:
    Type: String
    Default: "true"
Conditions:
  IsStrict: !Equals [!Ref Strict, "true"]
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Sid: Tag
                Effect: Allow
                Action: dynamodb:TagResource
                Resource: "*"
                Condition:
                  StringEqualsIfExists:
                    "aws:ResourceTag/ddb-rollover:family": !Ref Prefix
                    "aws:RequestTag/ddb-rollover:family": [!Ref Prefix, !Sub "${Prefix}-old"]
                  Null:
                    "aws:RequestTag/team": !If [IsStrict, "false", !Ref AWS::NoValue]
  Odd:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: p
          PolicyDocument:
            Statement:
              - Effect: Allow
                Action: dynamodb:TagResource
                Resource: "*"
                Condition:
                  ForAllValues:StringEquals:
                    aws:TagKeys: [a]
"#;

    #[test]
    fn reads_conditions_and_refuses_what_it_cannot_evaluate() {
        use crate::iam::{ConditionKey, Operator};
        let t = Template::parse(WITH_CONDITIONS).unwrap();
        let s = &t.role_statements("Role").unwrap()[0];
        assert_eq!(s.conditions.len(), 3, "{:?}", s.conditions);
        assert_eq!(s.conditions[0].operator, Operator::StringEqualsIfExists);
        assert_eq!(
            s.conditions[0].key,
            ConditionKey::ResourceTag("ddb-rollover:family".into())
        );
        assert_eq!(s.conditions[0].values, ["ts"]);
        assert_eq!(
            s.conditions[1].key,
            ConditionKey::RequestTag("ddb-rollover:family".into())
        );
        assert_eq!(s.conditions[1].values, ["ts", "ts-old"]);
        assert_eq!(s.conditions[2].operator, Operator::Null);
        assert_eq!(s.conditions[2].values, ["false"]);

        let mut relaxed = Template::parse(WITH_CONDITIONS).unwrap();
        relaxed.set_parameter("Strict", "false");
        let mapping_without_keys = relaxed.role_statements("Role").unwrap_err();
        assert!(mapping_without_keys.contains("Null"), "{mapping_without_keys}");

        let e = t.role_statements("Odd").unwrap_err();
        assert!(
            e.contains("ForAllValues:StringEquals") && e.contains("not evaluated"),
            "{e}"
        );
    }

    const CONDITIONAL: &str = r#"
Parameters:
  Bucket:
    Type: String
    Default: ""
  Days:
    Type: Number
    Default: 0
  Flag:
    Type: String
    Default: "false"
Conditions:
  HasBucket: !Not [!Equals [!Ref Bucket, ""]]
  HasDays: !Not [{"Fn::Equals": [!Ref Days, 0]}]
  FlagOn: !Equals [!Ref Flag, "true"]
  Either: !Or [!Condition HasBucket, {Condition: HasDays}]
  Both: !And [!Condition HasBucket, !Condition HasDays, !Not [!Condition FlagOn]]
  Loop: !Not [!Condition Loop]
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Policies:
        - PolicyName: always
          PolicyDocument:
            Statement:
              - Sid: Always
                Effect: Allow
                Action: dynamodb:ListTables
                Resource: "*"
              - !If
                - HasDays
                - Sid: Delete
                  Effect: Allow
                  Action: dynamodb:DeleteTable
                  Resource: !Sub arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/x_*
                - !Ref AWS::NoValue
              - Sid: Flagged
                Effect: Allow
                Action: !If [FlagOn, [a:B, a:C], a:B]
                Resource: "*"
        - Fn::If:
            - HasBucket
            - PolicyName: archive
              PolicyDocument:
                Statement:
                  - Sid: Objects
                    Effect: Allow
                    Action: s3:PutObject
                    Resource: !Sub arn:aws:s3:::${Bucket}/*
            - {Ref: AWS::NoValue}
"#;

    fn conditional(overrides: &[(&str, &str)]) -> Template {
        let mut t = Template::parse(CONDITIONAL).unwrap();
        for (name, value) in overrides {
            t.set_parameter(name, value);
        }
        t
    }

    fn sids(t: &Template) -> Vec<String> {
        t.role_statements("Role")
            .unwrap()
            .into_iter()
            .map(|s| s.sid.unwrap())
            .collect()
    }

    #[test]
    fn evaluates_conditions_with_defaults_and_overrides() {
        let t = conditional(&[]);
        for (name, expected) in [
            ("HasBucket", false),
            ("HasDays", false),
            ("FlagOn", false),
            ("Either", false),
            ("Both", false),
        ] {
            assert_eq!(t.condition(name), Ok(expected), "{name} with defaults");
        }
        let t = conditional(&[("Bucket", "b"), ("Days", "2")]);
        for (name, expected) in [
            ("HasBucket", true),
            ("HasDays", true),
            ("Either", true),
            ("Both", true),
        ] {
            assert_eq!(t.condition(name), Ok(expected), "{name} with Bucket and Days");
        }
        let t = conditional(&[("Days", "2"), ("Flag", "true")]);
        assert_eq!(t.condition("Either"), Ok(true));
        assert_eq!(t.condition("Both"), Ok(false));
        assert!(t.condition("Nope").unwrap_err().contains("no condition Nope"));
        assert!(t.condition("Loop").unwrap_err().contains("cycle"));
    }

    #[test]
    fn if_and_no_value_choose_statements_and_policies() {
        assert_eq!(sids(&conditional(&[])), ["Always", "Flagged"]);
        assert_eq!(
            sids(&conditional(&[("Days", "1")])),
            ["Always", "Delete", "Flagged"]
        );
        let t = conditional(&[("Bucket", "my-bucket"), ("Flag", "true")]);
        let statements = t.role_statements("Role").unwrap();
        let labels: Vec<_> = statements.iter().map(|s| s.label()).collect();
        assert_eq!(labels, ["Always", "Flagged", "Objects"]);
        assert_eq!(statements[1].actions, ["a:B", "a:C"]);
        assert_eq!(statements[2].resources, ["arn:aws:s3:::my-bucket/*"]);
        assert_eq!(
            conditional(&[]).role_statements("Role").unwrap()[1].actions,
            ["a:B"]
        );
    }

    #[test]
    fn if_inside_sub_variables_and_no_value_where_a_value_is_needed() {
        let text = |t: &Template, yaml: &str| t.resolve(&yaml_serde::from_str(yaml).unwrap());
        let sub = r#"!Sub ['{"bucket":${B},"days":${D}}', {B: !If [HasBucket, !Sub '"${Bucket}"', "null"], D: !If [HasDays, !Ref Days, "null"]}]"#;
        assert_eq!(
            text(&conditional(&[]), sub).unwrap(),
            r#"{"bucket":null,"days":null}"#
        );
        assert_eq!(
            text(&conditional(&[("Bucket", "b"), ("Days", "7")]), sub).unwrap(),
            r#"{"bucket":"b","days":7}"#
        );
        let t = conditional(&[]);
        assert!(text(&t, "!If [HasBucket, x, !Ref AWS::NoValue]")
            .unwrap_err()
            .contains("NoValue"));
        assert!(text(&t, "!If [HasBucket, x]").is_err());
        assert_eq!(
            t.resolve_structure(&yaml_serde::from_str("!Ref AWS::NoValue").unwrap()),
            Ok(None)
        );
    }
}
