//! `import` and `install` through the real binary, on the hosts' own files
//! (`testdata/hosts/`, every host in the shape it writes) in a sandboxed
//! home: a dry run changes nothing and shows no secret; `--write` merges
//! into a config that exists, keeps it, suffixes a clash and backs it up;
//! a server in two hosts comes once; what cannot be mapped is listed;
//! `install` then `--undo` gives the host's file back byte for byte, and a
//! host file that does not parse is left alone.
//!
//! Remote servers are written in the remote shape whether or not this
//! build loads them: the tests check that shape, not `check`'s verdict.

use crate::harness::{scratch, system_path, FAKE, WORKBENCH};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Every planted secret holds this word (testdata/hosts/README.md).
const PLANTED: &str = "SECRET";

/// A sandbox: a home with the hosts' files, a project as the working
/// directory, and a folder for the workbench's config.
struct Sandbox {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    config: PathBuf,
}

/// Where each host keeps its user file below `home` on this system.
fn app_config(home: &Path, app: &str) -> PathBuf {
    if cfg!(windows) {
        home.join("AppData").join("Roaming").join(app)
    } else if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support").join(app)
    } else {
        home.join(".config").join(app)
    }
}

/// The sample files: (file in testdata/hosts, place in the sandbox).
fn samples(sb: &Sandbox) -> Vec<(&'static str, PathBuf)> {
    let (home, project) = (&sb.home, &sb.project);
    vec![
        (
            "claude-desktop/claude_desktop_config.json",
            app_config(home, "Claude").join("claude_desktop_config.json"),
        ),
        ("claude-code/.claude.json", home.join(".claude.json")),
        ("claude-code/project.mcp.json", project.join(".mcp.json")),
        ("cursor/mcp.json", home.join(".cursor").join("mcp.json")),
        (
            "cursor/project.mcp.json",
            project.join(".cursor").join("mcp.json"),
        ),
        (
            "vscode/mcp.json",
            app_config(home, "Code").join("User").join("mcp.json"),
        ),
        (
            "vscode/project.mcp.json",
            project.join(".vscode").join("mcp.json"),
        ),
        ("codex/config.toml", home.join(".codex").join("config.toml")),
        (
            "gemini/settings.json",
            home.join(".gemini").join("settings.json"),
        ),
        (
            "windsurf/mcp_config.json",
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
        ),
    ]
}

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join("hosts")
}

