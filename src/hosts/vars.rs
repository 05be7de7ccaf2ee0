//! A host's variables in a string, turned into the workbench's templates
//! (docs/reference.md §3.4): `${env:X}` (Cursor, VS Code, Windsurf) and `$X`
//! (Gemini CLI) become `${X}`; VS Code's `${input:id}` becomes a `${VAR}` the
//! user sets, with a note naming it; `${userHome}` and, in a project's file,
//! `${workspaceFolder}` become the folder they stand for. What has no
//! equivalent (`${workspaceFolder}` in a user's file, `${command:...}`) is an
//! error the caller lists. Text a host takes literally is escaped so that
//! the workbench takes it literally too (`$$`). No IO.

use std::path::Path;

/// How a host reads `$` in its strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// No variables: every character is literal (Claude Desktop, Codex).
    Literal,
    /// `${VAR}` and `${VAR:-default}`, as the workbench (Claude Code).
    Posix,
    /// `${env:VAR}`, `${userHome}`, `${workspaceFolder}`, `${input:id}`
    /// (Cursor, VS Code, Windsurf).
    Editor,
    /// `$VAR` and `${VAR}` (Gemini CLI).
    Dollar,
}

/// What the variables stand for where the file was found.
pub(crate) struct Context<'a> {
    pub home: &'a Path,
    /// The project's folder, for a project's file.
    pub project: Option<&'a Path>,
    /// VS Code's `inputs`: id and description.
    pub inputs: &'a [(String, String)],
    pub separator: char,
}

impl<'a> Context<'a> {
    /// The context of a file with no `inputs`, on this system.
    pub(crate) fn of_file(home: &'a Path, project: Option<&'a Path>) -> Context<'a> {
        Context {
            home,
            project,
            inputs: &[],
            separator: std::path::MAIN_SEPARATOR,
        }
    }
}

/// `text` as a workbench template; `notes` gets what the user must do (an
/// input's variable to set). The error says what cannot be mapped.
pub(crate) fn translate(
    text: &str,
    syntax: Syntax,
    cx: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if syntax != Syntax::Literal {
            if let Some(body) = after.strip_prefix('{') {
                if let Some(end) = body.find('}') {
                    let inner = &body[..end];
                    if let Some(replacement) = reference(inner, syntax, cx, notes)? {
                        out.push_str(&replacement);
                        rest = &body[end + 1..];
                        continue;
                    }
                }
            } else if syntax == Syntax::Dollar {
                let len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                if len > 0 && valid_name(&after[..len]) {
                    out.push_str(&format!("${{{}}}", &after[..len]));
                    rest = &after[len..];
                    continue;
                }
            }
        }
        out.push_str(literal_dollar(after));
        rest = after;
    }
    out.push_str(rest);
    Ok(out)
}

/// A `$` taken literally, before `after`: doubled where the workbench would
/// read it as the start of a reference or of `$$`.
fn literal_dollar(after: &str) -> &'static str {
    if after.starts_with(['$', '{']) {
        "$$"
    } else {
        "$"
    }
}

/// Literal text as a template.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '$' {
            out.push_str(literal_dollar(&text[i + 1..]));
        } else {
            out.push(c);
        }
    }
    out
}

