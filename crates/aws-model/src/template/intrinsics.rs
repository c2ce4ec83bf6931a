//! The intrinsic functions that make values: `Ref`, `Fn::Sub`, `Fn::GetAtt`, `Fn::FindInMap`,
//! `Fn::ToJsonString`, and `Fn::If` / `AWS::NoValue` choosing what a value is.
//!
//! A DynamoDB table with a `TableName` resolves as CloudFormation resolves it (`Ref` is the
//! name, `Fn::GetAtt Id.Arn` the ARN in the imagined stack): IAM statements on `!GetAtt
//! LedgerTable.Arn` must match the requests made on that table. Other resources stay
//! placeholders.

use std::collections::BTreeMap;

use super::{getatt_parts, intrinsic, is_no_value, scalar, Mapping, Template, Value};
use crate::stack::table_arn;

/// How many tables' names one value may pass through before it is taken for a cycle.
const MAX_REFERENCE_DEPTH: u8 = 8;

impl Template {
    /// A value as CloudFormation would pass it: strings and numbers as they are, `!Ref` of a
    /// parameter or pseudo parameter to its value, `!Sub` with `${Name}` substituted.
    /// References to resources become readable placeholders: `{ref:Id}`, `{Id.Attr}`; but a
    /// DynamoDB table's name and ARN (see the module's note).
    pub fn resolve(&self, value: &Value) -> Result<String, String> {
        self.resolve_at(value, 0)
    }

    /// [`Template::resolve`], `depth` tables' names deep.
    fn resolve_at(&self, value: &Value, depth: u8) -> Result<String, String> {
        if let Some(s) = scalar(value) {
            return Ok(s);
        }
        let (function, arg) = intrinsic(value).ok_or_else(|| format!("cannot resolve {value:?}"))?;
        match function.as_str() {
            "Ref" => {
                let name = arg.as_str().ok_or("Ref of a non-string")?;
                self.reference(name, depth)
            }
            "GetAtt" => {
                let (id, attr) = getatt_parts(arg).ok_or("GetAtt needs Id.Attr or [Id, Attr]")?;
                self.attribute(&id, &attr, depth)
            }
            "Sub" => match arg {
                Value::String(s) => self.substitute(s, &BTreeMap::new(), depth),
                Value::Sequence(items) if items.len() == 2 => {
                    let text = items[0].as_str().ok_or("Sub's first item must be a string")?;
                    let mut local = BTreeMap::new();
                    if let Value::Mapping(m) = &items[1] {
                        for (k, v) in m {
                            local.insert(
                                k.as_str().unwrap_or_default().to_owned(),
                                self.resolve_at(v, depth)?,
                            );
                        }
                    }
                    self.substitute(text, &local, depth)
                }
                _ => Err("Sub needs a string or [string, {vars}]".into()),
            },
            "If" => {
                let branch = self.if_branch(arg)?;
                if is_no_value(branch) {
                    return Err("Fn::If chose AWS::NoValue where a value is needed".into());
                }
                self.resolve_at(branch, depth)
            }
            "FindInMap" => match arg {
                Value::Sequence(items) if items.len() == 3 => {
                    let keys = items
                        .iter()
                        .map(|k| self.resolve_at(k, depth))
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

    /// `Ref Name`: a parameter's or pseudo parameter's value, a DynamoDB table's name, or the
    /// placeholder `{ref:Name}`.
    fn reference(&self, name: &str, depth: u8) -> Result<String, String> {
        if self.vars.contains_key(name) {
            return Ok(self.lookup(name));
        }
        Ok(match self.table_name_of(name, depth)? {
            Some(table) => table,
            None => self.lookup(name),
        })
    }

    /// `Fn::GetAtt Id.Attr`: a DynamoDB table's `Arn`, or the placeholder `{Id.Attr}`.
    fn attribute(&self, id: &str, attr: &str, depth: u8) -> Result<String, String> {
        if attr == "Arn" {
            if let Some(table) = self.table_name_of(id, depth)? {
                return Ok(table_arn(&table));
            }
        }
        Ok(format!("{{{id}.{attr}}}"))
    }

    /// The resolved `TableName` of the `AWS::DynamoDB::Table` `id`; `None` for another
    /// resource, or a table whose name CloudFormation makes up.
    fn table_name_of(&self, id: &str, depth: u8) -> Result<Option<String>, String> {
        let Some(resource) = self.resource(id) else {
            return Ok(None);
        };
        if resource.get("Type").and_then(Value::as_str) != Some("AWS::DynamoDB::Table") {
            return Ok(None);
        }
        let Some(name) = resource.get("Properties").and_then(|p| p.get("TableName")) else {
            return Ok(None);
        };
        if depth >= MAX_REFERENCE_DEPTH {
            return Err(format!("{id}'s TableName: a cycle of references"));
        }
        self.resolve_at(name, depth + 1)
            .map(Some)
            .map_err(|e| format!("{id}'s TableName: {e}"))
    }

    /// `${Name}`, `${Id.Attr}` and `${!Literal}` as in Fn::Sub.
    fn substitute(&self, text: &str, local: &BTreeMap<String, String>, depth: u8) -> Result<String, String> {
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
            } else if let Some((id, attr)) = name.split_once('.').filter(|_| !self.vars.contains_key(name)) {
                out.push_str(&self.attribute(id, attr, depth)?);
            } else {
                out.push_str(&self.reference(name, depth)?);
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}
