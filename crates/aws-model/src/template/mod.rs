//! `template.yaml` as CloudFormation reads it: parameters (their defaults, or overrides),
//! sections and resources, with the intrinsic functions resolved the way CloudFormation would
//! for a stack deployed in [`REGION`](crate::stack::REGION) of account
//! [`ACCOUNT_ID`](crate::stack::ACCOUNT_ID).
//!
//! Supported: `Ref`, `Fn::GetAtt`, `Fn::Sub` (with a variable map), `Fn::FindInMap`,
//! `Fn::ToJsonString` (AWS::LanguageExtensions), `Conditions` and `Rules` with `Fn::Equals` /
//! `Fn::Not` / `Fn::And` / `Fn::Or` / `Condition`, `Fn::If`, and `AWS::NoValue` (a list item or
//! mapping entry that resolves to it is dropped, as CloudFormation drops it). Optional parts of
//! the template are written that way, so the checks must see exactly what a stack with given
//! parameters would get.
//!
//! - [`intrinsics`]: `Ref`, `Sub`, `GetAtt`, `FindInMap`, `ToJsonString`, `If` / `NoValue`.
//! - [`conditions`]: `Conditions` and `Rules`.
//!
//! YAML: `yaml_serde` keeps CloudFormation's short-form tags (`!Sub`, `!Ref`, `!GetAtt`) as
//! `Value::Tagged`, which a plain YAML reader would reject or drop.

use std::collections::BTreeMap;
use std::path::Path;

pub use yaml_serde::{Mapping, Value};

use crate::stack::PSEUDO_PARAMETERS;

mod conditions;
#[cfg(test)]
pub(crate) mod fixtures;
mod intrinsics;
#[cfg(test)]
mod tests;

/// A parsed template and the values its `!Ref`s and `${}`s resolve to.
#[derive(Debug)]
pub struct Template {
    root: Mapping,
    /// Parameters (their defaults, or overrides) and pseudo parameters.
    vars: BTreeMap<String, String>,
}

impl Template {
    /// Reads and parses the template at `path`, with the parameters' defaults.
    pub fn read(path: &Path) -> Result<Template, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("read {}: {e}", path.display()))?;
        Template::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses a template's text, with the parameters' defaults.
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
        for (k, v) in PSEUDO_PARAMETERS {
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

    /// Whether the template declares parameter `name`.
    pub fn has_parameter(&self, name: &str) -> bool {
        self.section("Parameters").iter().any(|(n, _)| n == name)
    }

    /// Overrides a parameter (as `sam deploy --parameter-overrides` would). Panics if the
    /// template has no such parameter.
    pub fn set_parameter(&mut self, name: &str, value: &str) {
        assert!(self.has_parameter(name), "no parameter {name} in the template");
        self.vars.insert(name.into(), value.into());
    }

    /// Overrides each of `parameters`, `(name, value)`; an error names one the template lacks.
    pub fn set_parameters(&mut self, parameters: &[(&str, &str)]) -> Result<(), String> {
        for (name, value) in parameters {
            if !self.has_parameter(name) {
                return Err(format!("no parameter {name} in the template"));
            }
            self.set_parameter(name, value);
        }
        Ok(())
    }

    /// A top-level entry (`Globals`, `Mappings`, ...), as written.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.root.get(key)
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

    /// The resource with this logical id, as written.
    pub fn resource(&self, logical_id: &str) -> Option<&Value> {
        self.root.get("Resources").and_then(|r| r.get(logical_id))
    }

    /// The logical id of the role a function's `Role: !GetAtt ROLE.Arn` names (`None`: the
    /// function has no `Role`).
    pub fn function_role(&self, function: &str) -> Result<Option<String>, String> {
        let resource = self
            .resource(function)
            .ok_or_else(|| format!("no resource {function}"))?;
        match resource.get("Properties").and_then(|p| p.get("Role")) {
            None => Ok(None),
            Some(v) => getatt_target(v)
                .map(Some)
                .ok_or_else(|| format!("{function}: Role is not !GetAtt ROLE.Arn")),
        }
    }

    fn lookup(&self, name: &str) -> String {
        match self.vars.get(name) {
            Some(v) => v.clone(),
            None => format!("{{ref:{name}}}"),
        }
    }
}

/// `!Ref AWS::NoValue` or `{Ref: AWS::NoValue}`.
fn is_no_value(value: &Value) -> bool {
    matches!(intrinsic(value), Some((f, Value::String(name))) if f == "Ref" && name == "AWS::NoValue")
}

/// A scalar's text: strings as they are, numbers and booleans as YAML writes them.
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

/// `Id.Attr` or `[Id, Attr]`, as (Id, Attr).
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
