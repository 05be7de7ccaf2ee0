//! Environment-variable references in config strings (`command`, `args`, `env`
//! values, `cwd`), and the environment a child process receives.
//!
//! Grammar, checked when the config is loaded:
//! - `${NAME}`: the variable's value; NAME is `[A-Za-z_][A-Za-z0-9_]*`.
//! - `${NAME:-default}`: the default when NAME is unset or empty (as in POSIX).
//!   The default is literal text up to the first `}`; `$$` inside it is a `$`.
//! - `$$`: a literal `$`.
//! - A `$` followed by anything else is kept as it is, so `sh -c 'echo $HOME'`
//!   needs no escaping.
//!
//! Anything else starting with `${` (no closing brace, a bad name, another
//! operator) is a config error. References are resolved only when a toolbox is
//! opened, so an unset variable fails that toolbox and nothing else. Expanded
//! values are secrets as far as this crate knows: they are never logged.
//!
//! A template that holds a path (`cwd`, `command`) carries an [`Anchor`]: after
//! expansion, a leading `~` becomes `$HOME`, and a relative path is taken from
//! the config file's folder, not from the workbench's working directory (GUI
//! hosts start it in `/`). This module does no IO: the folder is given.

use crate::sys;
use std::collections::BTreeMap;
use std::path::{is_separator, Path, PathBuf};

/// A config string with its references parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    source: String,
    parts: Vec<Part>,
    anchor: Anchor,
}

/// How an expanded value that is a path is completed.
#[derive(Debug, Clone, PartialEq)]
pub enum Anchor {
    /// Not a path: the value is used as it is (`args`, `env`).
    None,
    /// A directory (`cwd`): a relative value is taken from this folder.
    Dir(PathBuf),
    /// A program (`command`): a relative value that contains a path separator
    /// is taken from this folder; a bare name is left for the `PATH` search.
    Program(PathBuf),
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Var {
        name: String,
        default: Option<String>,
    },
}

impl Template {
    /// Parses `source`; the error explains the first malformed reference.
    pub fn parse(source: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = source;
        while let Some(pos) = rest.find('$') {
            literal.push_str(&rest[..pos]);
            let after = &rest[pos + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                literal.push('$');
                rest = tail;
            } else if let Some(body) = after.strip_prefix('{') {
                let end = body
                    .find('}')
                    .ok_or_else(|| format!("unclosed '${{' in {source:?}"))?;
                let var = parse_reference(&body[..end])?;
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(var);
                rest = &body[end + 1..];
            } else {
                literal.push('$');
                rest = after;
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Template {
            source: source.to_string(),
            parts,
            anchor: Anchor::None,
        })
    }

    /// The same template, its expanded value completed as a path by `anchor`.
    pub fn anchored(self, anchor: Anchor) -> Template {
        Template { anchor, ..self }
    }

    /// The text as written in the config: safe to log.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the text holds a `${...}` reference: then its expanded value
    /// may hold a secret, and is never logged.
    pub fn has_references(&self) -> bool {
        self.parts.iter().any(|p| matches!(p, Part::Var { .. }))
    }

    /// Each reference's value through `lookup` (those set and not empty),
    /// with the reference as written (`${NAME}`): what a message shows in
    /// place of a value expanded from this template.
    pub fn references(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
        self.parts
            .iter()
            .filter_map(|part| match part {
                Part::Var { name, .. } => lookup(name)
                    .filter(|value| !value.is_empty())
                    .map(|value| (value, format!("${{{name}}}"))),
                Part::Literal(_) => None,
            })
            .collect()
    }

    /// The value with every reference resolved through `lookup`; the error names
    /// the first variable that is unset and has no default.
    pub fn expand(&self, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Var { name, default } => match (lookup(name), default) {
                    (Some(value), Some(default)) if value.is_empty() => out.push_str(default),
                    (Some(value), _) => out.push_str(&value),
                    (None, Some(default)) => out.push_str(default),
                    (None, None) => return Err(name.clone()),
                },
            }
        }
        match &self.anchor {
            Anchor::None => Ok(out),
            Anchor::Dir(base) => anchor_path(out, base, true, lookup),
            Anchor::Program(base) => {
                let has_separator = out.chars().any(is_separator);
                anchor_path(out, base, has_separator, lookup)
            }
        }
    }
}

