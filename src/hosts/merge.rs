//! The workbench's config with the imported toolboxes added: every key and
//! toolbox already there kept as it is, in its order (but a description
//! import fills in), and the new toolboxes after them (their names are
//! already free: `plan`). A config that is not an object, or whose
//! `toolboxes` is not one, is refused rather than rewritten. No IO.

use crate::config::ordered_json::Node;

/// `existing` (`None`: no file yet) with `toolboxes` appended.
pub(crate) fn merge(
    existing: Option<&Node>,
    toolboxes: Vec<(String, Node)>,
) -> Result<Node, String> {
    let mut root = match existing {
        None => Vec::new(),
        Some(Node::Object(entries)) => entries.clone(),
        Some(other) => {
            return Err(format!(
                "the workbench config is {}, not an object: fix it first (nothing was written)",
                other.kind()
            ))
        }
    };
    match root.iter_mut().find(|(k, _)| k == "toolboxes") {
        Some((_, Node::Object(existing))) => existing.extend(toolboxes),
        Some((_, other)) => {
            return Err(format!(
                "\"toolboxes\" in the workbench config is {}, not an object: fix it first (nothing was written)",
                other.kind()
            ))
        }
        None => root.push(("toolboxes".into(), Node::Object(toolboxes))),
    }
    Ok(Node::Object(root))
}

/// Sets the description of toolbox `name` of config `root` to `text`, in
/// its place; whether there was such a toolbox.
pub(crate) fn describe(root: &mut Node, name: &str, text: &str) -> bool {
    let Node::Object(keys) = root else {
        return false;
    };
    let toolbox = keys
        .iter_mut()
        .find(|(k, _)| k == "toolboxes")
        .and_then(|(_, toolboxes)| match toolboxes {
            Node::Object(toolboxes) => toolboxes.iter_mut().find(|(k, _)| k == name),
            _ => None,
        });
    let Some((_, Node::Object(body))) = toolbox else {
        return false;
    };
    match body.iter_mut().find(|(k, _)| k == "description") {
        Some((_, value)) => *value = Node::String(text.to_string()),
        None => body.insert(0, ("description".into(), Node::String(text.to_string()))),
    }
    true
}

/// A toolbox of one server: `{"description": ..., "mcpServers": {name: entry}}`.
pub(crate) fn toolbox(description: &str, server: &str, entry: Node) -> Node {
    Node::Object(vec![
        ("description".into(), Node::String(description.to_string())),
        (
            "mcpServers".into(),
            Node::Object(vec![(server.to_string(), entry)]),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_is_there_and_appends() {
        let existing: Node = serde_json::from_str(
            r#"{"mode":"proxy","toolboxes":{"z":{"description":"old","mcpServers":{}}},"pinTools":true}"#,
        )
        .unwrap();
        let new = vec![("a".to_string(), toolbox("new", "a", Node::Null))];
        let merged = merge(Some(&existing), new.clone()).unwrap();
        assert_eq!(
            serde_json::to_string(&merged).unwrap(),
            r#"{"mode":"proxy","toolboxes":{"z":{"description":"old","mcpServers":{}},"a":{"description":"new","mcpServers":{"a":null}}},"pinTools":true}"#
        );
        assert_eq!(
            serde_json::to_string(&merge(None, new.clone()).unwrap()).unwrap(),
            r#"{"toolboxes":{"a":{"description":"new","mcpServers":{"a":null}}}}"#
        );
        let mut described = merged.clone();
        assert!(describe(&mut described, "z", "filled"));
        assert!(!describe(&mut described, "nope", "x"));
        assert_eq!(
            serde_json::to_string(&described).unwrap(),
            r#"{"mode":"proxy","toolboxes":{"z":{"description":"filled","mcpServers":{}},"a":{"description":"new","mcpServers":{"a":null}}},"pinTools":true}"#
        );
        let bad: Node = serde_json::from_str(r#"{"toolboxes":[]}"#).unwrap();
        assert!(merge(Some(&bad), new)
            .unwrap_err()
            .contains("not an object"));
    }
}