/// What `${inner}` becomes; `None`: not a reference in this syntax (kept as
/// literal text).
fn reference(
    inner: &str,
    syntax: Syntax,
    cx: &Context<'_>,
    notes: &mut Vec<String>,
) -> Result<Option<String>, String> {
    let ours = |body: &str| -> Result<String, String> {
        crate::config::expand::Template::parse(&format!("${{{body}}}"))
            .map(|_| format!("${{{body}}}"))
            .map_err(|_| {
                format!("'${{{inner}}}' is not a variable reference the workbench can read")
            })
    };
    match syntax {
        Syntax::Literal => Ok(None),
        Syntax::Posix => ours(inner).map(Some),
        Syntax::Dollar => {
            if valid_name(inner) {
                Ok(Some(format!("${{{inner}}}")))
            } else {
                Err(format!(
                    "'${{{inner}}}' has no equivalent in the workbench's config"
                ))
            }
        }
        Syntax::Editor => {
            if let Some(name) = inner.strip_prefix("env:") {
                return if valid_name(name) {
                    Ok(Some(format!("${{{name}}}")))
                } else {
                    Err(format!(
                        "'${{{inner}}}' names no valid environment variable"
                    ))
                };
            }
            if let Some(id) = inner.strip_prefix("input:") {
                let var = input_variable(id);
                let what = cx
                    .inputs
                    .iter()
                    .find(|(known, _)| known == id)
                    .map(|(_, description)| description.as_str())
                    .filter(|d| !d.is_empty())
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                let note = format!(
                    "set {var} in the environment the workbench runs in: VS Code asked for input '{id}'{what}"
                );
                if !notes.contains(&note) {
                    notes.push(note);
                }
                return Ok(Some(format!("${{{var}}}")));
            }
            let folder = |path: &Path| escape(&path.to_string_lossy());
            match inner {
                "userHome" => Ok(Some(folder(cx.home))),
                "pathSeparator" | "/" => Ok(Some(cx.separator.to_string())),
                "workspaceFolder" | "workspaceRoot" => cx
                    .project
                    .map(folder)
                    .map(Some)
                    .ok_or_else(|| format!("'${{{inner}}}' has no value outside a project (this entry is in the user's own file)")),
                "workspaceFolderBasename" => cx
                    .project
                    .and_then(Path::file_name)
                    .map(|n| Some(escape(&n.to_string_lossy())))
                    .ok_or_else(|| format!("'${{{inner}}}' has no value outside a project (this entry is in the user's own file)")),
                _ if valid_name(inner) || inner.contains(":-") => ours(inner).map(Some),
                _ => Err(format!("'${{{inner}}}' has no equivalent in the workbench's config")),
            }
        }
    }
}

/// The environment variable an input becomes: its id in capitals, every
/// other character an underscore (`github-token`: `GITHUB_TOKEN`).
pub(crate) fn input_variable(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert_str(0, "INPUT_");
    }
    name
}

/// `[A-Za-z_][A-Za-z0-9_]*`, the workbench's variable names.
pub(crate) fn valid_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(
        text: &str,
        syntax: Syntax,
        project: Option<&str>,
    ) -> (Result<String, String>, Vec<String>) {
        let inputs = [("api-key".to_string(), "Your API key".to_string())];
        let cx = Context {
            home: Path::new("/home/u"),
            project: project.map(Path::new),
            inputs: &inputs,
            separator: '/',
        };
        let mut notes = Vec::new();
        (translate(text, syntax, &cx, &mut notes), notes)
    }

    fn ok(text: &str, syntax: Syntax) -> String {
        run(text, syntax, Some("/p/proj")).0.unwrap()
    }

    #[test]
    fn each_hosts_variables() {
        // Literal hosts: whatever looks like a reference stays literal.
        assert_eq!(ok("a ${B} $$ $c", Syntax::Literal), "a $${B} $$$ $c");
        assert_eq!(ok("${A} ${B:-x} $C", Syntax::Posix), "${A} ${B:-x} $C");
        assert_eq!(
            ok("$TOKEN and ${OTHER}", Syntax::Dollar),
            "${TOKEN} and ${OTHER}"
        );
        assert_eq!(
            ok(
                "${env:GH} ${userHome}/x ${workspaceFolder}${/}${workspaceFolderBasename} ${PLAIN}",
                Syntax::Editor
            ),
            "${GH} /home/u/x /p/proj/proj ${PLAIN}"
        );
        let (out, notes) = run("Bearer ${input:api-key}", Syntax::Editor, None);
        assert_eq!(out.unwrap(), "Bearer ${API_KEY}");
        assert_eq!(
            notes,
            ["set API_KEY in the environment the workbench runs in: VS Code asked for input 'api-key' (Your API key)"]
        );
        assert_eq!(input_variable("9lives"), "INPUT_9LIVES");
    }

    #[test]
    fn what_has_no_equivalent_is_an_error() {
        let err = |text: &str, syntax, project| run(text, syntax, project).0.unwrap_err();
        assert!(err("${workspaceFolder}/x", Syntax::Editor, None)
            .contains("has no value outside a project"));
        assert!(err("${command:pick}", Syntax::Editor, Some("/p")).contains("has no equivalent"));
        assert!(
            err("${env:1X}", Syntax::Editor, None).contains("names no valid environment variable")
        );
        assert!(err("${A:=b}", Syntax::Posix, None).contains("not a variable reference"));
        assert!(err("${a.b}", Syntax::Dollar, None).contains("has no equivalent"));
    }

    #[test]
    fn escaping_keeps_literal_text_literal() {
        for text in ["plain", "$", "$$", "${X}", "a$b", "cost: $5 {x}"] {
            let escaped = escape(text);
            let template = crate::config::expand::Template::parse(&escaped).unwrap();
            assert_eq!(template.expand(&|_| None).unwrap(), text, "{escaped}");
        }
    }
}