/// `~` or `~/...` becomes the home folder (`sys::HOME`: `$HOME`, or
/// `%USERPROFILE%` on Windows, where `~\...` works too; unset, it is reported
/// like any unset variable); then a relative path is joined to `base` when
/// `relative_to_base`.
fn anchor_path(
    value: String,
    base: &Path,
    relative_to_base: bool,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    if let Some(rest) = home_relative(&value) {
        let home = lookup(sys::HOME)
            .filter(|h| !h.is_empty())
            .ok_or_else(|| sys::HOME.to_string())?;
        return Ok(format!("{home}{rest}"));
    }
    if relative_to_base && !value.is_empty() && Path::new(&value).is_relative() {
        return Ok(base.join(&value).to_string_lossy().into_owned());
    }
    Ok(value)
}

/// The problem with a path that starts with `~` in a form that is not
/// expanded (`~user`), if it does.
pub(crate) fn unsupported_tilde(path: &str) -> Option<String> {
    if !path.starts_with('~') || home_relative(path).is_some() {
        return None;
    }
    Some(format!(
        "'{path}': only '~' and '~/...' are expanded (to your home folder); write the absolute path instead"
    ))
}

/// What follows the `~` of a path that is `~` or starts with `~` and a
/// separator: the part to append to the home folder.
pub(crate) fn home_relative(path: &str) -> Option<&str> {
    let rest = path.strip_prefix('~')?;
    (rest.is_empty() || rest.starts_with(is_separator)).then_some(rest)
}

fn parse_reference(body: &str) -> Result<Part, String> {
    let (name, default) = match body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        None => (body, None),
        Some(i) => match body[i..].strip_prefix(":-") {
            Some(default) => (&body[..i], Some(default)),
            None => {
                return Err(format!(
                    "'${{{body}}}' is not a valid reference; use ${{NAME}} or ${{NAME:-default}}"
                ))
            }
        },
    };
    let valid_name = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !valid_name {
        return Err(format!(
            "'${{{body}}}' has an invalid variable name (expected [A-Za-z_][A-Za-z0-9_]*)"
        ));
    }
    if default.is_some_and(|d| d.contains("${")) {
        return Err(format!(
            "'${{{body}}}': nested references in a default are not supported"
        ));
    }
    Ok(Part::Var {
        name: name.to_string(),
        default: default.map(|d| d.replace("$$", "$")),
    })
}

/// The environment of a child: the allow-list (or everything, with `inherit`)
/// from `parent`, overlaid with the server's own `env`.
/// A session's environment, by name: what a shared fleet expands that
/// session's toolboxes with (docs/reference.md §8).
pub(crate) type Vars = BTreeMap<String, String>;

