//! Validates the bytes of a config file: parses the JSON, walks the top
//! level and each toolbox (servers are walked in `servers`), and returns the
//! config with its warnings, or every problem found with its JSON path, so a
//! user fixes all of them in one round. Pure: no IO, and never logs
//! expanded values.

use super::checker::{child_path, show, valid_name, Checker, NAME_RULE, SERVER_LISTS};
use super::loaded::Loaded;
use super::model::{
    Config, Mode, OpenToolboxResult, ToolboxConfig, DEFAULT_SHARE_LINGER, NATIVE_NAME_DEFAULT_LEN,
    NATIVE_NAME_MAX_LEN, NATIVE_NAME_MIN_LEN,
};
use super::ordered_json::Node;
use super::problems::{ConfigError, Problem};
use std::path::Path;

/// Validates the bytes of a config file; `file` is its name for messages and
/// `folder` the absolute folder that relative paths are taken from. No IO.
pub fn parse(bytes: &[u8], file: &Path, folder: &Path) -> Result<Loaded, ConfigError> {
    let root: Node = serde_json::from_slice(bytes).map_err(|e| ConfigError {
        file: file.to_path_buf(),
        problems: vec![Problem {
            path: String::new(),
            message: format!(
                "line {} column {}: invalid JSON: {}",
                e.line(),
                e.column(),
                strip_position(&e.to_string())
            ),
            near_miss: None,
        }],
        warnings: Vec::new(),
    })?;
    let mut checker = Checker {
        folder: folder.to_path_buf(),
        ..Checker::default()
    };
    let config = checker.config(&root);
    if checker.errors.is_empty() {
        Ok(Loaded {
            config,
            warnings: checker.warnings,
            stamp: None,
        })
    } else {
        Err(ConfigError {
            file: file.to_path_buf(),
            problems: checker.errors,
            warnings: checker.warnings,
        })
    }
}

/// serde_json appends " at line L column C"; the message already says where.
fn strip_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

impl Checker {
    fn config(&mut self, root: &Node) -> Config {
        let mut config = Config {
            mode: Mode::Proxy,
            dynamic_name_max_length: NATIVE_NAME_DEFAULT_LEN,
            open_toolbox_result: OpenToolboxResult::Auto,
            share_servers: false,
            share_linger: DEFAULT_SHARE_LINGER,
            toolboxes: Vec::new(),
            pin_tools: false,
            file: None,
        };
        let known = [
            "mode",
            "toolboxes",
            "dynamicNameMaxLength",
            "openToolboxResult",
            "idleTimeoutMs",
            "shareServers",
            "shareLingerMs",
            "pinTools",
            "maxResultChars",
        ];
        let Some(entries) = self.object(root, "", &known) else {
            return config;
        };
        // The servers' defaults, wherever they are in the file.
        if let Some((key, value)) = entries.iter().find(|(k, _)| k == "idleTimeoutMs") {
            self.idle_timeout = self.idle_timeout(value, key);
        }
        if let Some((key, value)) = entries.iter().find(|(k, _)| k == "maxResultChars") {
            self.max_result_chars = self.result_chars(value, key);
        }
        let mut saw_toolboxes = false;
        for (key, value) in entries {
            match key.as_str() {
                "mode" => match value {
                    Node::String(m) if m == "proxy" => config.mode = Mode::Proxy,
                    Node::String(m) if m == "dynamic" => config.mode = Mode::Dynamic,
                    other => self.error(
                        "mode",
                        format!("expected \"proxy\" or \"dynamic\", found {}", show(other)),
                    ),
                },
                "dynamicNameMaxLength" => match value {
                    Node::Number(n)
                        if n.as_u64().is_some_and(|v| {
                            (NATIVE_NAME_MIN_LEN as u64..=NATIVE_NAME_MAX_LEN as u64).contains(&v)
                        }) =>
                    {
                        config.dynamic_name_max_length =
                            n.as_u64().map_or(NATIVE_NAME_DEFAULT_LEN, |v| v as usize);
                    }
                    other => self.error(
                        key,
                        format!(
                            "expected a whole number from {} to {}, found {}",
                            NATIVE_NAME_MIN_LEN,
                            NATIVE_NAME_MAX_LEN,
                            match other {
                                Node::Number(n) => n.to_string(),
                                _ => other.kind().to_string(),
                            }
                        ),
                    ),
                },
                "openToolboxResult" => match value {
                    Node::String(s) if OpenToolboxResult::parse(s).is_some() => {
                        config.open_toolbox_result =
                            OpenToolboxResult::parse(s).unwrap_or_default();
                    }
                    other => self.error(
                        key,
                        format!(
                            "expected \"auto\", \"full\" or \"compact\", found {}",
                            show(other)
                        ),
                    ),
                },
                "shareServers" => config.share_servers = self.boolean(value, key),
                "shareLingerMs" => {
                    config.share_linger = self.timeout(value, key, DEFAULT_SHARE_LINGER)
                }
                "pinTools" => config.pin_tools = self.boolean(value, key),
                "toolboxes" => {
                    saw_toolboxes = true;
                    self.toolboxes(value, &mut config.toolboxes);
                }
                _ => {}
            }
        }
        if !saw_toolboxes {
            match entries
                .iter()
                .find(|(k, _)| SERVER_LISTS.contains(&k.as_str()))
            {
                Some((key, servers)) => {
                    // The error says it all; the unknown-key warning would repeat it.
                    self.warnings.retain(|w| w.path != *key);
                    self.error("toolboxes", host_config_hint(key, servers));
                }
                None => self.error("toolboxes", "required object is missing"),
            }
        }
        config
    }