/// A path as it is written inside a JSON or TOML basic string.
fn escaped(path: &Path) -> String {
    let quoted = Value::from(path.display().to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

impl Sandbox {
    /// A sandbox for test `name` with every host's sample files.
    fn new(name: &str) -> Sandbox {
        let root = scratch(name);
        let sb = Sandbox {
            home: root.join("home"),
            project: root.join("project"),
            config: root.join("wb").join("workbench-config.json"),
            root,
        };
        fs::create_dir_all(&sb.project).unwrap();
        fs::create_dir_all(sb.config.parent().unwrap()).unwrap();
        for (sample, place) in samples(&sb) {
            let text = fs::read_to_string(testdata().join(sample)).unwrap();
            sb.put(&place, &text);
        }
        sb
    }

    /// Writes `text` to `place`, its placeholders filled in.
    fn put(&self, place: &Path, text: &str) {
        let text = text
            .replace("@FAKE@", &escaped(Path::new(FAKE)))
            .replace("@SCRIPTS@", &escaped(&testdata().join("scripts")))
            .replace("@PROJECT@", &escaped(&self.project));
        fs::create_dir_all(place.parent().unwrap()).unwrap();
        fs::write(place, text).unwrap();
    }

    /// The workbench with `args`, in the project, with the sandbox as its
    /// whole environment.
    fn run(&self, args: &[&str]) -> Output {
        let state = self.root.join("state");
        let mut cmd = Command::new(WORKBENCH);
        cmd.current_dir(&self.project)
            .env_clear()
            .env("PATH", system_path())
            .env("HOME", &self.home)
            .env("USERPROFILE", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("APPDATA", self.home.join("AppData").join("Roaming"))
            .env("LOCALAPPDATA", &state)
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CACHE_HOME", &state)
            .args(args)
            .args(["--config", self.config.to_str().unwrap()]);
        cmd.output().unwrap()
    }

    /// Every file below the sandbox and its bytes.
    fn tree(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        let mut folders = vec![self.root.clone()];
        while let Some(folder) = folders.pop() {
            for entry in fs::read_dir(&folder).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    folders.push(path);
                } else {
                    files.insert(path.clone(), fs::read(&path).unwrap());
                }
            }
        }
        files
    }

    fn config(&self) -> Value {
        serde_json::from_slice(&fs::read(&self.config).unwrap()).unwrap()
    }

    /// The toolboxes of the config, in the file's order (serde_json's map
    /// sorts its keys; the file is indented by two spaces).
    fn toolbox_names(&self) -> Vec<String> {
        let text = fs::read_to_string(&self.config).unwrap();
        let config: Value = serde_json::from_str(&text).unwrap();
        let mut names: Vec<(usize, String)> = config["toolboxes"]
            .as_object()
            .unwrap()
            .keys()
            .map(|name| {
                let at = text.find(&format!("\n    {}: {{", Value::from(name.as_str())));
                (at.expect("a toolbox at its indentation"), name.clone())
            })
            .collect();
        names.sort();
        names.into_iter().map(|(_, name)| name).collect()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Stdout and stderr, for assertions and failure messages.
fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn no_secret(out: &Output) {
    let (stdout, stderr) = texts(out);
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        if let Some(line) = text.lines().find(|l| l.contains(PLANTED)) {
            panic!(
                "a planted secret on {name}: {line}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
            );
        }
    }
}

#[test]
fn a_dry_run_writes_nothing_and_shows_no_secret() {
    let sb = Sandbox::new("import-dry-run");
    let before = sb.tree();
    let out = sb.run(&["import"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    assert_eq!(sb.tree(), before, "a dry run changed files\n{stdout}");
    no_secret(&out);
    let expect = [
        // Every host was read.
        "claude-desktop  ~",
        "claude-code     ~",
        "cursor          ~",
        "vscode          ~",
        "codex           ~",
        "gemini          ~",
        "windsurf        ~",
        // Described by the server's own instructions and tools.
        "github: The github MCP server (mcp-fake-server). Works with GitHub issues and pull requests. Tools: search_issues, create_issue, merge_pull_request.",
        "brave: The brave MCP server (mcp-fake-server). Tools: remember, recall.",
        "pythonTools: pythonTools: Python tools for data work.",
        // The same server in two hosts.
        "also in cursor ",
        // What is not imported, and what is not carried over.
        "mcpServers.socket: the WebSocket transport (\"type\": \"ws\") has no equivalent in the workbench",
        "servers.workspace-files: args[1]: '${workspaceFolder}' has no value outside a project",
        "mcpServers.notes.envFile: the workbench reads no env file",
        "mcp_servers.off.disabled_tools: the workbench has no list of tools to hide",
        "mcpServers.brave.disabledTools:",
        "set PERPLEXITY_KEY in the environment the workbench runs in: VS Code asked for input 'perplexity-key' (Perplexity API Key)",
        // A project's own commands are not run for a description.
        "tools not listed: not started: it comes from the project's own file",
        "Nothing was written.",
    ];
    for line in expect {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    // The config it would write comes first, masked.
    let json_end = stdout.find("\n}\n").expect("a config") + 2;
    let json_start = stdout.find("\n{").expect("a config") + 1;
    let shown: Value = serde_json::from_str(&stdout[json_start..json_end]).unwrap();
    let server = |toolbox: &str| &shown["toolboxes"][toolbox]["mcpServers"][toolbox];
    assert_eq!(
        server("figma"),
        &json!({"type": "http", "url": "https://mcp.figma.com/mcp", "headers": {
            "Authorization": "Bearer ${FIGMA_OAUTH_TOKEN}", "X-Api-Key": "<masked>", "X-Team": "${FIGMA_TEAM}"}})
    );
    assert_eq!(server("filesystem")["args"][3], "<masked>");
    assert_eq!(server("docs")["env"]["DOCS_TOKEN"], "${DOCS_TOKEN}");
    let memories = shown["toolboxes"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.starts_with("memory"))
        .count();
    assert_eq!(memories, 1, "{stdout}");
}

#[test]
fn write_merges_into_the_config_it_finds() {
    let sb = Sandbox::new("import-write");
    let existing = "{\n  \"idleTimeoutMs\": 60000,\n  \"toolboxes\": {\n    \"github\": {\n      \"description\": \"Mine\",\n      \"mcpServers\": {\n        \"gh\": {\n          \"command\": \"my-own-github\"\n        }\n      }\n    }\n  },\n  \"pinTools\": false\n}\n";
    fs::write(&sb.config, existing).unwrap();
    let out = sb.run(&[
        "import",
        "--write",
        "--from",
        "claude-code",
        "--from",
        "codex",
    ]);
    let (stdout, stderr) = texts(&out);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{stdout}\n--- stderr\n{stderr}"
    );
    no_secret(&out);
    let config = sb.config();
    // Everything that was there is kept, in its place.
    assert_eq!(config["idleTimeoutMs"], 60000);
    assert_eq!(config["pinTools"], false);
    let names = sb.toolbox_names();
    assert_eq!(
        names,
        ["github", "github-2", "sentry", "db", "docs", "context7", "figma", "off"],
        "{stdout}"
    );
    assert_eq!(
        config["toolboxes"]["github"],
        json!({"description": "Mine", "mcpServers": {"gh": {"command": "my-own-github"}}})
    );
    assert!(stdout.contains("'github' from claude-code is imported as 'github-2': the workbench's config has a toolbox of that name"), "{stdout}");
    let server = |toolbox: &str| &config["toolboxes"][toolbox]["mcpServers"][toolbox];
    assert_eq!(
        server("github-2")["env"]["GITHUB_PERSONAL_ACCESS_TOKEN"],
        "ghp_SECRETclaudecodeenv00000000001"
    );
    assert_eq!(server("db")["cwd"], sb.project.display().to_string());
    assert_eq!(
        server("context7"),
        &json!({"command": FAKE, "args": [format!("{}/tools.json", testdata().join("scripts").display()), "context7"],
            "env": {"CONTEXT7_API_KEY": "ctx7sk-SECRET-codex-env-0001", "HTTPS_PROXY": "${HTTPS_PROXY}"},
            "toolFilters": ["remember"], "startupTimeoutMs": 20000, "callTimeoutMs": 45500})
    );
    assert_eq!(server("off")["disabled"], true);
    // Remote servers in the remote shape.
    assert_eq!(
        server("sentry"),
        &json!({"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {"Authorization": "Bearer sntrys_SECRET_claude_code_header_0001"}})
    );
    assert_eq!(
        server("figma")["headers"]["Authorization"],
        "Bearer ${FIGMA_OAUTH_TOKEN}"
    );
    // The previous version, byte for byte, beside it.
    let backups: Vec<PathBuf> = fs::read_dir(sb.config.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy()
                .contains("workbench-config.json.workbench-backup-")
        })
        .collect();
    assert_eq!(backups.len(), 1, "{stdout}");
    assert_eq!(fs::read_to_string(&backups[0]).unwrap(), existing);
    assert!(stdout.contains("check: the config"), "{stdout}");
    // Again: nothing new, nothing changed.
    let written = fs::read(&sb.config).unwrap();
    let out = sb.run(&[
        "import",
        "--write",
        "--from",
        "claude-code",
        "--from",
        "codex",
    ]);
    let (stdout, _) = texts(&out);
    assert!(stdout.contains("Nothing new to import"), "{stdout}");
    assert_eq!(fs::read(&sb.config).unwrap(), written);
}

#[test]
fn a_server_in_two_hosts_is_imported_once_and_the_config_loads() {
    let sb = Sandbox::new("import-once");
    let out = sb.run(&[
        "import",
        "--write",
        "--from",
        "claude-desktop",
        "--from",
        "cursor",
        "--no-start",
    ]);
    let (stdout, stderr) = texts(&out);
    let names = sb.toolbox_names();
    assert_eq!(
        names,
        [
            "filesystem",
            "memory",
            "old",
            "linear",
            "notes",
            "local-tool"
        ],
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("also in cursor "), "{stdout}");
    assert!(
        stdout.contains("tools not listed: not started (--no-start)"),
        "{stdout}"
    );
    no_secret(&out);
    // Without the remote one, the result loads as check would load it.
    let sb = Sandbox::new("import-once-stdio");
    let out = sb.run(&["import", "--write", "--from", "claude-desktop"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    assert!(
        stdout.contains("check: the config loads: 3 toolboxes, 3 servers."),
        "{stdout}"
    );
}

/// Each host's user file, and a server in it that `import --write` moves.
fn installable(sb: &Sandbox) -> Vec<(&'static str, PathBuf, &'static str)> {
    let home = &sb.home;
    vec![
        (
            "claude-desktop",
            app_config(home, "Claude").join("claude_desktop_config.json"),
            "\"filesystem\"",
        ),
        ("claude-code", home.join(".claude.json"), "\"github\""),
        (
            "cursor",
            home.join(".cursor").join("mcp.json"),
            "\"memory\"",
        ),
        (
            "vscode",
            app_config(home, "Code").join("User").join("mcp.json"),
            "\"perplexity\"",
        ),
        (
            "codex",
            home.join(".codex").join("config.toml"),
            "[mcp_servers.context7]",
        ),
        (
            "gemini",
            home.join(".gemini").join("settings.json"),
            "\"pythonTools\"",
        ),
        (
            "windsurf",
            home.join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
            "\"brave\"",
        ),
    ]
}

#[test]
fn install_replace_and_undo_round_trip() {
    let sb = Sandbox::new("install-round-trip");
    // VS Code's sample has comments, which install keeps; this test reads
    // the result as plain JSON: here, one without.
    let vscode = app_config(&sb.home, "Code").join("User").join("mcp.json");
    let plain: String = fs::read_to_string(&vscode)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
        .replace("},\n\t}\n}", "}\n\t}\n}");
    fs::write(&vscode, plain).unwrap();
    let out = sb.run(&["import", "--write", "--no-start"]);
    assert!(sb.config.exists(), "{:?}", texts(&out));
    let config_path = fs::canonicalize(&sb.config).unwrap();
    for (host, file, moved) in installable(&sb) {
        let original = fs::read(&file).unwrap();
        let out = sb.run(&["install", host, "--replace"]);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{host}: {stdout}\n--- stderr\n{stderr}"
        );
        no_secret(&out);
        let text = fs::read_to_string(&file).unwrap();
        assert!(!text.contains(moved), "{host}: {moved} is still in\n{text}");
        assert!(text.contains("workbench"), "{host}:\n{text}");
        assert!(
            text.contains(&escaped(&config_path)),
            "{host}: the config's absolute path\n{text}"
        );
        let exe = escaped(&fs::canonicalize(WORKBENCH).unwrap());
        assert!(
            text.contains(&exe) || text.contains(&escaped(Path::new(WORKBENCH))),
            "{host}: the binary\n{text}"
        );
        assert!(stdout.contains("Backup: "), "{host}: {stdout}");
        if host != "codex" {
            let node: Value = serde_json::from_str(&text).unwrap();
            let list = if host == "vscode" {
                "servers"
            } else {
                "mcpServers"
            };
            assert_eq!(
                node[list]["workbench"]["args"][0], "--config",
                "{host}: {text}"
            );
        }
        let out = sb.run(&["install", host, "--undo"]);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{host}: {stdout}\n--- stderr\n{stderr}"
        );
        // Nothing written in between: the file as it was, byte for byte.
        assert_eq!(
            fs::read(&file).unwrap(),
            original,
            "{host}: not restored byte for byte"
        );
        assert!(stdout.contains("The backup stays: "), "{host}: {stdout}");
    }
    // One backup beside each host file, for a person to restore by hand.
    let backups = sb
        .tree()
        .into_keys()
        .filter(|p| {
            p.to_string_lossy().contains(".workbench-backup-")
                && !p.starts_with(sb.config.parent().unwrap())
        })
        .count();
    assert_eq!(backups, installable(&sb).len());
}

#[test]
fn install_without_a_workbench_config_writes_nothing() {
    let sb = Sandbox::new("install-no-config");
    let before = sb.tree();
    let out = sb.run(&["install", "cursor"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n--- stderr\n{stderr}");
    assert!(
        stderr.contains("run `mcp-workbench import --write` first"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&sb.config.display().to_string()),
        "{stderr}"
    );
    assert_eq!(sb.tree(), before);
}

#[test]
fn install_says_what_runs_twice_and_replace_leaves_projects() {
    let sb = Sandbox::new("install-twice");
    let out = sb.run(&["import", "--write", "--no-start", "--from", "claude-code"]);
    assert!(sb.config.exists(), "{:?}", texts(&out));
    let file = sb.home.join(".claude.json");
    let project = escaped(&sb.project);
    // Without --replace: the host starts github and the workbench does too.
    let out = sb.run(&["install", "claude-code"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    assert!(
        stdout.contains("Claude Code still starts 2 servers the workbench's config also holds, so each runs twice: mcpServers.github, mcpServers.sentry (install claude-code --replace takes them out of Claude Code)"),
        "{stdout}"
    );
    // --replace: the user-level ones go, the per-project one stays, said.
    let out = sb.run(&["install", "claude-code", "--replace"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let node: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert!(node["mcpServers"].get("github").is_none());
    assert!(
        node["projects"][&project]["mcpServers"]["db"].is_object(),
        "{node}"
    );
    assert!(
        stdout.contains("--include-projects takes them out too"),
        "{stdout}"
    );
    // --include-projects: that one too.
    let out = sb.run(&["install", "claude-code", "--replace", "--include-projects"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    let node: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        node["projects"][&project]["mcpServers"].get("db").is_none(),
        "{node}"
    );
}

#[cfg(unix)]
#[test]
fn a_linked_host_file_is_edited_where_it_points() {
    let sb = Sandbox::new("install-link");
    let out = sb.run(&["import", "--write", "--no-start", "--from", "claude-code"]);
    assert!(sb.config.exists(), "{:?}", texts(&out));
    // Dotfiles: ~/.claude.json links to a file elsewhere.
    let link = sb.home.join(".claude.json");
    let real = sb.root.join("dotfiles").join("claude.json");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::rename(&link, &real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let original = fs::read(&real).unwrap();
    let is_link = |p: &Path| fs::symlink_metadata(p).unwrap().file_type().is_symlink();
    let out = sb.run(&["install", "claude-code", "--replace"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    assert!(is_link(&link), "the link was replaced by a file");
    assert!(fs::read_to_string(&real).unwrap().contains("\"workbench\""));
    assert!(stdout.contains("is a link: "), "{stdout}");
    // The backup sits beside the link.
    assert!(
        stdout.contains(&format!("Backup: {}", sb.home.display())),
        "{stdout}"
    );
    let out = sb.run(&["install", "claude-code", "--undo"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    assert!(is_link(&link), "undo replaced the link by a file");
    assert_eq!(fs::read(&real).unwrap(), original);
}

#[test]
fn undo_keeps_what_the_host_wrote_since_the_install() {
    let sb = Sandbox::new("install-undo-since");
    let out = sb.run(&["import", "--write", "--no-start", "--from", "claude-code"]);
    assert!(sb.config.exists(), "{:?}", texts(&out));
    let file = sb.home.join(".claude.json");
    let out = sb.run(&["install", "claude-code", "--replace"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    // Claude Code rewrites its file on every run.
    let text = fs::read_to_string(&file).unwrap();
    assert!(!text.contains("\"github\""), "{text}");
    let since = text
        .replace("\"numStartups\": 42", "\"numStartups\": 43")
        .replace(
            "\"autoUpdates\": true,",
            "\"autoUpdates\": true,\n  \"tipsHistory\": {\"new-user-warmup\": 1},",
        );
    fs::write(&file, &since).unwrap();
    let out = sb.run(&["install", "claude-code", "--undo"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let text = fs::read_to_string(&file).unwrap();
    let node: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(node["numStartups"], 43, "{text}");
    assert_eq!(node["tipsHistory"]["new-user-warmup"], 1, "{text}");
    assert!(node["mcpServers"]["github"].is_object(), "{text}");
    assert!(node["mcpServers"].get("workbench").is_none(), "{text}");
    assert!(stdout.contains("Put back "), "{stdout}");
    // An entry edited since is left, and named; so is a server of the same
    // name added since.
    let out = sb.run(&["install", "claude-code", "--replace"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", texts(&out));
    let edited = fs::read_to_string(&file)
        .unwrap()
        .replace("\"--config\",", "\"--verbose\", \"--config\",")
        .replacen(
            "\"mcpServers\": {",
            "\"mcpServers\": {\n    \"github\": {\"command\": \"mine\"},",
            1,
        );
    fs::write(&file, &edited).unwrap();
    let out = sb.run(&["install", "claude-code", "--undo"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n--- stderr\n{stderr}");
    assert!(
        stdout.contains("Left mcpServers.workbench as it is"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Left mcpServers.github as it is: a server of that name was added since"),
        "{stdout}"
    );
    // The rest is reversed.
    let text = fs::read_to_string(&file).unwrap();
    let node: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(node["mcpServers"]["github"]["command"], "mine", "{text}");
    assert_eq!(node["mcpServers"]["workbench"]["args"][0], "--verbose");
    assert!(node["mcpServers"]["sentry"].is_object(), "{text}");
}

#[test]
fn install_leaves_a_file_it_cannot_keep_alone() {
    let sb = Sandbox::new("install-refuses");
    fs::write(&sb.config, "{\"toolboxes\": {}}").unwrap();
    let cursor = sb.home.join(".cursor").join("mcp.json");
    fs::write(
        &cursor,
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n",
    )
    .unwrap();
    let codex = sb.home.join(".codex").join("config.toml");
    fs::write(&codex, "model = \"o3\"\n\n[[profiles]]\nname = \"x\"\n").unwrap();
    let before = sb.tree();
    for (host, says) in [
        (
            "cursor",
            "it is not valid JSON (line 4 column 0); nothing was written",
        ),
        (
            "codex",
            "line 3: arrays of tables ([[...]]) are not supported here",
        ),
    ] {
        let out = sb.run(&["install", host]);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{host}: {stdout}\n--- stderr\n{stderr}"
        );
        assert!(stderr.contains(says), "{host}: {stderr}");
        assert_eq!(sb.tree(), before, "{host}: a refused install changed files");
    }
    // No backup to undo to: said, and nothing changes.
    let out = sb.run(&["install", "cursor", "--undo"]);
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr.contains("no backup of it to restore"), "{stderr}");
    assert_eq!(sb.tree(), before);
}

#[test]
fn a_host_file_that_cannot_be_read_is_an_error() {
    let sb = Sandbox::new("import-unreadable");
    let cursor = sb.home.join(".cursor").join("mcp.json");
    fs::write(
        &cursor,
        "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"},\n",
    )
    .unwrap();
    let shown = Path::new("~").join(".cursor").join("mcp.json");
    let says = format!(
        "error: {} (cursor) cannot be read: not valid JSON: line 4 column 0",
        shown.display()
    );
    let before = sb.tree();
    let named = cursor.to_str().unwrap();
    // Named by its host or as a file: exit 2, nothing written.
    for args in [
        &["import", "--from", "cursor"][..],
        &[
            "import",
            "--write",
            "--from",
            "claude-desktop",
            "--from",
            "cursor",
        ],
        &["import", "--write", "--from", named],
    ] {
        let out = sb.run(args);
        let (stdout, stderr) = texts(&out);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {stdout}\n--- stderr\n{stderr}"
        );
        assert!(stderr.contains(&says), "{args:?}: {stderr}");
        assert!(
            stderr.contains("nothing was imported and nothing was written"),
            "{args:?}: {stderr}"
        );
        assert_eq!(sb.tree(), before, "{args:?}: files changed\n{stderr}");
    }
    // Not named: the other hosts are imported, and the exit says it.
    let out = sb.run(&["import", "--no-start"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n--- stderr\n{stderr}");
    assert!(stderr.contains(&says), "{stderr}");
    assert!(stdout.contains("filesystem: "), "{stdout}");
    let out = sb.run(&["import", "--write", "--no-start"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n--- stderr\n{stderr}");
    assert!(stderr.contains(&says), "{stderr}");
    assert!(
        sb.config()["toolboxes"]["filesystem"].is_object(),
        "{stdout}\n--- stderr\n{stderr}"
    );
}

#[test]
fn a_server_of_one_project_says_so() {
    let sb = Sandbox::new("import-project");
    let folder = sb.project.display().to_string();
    let out = sb.run(&["import", "--from", "claude-code", "--from", "cursor"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let offered = format!(
        "enabled for one project only ({folder}): once imported, this toolbox is offered in every session"
    );
    // Claude Code's list for one project in ~/.claude.json, started.
    let db = format!(
        "db: The db MCP server (mcp-fake-server). For the project in {folder} only. Tools: remember, recall."
    );
    assert!(stdout.contains(&db), "missing {db:?} in\n{stdout}");
    assert!(stdout.contains(&offered), "{stdout}");
    // A project's own files in the working directory (as the system names
    // it: macOS's /tmp is a link), not started.
    for start in [
        "  docs: The docs MCP server (mcp-fake-server). For the project in ",
        "  local-tool: The local-tool MCP server. For the project in ",
    ] {
        let line = stdout.lines().find(|l| l.starts_with(start));
        assert!(
            line.is_some_and(|l| l.ends_with("project only.")),
            "{start:?} in\n{stdout}"
        );
    }
    let said = "): once imported, this toolbox is offered in every session, whatever the project";
    assert_eq!(stdout.matches(said).count(), 3, "{stdout}");
    // A user's own server says nothing of a project.
    let github = stdout
        .lines()
        .find(|l| l.starts_with("  github: "))
        .unwrap_or_default();
    assert!(
        github.ends_with("Tools: search_issues, create_issue, merge_pull_request."),
        "{stdout}"
    );
    // A project's file named on the command line is the project's too.
    let vscode = sb.project.join(".vscode").join("mcp.json");
    let out = sb.run(&["import", "--no-start", "--from", vscode.to_str().unwrap()]);
    let (stdout, stderr) = texts(&out);
    assert!(
        stdout.contains(&format!(
            "playwright: The playwright MCP server (@playwright/mcp). For the project in {folder} only."
        )),
        "{stdout}\n--- stderr\n{stderr}"
    );
    assert!(stdout.contains(&offered), "{stdout}");
}

#[test]
fn a_slow_starter_is_waited_for() {
    let sb = Sandbox::new("import-slow");
    // Slower than the 10 s import gave every server, within the default
    // startupTimeoutMs (a package runner on a cold cache).
    let script = sb.root.join("slow.json");
    fs::write(
        &script,
        json!({"initializeDelayMs": 11000, "instructions": "Answers slowly.",
            "tools": [{"tool": {"name": "wait", "inputSchema": {"type": "object"}}}]})
        .to_string(),
    )
    .unwrap();
    let desktop = app_config(&sb.home, "Claude").join("claude_desktop_config.json");
    let host =
        json!({"mcpServers": {"slow": {"command": FAKE, "args": [script.to_str().unwrap()]}}});
    fs::write(&desktop, host.to_string()).unwrap();
    let out = sb.run(&["import", "--from", "claude-desktop"]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let described = "slow: The slow MCP server (mcp-fake-server). Answers slowly. Tools: wait.";
    assert!(stdout.contains(described), "{stdout}\n--- stderr\n{stderr}");
    assert!(
        stderr.contains("Starting 1 server to list its tools"),
        "{stderr}"
    );
}

#[test]
fn a_later_import_fills_in_a_description_written_without_tools() {
    let sb = Sandbox::new("import-refill");
    let from = ["--from", "claude-desktop"];
    let out = sb.run(&[&["import", "--write", "--no-start"][..], &from].concat());
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let unlisted = "The memory MCP server (mcp-fake-server).";
    assert_eq!(sb.config()["toolboxes"]["memory"]["description"], unlisted);
    // The user's own words stay.
    let text = fs::read_to_string(&sb.config).unwrap();
    let edited = text.replacen(
        "\"The filesystem MCP server (mcp-fake-server).\"",
        "\"My files.\"",
        1,
    );
    assert_ne!(edited, text, "{text}");
    fs::write(&sb.config, edited).unwrap();
    let out = sb.run(&[&["import", "--write"][..], &from].concat());
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n--- stderr\n{stderr}");
    let filled = "The memory MCP server (mcp-fake-server). Tools: remember, recall.";
    let config = sb.config();
    assert_eq!(
        config["toolboxes"]["memory"]["description"], filled,
        "{stdout}\n--- stderr\n{stderr}"
    );
    assert_eq!(
        config["toolboxes"]["filesystem"]["description"],
        "My files."
    );
    // The disabled one is not started, and not mentioned.
    assert_eq!(
        config["toolboxes"]["old"]["description"],
        "The old MCP server (mcp-fake-server)."
    );
    for line in [
        "Toolboxes an earlier import wrote before their servers could be listed (1):",
        &format!("  memory: {filled}"),
        "(1 description filled in; the previous version is ",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in\n{stdout}");
    }
    assert_eq!(sb.toolbox_names(), ["filesystem", "memory", "old"]);
    // Filled in once.
    let written = fs::read(&sb.config).unwrap();
    let out = sb.run(&[&["import", "--write"][..], &from].concat());
    let (stdout, _) = texts(&out);
    assert!(stdout.contains("Nothing new to import"), "{stdout}");
    assert_eq!(fs::read(&sb.config).unwrap(), written);
}