pub(crate) fn child_env(
    parent: &dyn Fn(&str) -> Option<String>,
    all_parent: impl Iterator<Item = (String, String)>,
    inherit: bool,
    own: &[(String, String)],
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = if inherit {
        all_parent.collect()
    } else {
        sys::ALLOWED_ENV
            .iter()
            .filter_map(|k| parent(k).map(|v| (k.to_string(), v)))
            .collect()
    };
    env.extend(own.iter().cloned());
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(name: &str) -> Option<String> {
        match name {
            "SET" => Some("value".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn expand(s: &str) -> Result<String, String> {
        Template::parse(s).unwrap().expand(&lookup)
    }

    #[test]
    fn grammar() {
        assert_eq!(expand("a${SET}b").unwrap(), "avalueb");
        assert_eq!(expand("${UNSET:-dflt}").unwrap(), "dflt");
        assert_eq!(expand("${EMPTY:-dflt}").unwrap(), "dflt");
        assert_eq!(expand("${EMPTY}").unwrap(), "");
        assert_eq!(expand("${SET:-dflt}").unwrap(), "value");
        assert_eq!(
            expand("cost $$5 and $HOME $").unwrap(),
            "cost $5 and $HOME $"
        );
        assert_eq!(expand("${UNSET:-a$$b}").unwrap(), "a$b");
        assert_eq!(expand("${UNSET:-}").unwrap(), "");
        assert_eq!(expand("${UNSET}").unwrap_err(), "UNSET");
    }

    #[test]
    #[cfg(windows)]
    fn windows_paths_are_anchored_to_the_config_folder() {
        let base = PathBuf::from(r"C:\Users\me\cfg");
        let lookup = |n: &str| (n == sys::HOME).then(|| r"C:\Users\me".to_string());
        let anchored = |s: &str, anchor: Anchor| {
            let template = Template::parse(s).unwrap().anchored(anchor);
            template.expand(&lookup).unwrap()
        };
        let dir = |s: &str| anchored(s, Anchor::Dir(base.clone()));
        let program = |s: &str| anchored(s, Anchor::Program(base.clone()));
        assert_eq!(dir("data"), r"C:\Users\me\cfg\data");
        assert_eq!(dir(r"sub\data"), r"C:\Users\me\cfg\sub\data");
        assert_eq!(dir(r"D:\srv\data"), r"D:\srv\data");
        assert_eq!(dir(r"~\notes"), r"C:\Users\me\notes");
        assert_eq!(dir("~/notes"), r"C:\Users\me/notes");
        assert_eq!(
            program(r"bin\server.exe"),
            r"C:\Users\me\cfg\bin\server.exe"
        );
        assert_eq!(
            program(r"C:\Program Files\nodejs\npx.cmd"),
            r"C:\Program Files\nodejs\npx.cmd"
        );
        assert_eq!(program("npx"), "npx");
    }

    #[test]
    #[cfg(unix)]
    fn paths_are_anchored_to_the_config_folder() {
        let base = PathBuf::from("/cfg/dir");
        let dir = |s: &str, home: Option<&str>| {
            let home = home.map(str::to_string);
            Template::parse(s)
                .unwrap()
                .anchored(Anchor::Dir(base.clone()))
                .expand(&|n| {
                    if n == sys::HOME {
                        home.clone()
                    } else {
                        lookup(n)
                    }
                })
        };
        let program = |s: &str| {
            Template::parse(s)
                .unwrap()
                .anchored(Anchor::Program(base.clone()))
                .expand(&lookup)
        };
        assert_eq!(dir("data", None).unwrap(), "/cfg/dir/data");
        assert_eq!(dir("./a/${SET}", None).unwrap(), "/cfg/dir/./a/value");
        assert_eq!(dir("/abs", None).unwrap(), "/abs");
        assert_eq!(dir("~/x", Some("/home/u")).unwrap(), "/home/u/x");
        assert_eq!(dir("~", Some("/home/u")).unwrap(), "/home/u");
        assert_eq!(dir("~/x", None).unwrap_err(), sys::HOME);
        assert_eq!(dir("~/x", Some("")).unwrap_err(), sys::HOME);
        assert_eq!(program("npx").unwrap(), "npx", "a bare name uses PATH");
        assert_eq!(program("bin/server").unwrap(), "/cfg/dir/bin/server");
        assert_eq!(program("../${SET}/s").unwrap(), "/cfg/dir/../value/s");
        assert_eq!(program("/usr/bin/env").unwrap(), "/usr/bin/env");
        // Not a path: left alone.
        assert_eq!(expand("~/x").unwrap(), "~/x");
        assert_eq!(expand("rel/x").unwrap(), "rel/x");
        assert!(unsupported_tilde("~bob/x").unwrap().contains("'~bob/x'"));
        assert_eq!(unsupported_tilde("~/x"), None);
        assert_eq!(unsupported_tilde("~"), None);
        assert_eq!(unsupported_tilde("a~"), None);
    }

    #[test]
    fn malformed() {
        for bad in [
            "${",
            "${NAME",
            "${}",
            "${1X}",
            "${A:B}",
            "${A-b}",
            "${A:-${B}}",
        ] {
            assert!(Template::parse(bad).is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn child_env_is_allow_list_plus_own() {
        let parent = |k: &str| match k {
            "PATH" => Some("/bin".to_string()),
            "SECRET" => Some("s".to_string()),
            _ => None,
        };
        let all = || {
            vec![
                ("PATH".into(), "/bin".into()),
                ("SECRET".into(), "s".into()),
            ]
        };
        let own = [("X".to_string(), "1".to_string())];
        let env = child_env(&parent, all().into_iter(), false, &own);
        assert_eq!(env.keys().collect::<Vec<_>>(), ["PATH", "X"]);
        let env = child_env(&parent, all().into_iter(), true, &own);
        assert_eq!(env.keys().collect::<Vec<_>>(), ["PATH", "SECRET", "X"]);
    }
}