    fn toolboxes(&mut self, node: &Node, out: &mut Vec<ToolboxConfig>) {
        let Some(entries) = self.object(node, "toolboxes", &[]) else {
            return;
        };
        if entries.is_empty() {
            self.warning(
                "toolboxes".to_string(),
                "no toolboxes are defined yet: the workbench serves no tools until toolboxes are added to the file (it is read again when it changes)",
            );
        }
        for (name, value) in entries {
            let path = child_path("toolboxes", name);
            if !valid_name(name) {
                self.error(&path, NAME_RULE);
            }
            if let Some(toolbox) = self.toolbox(name, value, &path) {
                out.push(toolbox);
            }
        }
    }

    fn toolbox(&mut self, name: &str, node: &Node, path: &str) -> Option<ToolboxConfig> {
        let entries = self.object(node, path, &["description", "mcpServers"])?;
        let mut description = None;
        let mut servers = None;
        for (key, value) in entries {
            let key_path = child_path(path, key);
            match key.as_str() {
                "description" => {
                    description = self.string(value, &key_path);
                    if description.as_deref().is_some_and(|d| d.trim().is_empty()) {
                        self.error(&key_path, "must not be empty");
                    }
                }
                "mcpServers" => servers = Some(self.servers(value, &key_path)),
                _ => {}
            }
        }
        if !entries.iter().any(|(k, _)| k == "description") {
            self.error(
                &child_path(path, "description"),
                "required string is missing",
            );
        }
        if servers.is_none() {
            self.error(
                &child_path(path, "mcpServers"),
                "required object is missing",
            );
        }
        let servers = servers?;
        if servers.is_empty() && self.errors.is_empty() {
            self.warning(
                child_path(path, "mcpServers"),
                "toolbox has no servers; opening it returns no tools",
            );
        }
        Some(ToolboxConfig {
            name: name.to_string(),
            description: description?,
            servers,
        })
    }
}

/// The error for a host's config given to the workbench: how to wrap its
/// servers in a toolbox, with the server names it has.
fn host_config_hint(key: &str, servers: &Node) -> String {
    let names: Vec<String> = match servers {
        Node::Object(entries) => entries
            .iter()
            .take(3)
            .map(|(name, _)| format!("{name:?}: {{...}}"))
            .chain((entries.len() > 3).then(|| "...".to_string()))
            .collect(),
        _ => Vec::new(),
    };
    let listed = if names.is_empty() {
        "...".to_string()
    } else {
        names.join(", ")
    };
    format!(
        "required object is missing. This file looks like an MCP host's config (\"{key}\" at the top level); \
         the workbench groups servers into toolboxes. Wrap them in one:\n    \
         {{\"toolboxes\": {{\"main\": {{\"description\": \"What these servers are for\", \"mcpServers\": {{{listed}}}}}}}}}"
    )
}

