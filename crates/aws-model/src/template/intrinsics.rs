//! The intrinsic functions that make values: `Ref`, `Fn::Sub`, `Fn::GetAtt`, `Fn::FindInMap`,
//! `Fn::ToJsonString`, and `Fn::If` / `AWS::NoValue` choosing what a value is.

use std::collections::BTreeMap;

use super::{getatt_parts, intrinsic, is_no_value, scalar, Mapping, Template, Value};

impl Template {
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
