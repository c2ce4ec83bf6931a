//! JSON text read strictly, before serde reads its keys: every JSON policy
//! ([`PolicyDocument::from_json`](crate::PolicyDocument::from_json): a `--policy` file,
//! `ROLLOVER_POLICY`) and the Lambda functions' event payloads. A key given twice is refused
//! with its path (serde_json, like most parsers, keeps the last one silently, so
//! `{"premake": 1, "premake": 5}` or two `scheduled_time`s would decide on whichever came
//! last), and so is text nested deeper than [`MAX_DEPTH`] or not JSON at all. Every refusal
//! names where ([`Refusal`]), with what was sent cut short ([`excerpt`]). The one reader: the
//! functions call it too.

use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Far more than any payload or policy takes (a policy nests 4 levels); far less than
/// serde_json's own limit (128), so a deep text is refused here, by path, before serde_json
/// stops reading.
pub const MAX_DEPTH: usize = 16;

/// At most this many characters of anything sent are echoed in a message or a log line: a
/// Lambda event may be up to 256 KB (async invocations) or 6 MB, a CloudWatch Logs event at
/// most 256 KB.
pub const MAX_ECHO_CHARS: usize = 200;

/// `text` cut to [`MAX_ECHO_CHARS`] characters, saying how long it was when cut.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(MAX_ECHO_CHARS) {
        Some((cut, _)) => format!("{}... ({} bytes in all)", &text[..cut], text.len()),
        None => text.to_owned(),
    }
}

/// Why a text was refused: where (`root` for the whole text, the key for a key of its top
/// level, `a.b[2]` below) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Where: `root`, a top-level key, or `a.b[2]`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// The text is not JSON at all (the message is serde_json's, after `not JSON: `), rather
    /// than JSON refused for a duplicate key or its depth.
    pub not_json: bool,
}

/// `text` as a JSON value, or why it is refused; `root` names the whole text in refusals.
pub fn parse(text: &str, root: &str) -> Result<Value, Refusal> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let mut refusal = None;
    let seed = Strict {
        path: root.into(),
        depth: 0,
        refusal: &mut refusal,
    };
    let parsed = seed.deserialize(&mut deserializer).and_then(|value| {
        deserializer.end()?;
        Ok(value)
    });
    match (parsed, refusal) {
        (Ok(value), None) => Ok(value),
        (_, Some(refusal)) => Err(refusal),
        (Err(error), None) => Err(Refusal {
            path: root.into(),
            message: format!("not JSON: {}", excerpt(&error.to_string())),
            not_json: true,
        }),
    }
}

/// One value at `path`; the first refusal is kept in `refusal` (serde's own error then only
/// stops the reading).
struct Strict<'a> {
    path: String,
    depth: usize,
    refusal: &'a mut Option<Refusal>,
}

impl Strict<'_> {
    fn refuse<E: de::Error>(&mut self, path: String, message: String) -> E {
        let refusal = Refusal {
            path: excerpt(&path),
            message,
            not_json: false,
        };
        let text = format!("{}: {}", refusal.path, refusal.message);
        self.refusal.get_or_insert(refusal);
        E::custom(text)
    }

    fn child(&mut self, path: String) -> Strict<'_> {
        Strict {
            path,
            depth: self.depth + 1,
            refusal: self.refusal,
        }
    }

    fn enter<E: de::Error>(&mut self) -> Result<(), E> {
        if self.depth >= MAX_DEPTH {
            let path = self.path.clone();
            return Err(self.refuse(path, format!("nested more than {MAX_DEPTH} levels deep")));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Value, A::Error> {
        self.enter()?;
        let mut items = Vec::new();
        loop {
            let path = format!("{}[{}]", self.path, items.len());
            match seq.next_element_seed(self.child(path))? {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Value, A::Error> {
        self.enter()?;
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // The top level's keys are named bare (`dry_run`), as serde_path_to_error names them.
            let path = if self.depth == 0 {
                key.clone()
            } else {
                format!("{}.{key}", self.path)
            };
            if object.contains_key(&key) {
                return Err(self.refuse(
                    path,
                    "given twice: each key at most once (JSON parsers disagree on which one wins)".into(),
                ));
            }
            let value = map.next_value_seed(self.child(path))?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}