/// Toolbox `t` (description `d`) of a config with one server `s`, written
/// as `server` (JSON), taken from the folder `/c`: for other modules' tests.
#[cfg(test)]
pub(crate) fn one_server_toolbox(server: &str) -> ToolboxConfig {
    let text = format!(
        r#"{{"toolboxes": {{"t": {{"description": "d", "mcpServers": {{"s": {server}}}}}}}}}"#
    );
    let (file, folder) = (Path::new("/c/c.json"), Path::new("/c"));
    let mut config = parse(text.as_bytes(), file, folder)
        .expect("a valid test config")
        .config;
    config.toolboxes.remove(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::model::{ToolFilter, ToolOverride, DEFAULT_CALL_TIMEOUT};

    fn strings(problems: &[Problem]) -> Vec<String> {
        problems.iter().map(Problem::to_string).collect()
    }

    fn check(json: &str) -> Result<(Config, Vec<String>), Vec<String>> {
        match parse(json.as_bytes(), Path::new("c.json"), Path::new("/cfg")) {
            Ok(loaded) => Ok((loaded.config, strings(&loaded.warnings))),
            Err(e) => Err(strings(&e.problems)),
        }
    }

    #[test]
    fn a_host_config_gets_a_toolbox_to_wrap_it_in() {
        let error = parse(
            br#"{"mcpServers": {"fs": {"command": "npx"}, "git": {"command": "uvx"}}, "globalShortcut": ""}"#,
            Path::new("claude_desktop_config.json"),
            Path::new("/cfg"),
        )
        .unwrap_err();
        assert_eq!(error.problems.len(), 1, "{error}");
        let problem = &error.problems[0];
        assert_eq!(problem.path, "toolboxes");
        assert!(problem.message.starts_with("required object is missing. This file looks like an MCP host's config (\"mcpServers\" at the top level)"), "{problem}");
        assert!(
            problem.message.ends_with(
                r#"{"toolboxes": {"main": {"description": "What these servers are for", "mcpServers": {"fs": {...}, "git": {...}}}}}"#
            ),
            "{problem}"
        );
        // The other unknown key is still reported; mcpServers is not reported twice.
        assert_eq!(
            strings(&error.warnings),
            ["globalShortcut: unknown key ignored (known keys: mode, toolboxes, dynamicNameMaxLength, openToolboxResult, idleTimeoutMs, shareServers, shareLingerMs, pinTools, maxResultChars)"]
        );
        let text = error.to_string();
        assert!(
            text.contains("and 1 warning:\n  claude_desktop_config.json: globalShortcut"),
            "{text}"
        );
        // VS Code's shape, with more servers than the hint lists.
        let errors = check(r#"{"servers": {"a": {}, "b": {}, "c": {}, "d": {}}}"#).unwrap_err();
        assert!(
            errors[0].contains(r#"("servers" at the top level)"#),
            "{errors:?}"
        );
        assert!(
            errors[0].contains(r#""mcpServers": {"a": {...}, "b": {...}, "c": {...}, ...}"#),
            "{errors:?}"
        );
        // Beside toolboxes, a top-level server list is a warning that says where servers go.
        let (_, warnings) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {}}}, "mcpServers": {}}"#,
        )
        .unwrap();
        assert_eq!(warnings[0], "mcpServers: unknown key ignored; servers belong in a toolbox: toolboxes.NAME.mcpServers");
    }

    #[test]
    fn unknown_keys_are_reported_with_errors_and_suggestions() {
        let error = parse(
            br#"{"toolboxes": {"dev": {"description": "d", "mcpServer": {"fs": {"command": "x"}}}}, "mdoe": "proxy"}"#,
            Path::new("c.json"),
            Path::new("/cfg"),
        )
        .unwrap_err();
        assert_eq!(
            strings(&error.problems),
            ["toolboxes.dev.mcpServers: required object is missing"]
        );
        assert_eq!(
            strings(&error.warnings),
            [
                "mdoe: unknown key ignored; did you mean 'mode'?",
                "toolboxes.dev.mcpServer: unknown key ignored; did you mean 'mcpServers'?",
            ]
        );
        let (_, warnings) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {"s": {"command": "x", "toolFilter": [], "zzz": 1}}}}}"#,
        )
        .unwrap();
        assert_eq!(
            warnings[0],
            "toolboxes.t.mcpServers.s.toolFilter: unknown key ignored; did you mean 'toolFilters'?"
        );
        assert!(warnings[1].starts_with(
            "toolboxes.t.mcpServers.s.zzz: unknown key ignored (known keys: command, args,"
        ));
    }

    #[test]
    #[cfg(unix)]
    fn paths_are_taken_from_the_config_folder() {
        let (config, _) = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {
                "a": {"command": "bin/server", "cwd": "data"},
                "b": {"command": "npx", "args": ["rel/arg"]}}}}}"#,
        )
        .unwrap();
        let none = |_: &str| None;
        let a = &config.toolboxes[0].servers[0];
        assert_eq!(a.command.expand(&none).unwrap(), "/cfg/bin/server");
        assert_eq!(a.cwd.as_ref().unwrap().expand(&none).unwrap(), "/cfg/data");
        let b = &config.toolboxes[0].servers[1];
        assert_eq!(b.command.expand(&none).unwrap(), "npx");
        assert_eq!(
            b.args[0].expand(&none).unwrap(),
            "rel/arg",
            "args are not paths"
        );
        let errors = check(
            r#"{"toolboxes": {"t": {"description": "d", "mcpServers": {"a": {"command": "~bob/s", "cwd": "~root"}}}}}"#,
        )
        .unwrap_err();
        assert!(
            errors[0].starts_with(
                "toolboxes.t.mcpServers.a.command: '~bob/s': only '~' and '~/...' are expanded"
            ),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("toolboxes.t.mcpServers.a.cwd: '~root'"),
            "{errors:?}"
        );
    }

    #[test]
    fn keeps_order_and_defaults() {
        let (config, warnings) = check(
            r#"{"toolboxes":{"zeta":{"description":"z","mcpServers":{
                "b":{"command":"x"},"a":{"command":"y","toolFilters":["*","t"],"extra":1}}},
               "alpha":{"description":"a","mcpServers":{}}}}"#,
        )
        .unwrap();
        let names: Vec<_> = config.toolboxes.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        let servers: Vec<_> = config.toolboxes[0]
            .servers
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(servers, ["b", "a"]);
        assert_eq!(config.toolboxes[0].servers[1].tool_filter, ToolFilter::All);
        assert_eq!(
            config.toolboxes[0].servers[0].call_timeout,
            DEFAULT_CALL_TIMEOUT
        );
        assert!(warnings[0].starts_with("toolboxes.zeta.mcpServers.a.extra: unknown key"));
        assert!(warnings[1].contains("toolboxes.alpha.mcpServers: toolbox has no servers"));
    }

    #[test]
    fn reports_every_problem_with_its_path() {
        let errors = check(
            r#"{"mode":"fast","toolboxes":{"a__b":{"description":"","mcpServers":{
                "s":{"args":[1],"type":"http","env":{"K":"${"},"callTimeoutMs":0},
                "t":{"command":"ok","toolFilters":"read"}}},
               "c":{"mcpServers":[]}}}"#,
        )
        .unwrap_err();
        let expected = [
            "mode: expected \"proxy\" or \"dynamic\", found \"fast\"",
            "toolboxes.a__b: name must be",
            "toolboxes.a__b.description: must not be empty",
            "toolboxes.a__b.mcpServers.s.args[0]: expected a string, found a number",
            "toolboxes.a__b.mcpServers.s.env.K: unclosed '${'",
            "toolboxes.a__b.mcpServers.s.callTimeoutMs: expected a whole number",
            "toolboxes.a__b.mcpServers.s.type: is a remote server's type, which needs \"url\"",
            "toolboxes.a__b.mcpServers.s.command: required string is missing",
            "toolboxes.a__b.mcpServers.t.toolFilters: expected an array",
            "toolboxes.c.mcpServers: expected an object, found an array",
            "toolboxes.c.description: required string is missing",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (got, want) in errors.iter().zip(expected) {
            assert!(got.starts_with(want), "{got:?} should start with {want:?}");
        }
    }

    #[test]
    fn dynamic_name_max_length() {
        let config = |extra: &str| {
            check(&format!(
                r#"{{{extra}"toolboxes":{{"t":{{"description":"d","mcpServers":{{}}}}}}}}"#
            ))
        };
        assert_eq!(
            config("").unwrap().0.dynamic_name_max_length,
            NATIVE_NAME_DEFAULT_LEN
        );
        assert_eq!(
            config(r#""dynamicNameMaxLength":64,"#)
                .unwrap()
                .0
                .dynamic_name_max_length,
            64
        );
        for bad in ["23", "65", "40.5", "\"48\""] {
            let errors = config(&format!(r#""dynamicNameMaxLength":{bad},"#)).unwrap_err();
            assert!(
                errors[0]
                    .starts_with("dynamicNameMaxLength: expected a whole number from 24 to 64"),
                "{errors:?}"
            );
        }
    }

    #[test]
    fn open_toolbox_result() {
        let config = |extra: &str| {
            check(&format!(
                r#"{{{extra}"toolboxes":{{"t":{{"description":"d","mcpServers":{{}}}}}}}}"#
            ))
        };
        let setting = |extra: &str| config(extra).unwrap().0.open_toolbox_result;
        assert_eq!(setting(""), OpenToolboxResult::Auto);
        assert_eq!(
            setting(r#""openToolboxResult":"compact","#),
            OpenToolboxResult::Compact
        );
        assert_eq!(
            setting(r#""openToolboxResult":"full","#),
            OpenToolboxResult::Full
        );
        let errors = config(r#""openToolboxResult":"short","#).unwrap_err();
        assert_eq!(
            errors,
            ["openToolboxResult: expected \"auto\", \"full\" or \"compact\", found \"short\""]
        );
    }

    #[test]
    fn idle_timeout_per_server_with_a_top_level_default() {
        let (config, _) = check(
            r#"{"toolboxes":{"t":{"description":"d","mcpServers":{
                "default":{"command":"x"},"own":{"command":"x","idleTimeoutMs":300},
                "never":{"command":"x","idleTimeoutMs":0}}}},
               "idleTimeoutMs":60000}"#,
        )
        .unwrap();
        let idle: Vec<_> = config.toolboxes[0]
            .servers
            .iter()
            .map(|s| s.idle_timeout.map(|d| d.as_millis()))
            .collect();
        assert_eq!(idle, [Some(60_000), Some(300), None]);
        let (config, _) =
            check(r#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#)
                .unwrap();
        assert_eq!(
            config.toolboxes[0].servers[0].idle_timeout, None,
            "never by default"
        );
        let errors = check(
            r#"{"idleTimeoutMs":-1,"toolboxes":{"t":{"description":"d","mcpServers":{
                "s":{"command":"x","idleTimeoutMs":"5m"}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            errors,
            [
                "idleTimeoutMs: expected a whole number of milliseconds from 0 (never) to 86400000, found -1",
                "toolboxes.t.mcpServers.s.idleTimeoutMs: expected a whole number of milliseconds from 0 (never) to 86400000, found a string",
            ]
        );
    }

    #[test]
    fn trust_and_size_keys() {
        let (config, warnings) = check(
            r#"{"pinTools":true,"maxResultChars":2000,"toolboxes":{"t":{"description":"d","mcpServers":{
                "a":{"command":"x"},
                "b":{"command":"x","maxResultChars":500,
                     "toolOverrides":{"q":{"description":"better","title":"Q"},"r":{}}}}}}}"#,
        )
        .unwrap();
        assert!(config.pin_tools);
        let servers = &config.toolboxes[0].servers;
        assert_eq!(servers[0].max_result_chars, Some(2000), "the top level's");
        assert_eq!(servers[1].max_result_chars, Some(500), "its own");
        assert_eq!(
            servers[1].tool_overrides[0],
            (
                "q".to_string(),
                ToolOverride {
                    description: Some("better".into()),
                    title: Some("Q".into())
                }
            )
        );
        assert_eq!(
            warnings,
            ["toolboxes.t.mcpServers.b.toolOverrides.r: names neither \"description\" nor \"title\": nothing is replaced"]
        );
        let (config, _) =
            check(r#"{"toolboxes":{"t":{"description":"d","mcpServers":{"s":{"command":"x"}}}}}"#)
                .unwrap();
        assert!(!config.pin_tools);
        assert_eq!(config.toolboxes[0].servers[0].max_result_chars, None);
        let errors = check(
            r#"{"pinTools":"yes","maxResultChars":10,"toolboxes":{"t":{"description":"d","mcpServers":{
                "s":{"command":"x","maxResultChars":"big","toolOverrides":{"q":{"description":1,"titel":"x"}}}}}}}"#,
        )
        .unwrap_err();
        assert_eq!(
            errors,
            [
                "maxResultChars: expected a whole number of characters from 500, found 10",
                "pinTools: expected true or false, found a string",
                "toolboxes.t.mcpServers.s.maxResultChars: expected a whole number of characters from 500, found a string",
                "toolboxes.t.mcpServers.s.toolOverrides.q.description: expected a string, found a number",
            ]
        );
    }
}
