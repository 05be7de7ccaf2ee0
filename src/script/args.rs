//! The arguments of `mcp-workbench call` (docs/reference.md §13): ARGS as
//! one JSON object, `-` (or nothing, with stdin not a terminal) for the
//! object on stdin, or `key=value` words, each value taken as JSON where it
//! parses as JSON, else as a string; and the properties a tool's
//! `inputSchema` requires that the arguments lack.
//!
//! No IO: stdin comes through a closure. Errors are usage errors, said to
//! a person (exit 2, nothing called).

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The arguments as they go to the tool: the caller's own bytes for a JSON
/// object, else the object built from `key=value` words.
#[derive(Debug)]
pub(crate) struct Arguments {
    pub raw: Box<RawValue>,
    /// The top-level keys, for the required-property check.
    pub keys: Vec<String>,
}

/// The arguments from `words` (after TOOLBOX/SERVER/TOOL); `stdin` reads
/// the whole standard input, used for `-` and for no words when `piped`.
pub(crate) fn from_words(
    words: &[String],
    piped: bool,
    stdin: impl FnOnce() -> Result<String, String>,
) -> Result<Arguments, String> {
    match words {
        [] if piped => object(&stdin()?, "the JSON on stdin", true),
        [] => object("{}", "", false),
        [dash] if dash == "-" => object(&stdin()?, "the JSON on stdin", true),
        [one] if !is_pair(one) => object(one, "ARGS", false),
        pairs => pairs_object(pairs),
    }
}

/// `text` as the arguments: one JSON object (`blank_is_empty`: only
/// whitespace is `{}`).
pub(crate) fn object(text: &str, what: &str, blank_is_empty: bool) -> Result<Arguments, String> {
    let text = text.trim();
    let text = if text.is_empty() && blank_is_empty {
        "{}"
    } else {
        text
    };
    let not_object = || {
        format!("{what} is not a JSON object (give one JSON object, key=value words, or - to read the object from stdin)")
    };
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return Err(not_object());
    };
    let raw = RawValue::from_string(text.to_string()).map_err(|_| not_object())?;
    Ok(Arguments {
        raw,
        keys: map.keys().cloned().collect(),
    })
}

fn is_pair(word: &str) -> bool {
    matches!(word.split_once('='), Some((key, _)) if !key.is_empty() && !key.trim_start().starts_with('{'))
}

/// `key=value` words as one object, in their order.
fn pairs_object(words: &[String]) -> Result<Arguments, String> {
    let mut members = Vec::new();
    let mut keys = Vec::new();
    for word in words {
        let Some((key, value)) = word.split_once('=').filter(|_| is_pair(word)) else {
            return Err(format!(
                "'{word}' is not key=value (give one JSON object, key=value words, or - to read the object from stdin)"
            ));
        };
        if keys.iter().any(|k| k == key) {
            return Err(format!("{key} was given twice"));
        }
        let value = match serde_json::from_str::<Value>(value) {
            Ok(json) => json,
            Err(_) => Value::String(value.to_string()),
        };
        members.push(format!("{}:{value}", Value::String(key.to_string())));
        keys.push(key.to_string());
    }
    let raw = RawValue::from_string(format!("{{{}}}", members.join(",")))
        .map_err(|e| format!("the arguments do not make a JSON object: {e}"))?;
    Ok(Arguments { raw, keys })
}

/// The properties `schema` (a tool's `inputSchema`) requires that `keys`
/// lack, in the schema's order.
pub(crate) fn missing(schema: &RawValue, keys: &[String]) -> Vec<String> {
    let Ok(schema) = serde_json::from_str::<Map<String, Value>>(schema.get()) else {
        return Vec::new();
    };
    let Some(Value::Array(required)) = schema.get("required") else {
        return Vec::new();
    };
    required
        .iter()
        .filter_map(Value::as_str)
        .filter(|name| !keys.iter().any(|k| k == name))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    fn args(list: &[&str]) -> Result<String, String> {
        from_words(&words(list), false, || Ok(String::new())).map(|a| a.raw.get().to_string())
    }

    #[test]
    fn args_are_an_object_words_or_stdin() {
        assert_eq!(args(&[]), Ok("{}".into()));
        assert_eq!(
            args(&[r#"{"b": 1, "a": [2]}"#]),
            Ok(r#"{"b": 1, "a": [2]}"#.into())
        );
        assert_eq!(
            args(&[
                "n=3",
                "name=hello world",
                "flag=true",
                "list=[1,2]",
                "id=007"
            ]),
            Ok(r#"{"n":3,"name":"hello world","flag":true,"list":[1,2],"id":"007"}"#.into())
        );
        let piped = from_words(&[], true, || Ok(" {\"x\":1}\n".into())).unwrap();
        assert_eq!(piped.raw.get(), "{\"x\":1}");
        assert_eq!(piped.keys, ["x"]);
        let dash = from_words(&words(&["-"]), false, || Ok(String::new())).unwrap();
        assert_eq!(dash.raw.get(), "{}");
        for bad in [&["[1]"][..], &["42"], &["{nope"], &["a=1", "loose"]] {
            let e = args(bad).unwrap_err();
            assert!(e.contains("JSON object") || e.contains("key=value"), "{e}");
        }
        assert_eq!(args(&["a=1", "a=2"]), Err("a was given twice".into()));
    }

    #[test]
    fn missing_names_each_required_property() {
        let schema = RawValue::from_string(
            r#"{"type":"object","required":["path","mode"],"properties":{}}"#.into(),
        )
        .unwrap();
        assert_eq!(missing(&schema, &words(&["mode"])), ["path"]);
        assert!(missing(&schema, &words(&["mode", "path"])).is_empty());
    }
}
