//! The TOML subset against the public toml-test suite
//! (`testdata/toml-test/`, written by `scripts/toml-test`, whose README says
//! the source and how the cases were sorted): every valid case within the
//! subset parses to the suite's expected values and passes `toml_check`
//! (its edits round-trip byte for byte), every valid case outside the subset
//! is refused saying what is not supported, and every invalid case is
//! refused. Tests only.

use super::toml::{self, Value};
use super::toml_check;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/toml-test")
}

/// The `.toml` files under `folder`, sorted.
fn cases(folder: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "toml") {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&suite().join(folder), &mut out);
    out.sort();
    assert!(
        !out.is_empty(),
        "no cases in {folder}: run scripts/toml-test"
    );
    out
}

/// A case as the workbench reads a host's file: text, or not UTF-8.
fn read(path: &Path) -> Option<String> {
    String::from_utf8(std::fs::read(path).unwrap()).ok()
}

/// `value` in the suite's JSON form: tables as objects, arrays as arrays,
/// scalars as `{"type", "value"}`.
fn tagged(value: &Value) -> Json {
    let scalar = |kind: &str, text: String| serde_json::json!({"type": kind, "value": text});
    match value {
        Value::String(s) => scalar("string", s.clone()),
        Value::Integer(n) => scalar("integer", n.to_string()),
        Value::Float(f) => scalar("float", f.to_string()),
        Value::Bool(b) => scalar("bool", b.to_string()),
        Value::Array(items) => Json::Array(items.iter().map(tagged).collect()),
        Value::Table(t) => Json::Object(
            t.entries
                .iter()
                .map(|(k, v)| (k.clone(), tagged(v)))
                .collect(),
        ),
    }
}

/// Whether `got` is `expected`, floats compared as numbers.
fn same(got: &Json, expected: &Json) -> bool {
    match (got, expected) {
        (Json::Object(g), Json::Object(e)) if e.get("type") == Some(&"float".into()) => {
            let number = |v: &Json| {
                let text = v.get("value")?.as_str()?;
                let text = text.trim_start_matches('+');
                if text.ends_with("nan") {
                    return Some(f64::NAN);
                }
                text.parse::<f64>().ok()
            };
            match (
                number(&Json::Object(g.clone())),
                number(&Json::Object(e.clone())),
            ) {
                (Some(a), Some(b)) => {
                    g.get("type") == e.get("type") && (a == b || a.is_nan() && b.is_nan())
                }
                _ => false,
            }
        }
        (Json::Object(g), Json::Object(e)) => {
            g.len() == e.len()
                && e.iter()
                    .all(|(k, ev)| g.get(k).is_some_and(|gv| same(gv, ev)))
        }
        (Json::Array(g), Json::Array(e)) => {
            g.len() == e.len() && g.iter().zip(e).all(|(a, b)| same(a, b))
        }
        _ => got == expected,
    }
}

fn name(path: &Path) -> String {
    path.strip_prefix(suite()).unwrap().display().to_string()
}

#[test]
fn valid_cases_within_the_subset_parse_and_round_trip() {
    let mut failed = Vec::new();
    for path in cases("valid") {
        let text = read(&path).unwrap();
        let expected: Json =
            serde_json::from_slice(&std::fs::read(path.with_extension("json")).unwrap()).unwrap();
        match toml::parse(&text) {
            Err(e) => failed.push(format!("{}: refused: {e}", name(&path))),
            Ok(doc) => {
                let got = tagged(&Value::Table(doc.root));
                if !same(&got, &expected) {
                    failed.push(format!("{}: read as {got}", name(&path)));
                } else if let Err(e) = toml_check::check(&text) {
                    failed.push(format!("{}: {e}", name(&path)));
                }
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn valid_cases_outside_the_subset_are_refused_saying_what() {
    let mut failed = Vec::new();
    for path in cases("outside") {
        let text = read(&path).unwrap();
        match toml::parse(&text) {
            Ok(_) => failed.push(format!("{}: read", name(&path))),
            Err(e) if !e.message.contains("not supported here") => {
                failed.push(format!("{}: {e}", name(&path)))
            }
            Err(_) => {}
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn invalid_cases_are_refused() {
    let mut failed = Vec::new();
    for path in cases("invalid") {
        // Not UTF-8: refused when the file is read, before any parse.
        let Some(text) = read(&path) else { continue };
        if toml::parse(&text).is_ok() {
            failed.push(name(&path));
        }
        if let Err(e) = toml_check::check(&text) {
            failed.push(format!("{}: {e}", name(&path)));
        }
    }
    assert!(
        failed.is_empty(),
        "{} read:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
