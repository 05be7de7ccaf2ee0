//! One config per user (docs/reference.md §2), through the real binary: with
//! no `--config`, no `WORKBENCH_CONFIG` and no `./workbench-config.json`,
//! every command uses the user's own config, whatever folder it is run from;
//! `import --write` creates it (with its folder), and `check`, serving and a
//! missing file's error name it and say why it was chosen. The README's
//! move-in, pasted as it stands, works on a machine with Claude Code.

use crate::harness::{leftover_processes, scratch, system_path, Workbench, FAKE, INITIALIZE};
use serde_json::json;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// A user with a home folder and nothing configured, and two folders to
/// stand in.
struct User {
    root: PathBuf,
    home: PathBuf,
}

impl User {
    fn new(name: &str) -> User {
        let root = scratch(name);
        let home = root.join("home");
        for dir in [home.clone(), root.join("here"), root.join("there")] {
            fs::create_dir_all(dir).unwrap();
        }
        User { root, home }
    }

    /// Where this user's own config is on this system.
    fn own_config(&self) -> PathBuf {
        let folder = if cfg!(windows) {
            self.home.join("AppData").join("Roaming")
        } else if cfg!(target_os = "macos") {
            self.home.join("Library").join("Application Support")
        } else {
            self.home.join("xdg-config")
        };
        folder.join("mcp-workbench").join("config.json")
    }

    /// The workbench with `args`, run in folder `cwd` of the sandbox, with
    /// the user's environment as its whole environment.
    fn command(&self, cwd: &str, args: &[&str]) -> Command {
        let state = self.root.join("state");
        let mut cmd = Command::new(crate::harness::WORKBENCH);
        cmd.current_dir(self.root.join(cwd))
            .env_clear()
            .env("PATH", system_path())
            .env("HOME", &self.home)
            .env("USERPROFILE", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join("xdg-config"))
            .env("APPDATA", self.home.join("AppData").join("Roaming"))
            .env("XDG_STATE_HOME", &state)
            .env("XDG_CACHE_HOME", &state)
            .env("LOCALAPPDATA", &state)
            .env("RUST_LOG", "off")
            .args(args);
        cmd
    }

    fn run(&self, cwd: &str, args: &[&str]) -> Output {
        self.command(cwd, args).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Everything a command said, for a failed assertion.
fn said(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// A host's file with one stdio server, the fake with two tools.
fn host_file(user: &User) -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hosts/scripts/tools.json");
    let host = json!({"mcpServers": {"memory": {"command": FAKE, "args": [script, "memory"]}}});
    let file = user.root.join("host.json");
    fs::write(&file, host.to_string()).unwrap();
    file
}

#[test]
fn import_write_creates_the_users_own_config_and_every_command_finds_it() {
    let user = User::new("own-config");
    let own = user.own_config();
    let host = host_file(&user);
    let host = host.to_str().unwrap();

    let out = user.run("here", &["import", "--from", host, "--write"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert!(
        own.is_file(),
        "{} was not written: {}",
        own.display(),
        said(&out)
    );
    assert!(
        text(&out.stdout).contains(&format!("Wrote {}", own.display())),
        "{}",
        said(&out)
    );
    assert!(
        !user
            .root
            .join("here")
            .join("workbench-config.json")
            .exists(),
        "nothing is written in the working directory"
    );

    // check, from another folder, finds it and says so on its first line.
    let out = user.run("there", &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout.lines().next(),
        Some(
            format!(
                "config: {} (your own config: neither --config, WORKBENCH_CONFIG nor \
                 ./workbench-config.json names another)",
                own.display()
            )
            .as_str()
        ),
        "{}",
        said(&out)
    );
    assert!(stdout.contains("memory"), "{}", said(&out));

    // Serving names it in its start-up line.
    let mut cmd = user.command("there", &[]);
    cmd.env("RUST_LOG", "info");
    let mut wb = Workbench::spawn_raw(user.root.join("there"), cmd, false);
    wb.send_line(INITIALIZE);
    assert!(wb.recv()["result"].is_object(), "{}", wb.log());
    wb.expect_log(&format!(
        "serving {} (1 toolbox), your own config: neither --config, WORKBENCH_CONFIG nor \
         ./workbench-config.json names another",
        own.display()
    ));
    wb.end(Duration::from_secs(10));

    // A ./workbench-config.json where the command runs comes first, and is named.
    let local = json!({"toolboxes": {"local": {"description": "d", "mcpServers": {}}}});
    let here = user.root.join("here").join("workbench-config.json");
    fs::write(&here, local.to_string()).unwrap();
    let out = user.run("here", &["check"]);
    assert_eq!(out.status.code(), Some(0), "{}", said(&out));
    assert_eq!(
        text(&out.stdout).lines().next(),
        Some(
            format!(
                "config: {} (./workbench-config.json of the working directory, which comes \
                 before your own config)",
                here.display()
            )
            .as_str()
        ),
        "{}",
        said(&out)
    );
    // Named with --config: no such line.
    let out = user.run("here", &["check", "--config", "workbench-config.json"]);
    assert!(text(&out.stdout).starts_with("TOOLBOX"), "{}", said(&out));
    assert!(leftover_processes(&user.root).is_empty());
    let _ = fs::remove_dir_all(&user.root);
}

#[test]
fn a_missing_own_config_names_every_path_tried_and_how_to_create_it() {
    let user = User::new("own-config-missing");
    let own = user.own_config();
    let out = user.run("here", &["check"]);
    assert_eq!(out.status.code(), Some(2), "{}", said(&out));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: the file does not exist (it is your own config, used because neither \
             --config nor WORKBENCH_CONFIG was given and {} does not exist either); run \
             `mcp-workbench import --write` to create it from your hosts' servers; pass \
             --config PATH to name your config file\n",
            own.display(),
            user.root
                .join("here")
                .join("workbench-config.json")
                .display()
        ),
        "{}",
        said(&out)
    );
    assert!(!own.exists(), "check creates nothing");
    let _ = fs::remove_dir_all(&user.root);
}

/// The commands of the README's first screen that move a user in, in order
/// (from "Already using MCP servers?" to the next heading: the lines of its
/// `sh` block, or its `mcp-workbench ...` code spans), as arguments.
fn readme_move_in() -> Vec<Vec<String>> {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let (_, after) = readme
        .split_once("Already using MCP servers?")
        .expect("the README's first screen offers the move-in");
    let screen = after.split("\n## ").next().unwrap_or_default();
    let commands: Vec<&str> = match screen.split_once("```sh\n") {
        Some((_, block)) => block
            .split("```")
            .next()
            .unwrap_or_default()
            .lines()
            .collect(),
        None => screen.split('`').skip(1).step_by(2).collect(),
    };
    commands
        .into_iter()
        .map(|line| line.split('#').next().unwrap_or_default().trim())
        .filter_map(|line| line.strip_prefix("mcp-workbench "))
        .map(|line| line.split_whitespace().map(String::from).collect())
        .collect()
}

#[test]
fn the_readmes_move_in_works_when_pasted() {
    let user = User::new("readme-move-in");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/hosts/scripts/tools.json");
    let claude = json!({"numStartups": 3, "mcpServers": {
        "memory": {"command": FAKE, "args": [script, "memory"]}}});
    let claude_file = user.home.join(".claude.json");
    fs::write(&claude_file, serde_json::to_string_pretty(&claude).unwrap()).unwrap();
    let commands = readme_move_in();
    assert!(
        !commands.is_empty(),
        "no commands on the README's first screen"
    );
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = user.run("here", &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", said(&out));
        if args == ["import"] {
            assert!(!user.own_config().exists(), "the preview writes nothing");
        }
        if args.contains(&"--replace") {
            let host: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(&claude_file).unwrap()).unwrap();
            assert!(host["mcpServers"]["workbench"].is_object(), "{host:#}");
            assert!(host["mcpServers"].get("memory").is_none(), "{host:#}");
        }
    }
    // A preview first, then the write, then the install.
    let words = |i: usize| commands.get(i).map(|c| c.join(" "));
    assert_eq!(words(0).as_deref(), Some("import"), "{commands:?}");
    assert_eq!(words(1).as_deref(), Some("import --write"), "{commands:?}");
    assert_eq!(
        words(2).as_deref(),
        Some("install claude-code --replace"),
        "{commands:?}"
    );
    // The last step reverses the install: the host has its server back.
    if commands
        .last()
        .is_some_and(|c| c.contains(&"--undo".to_string()))
    {
        let host: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&claude_file).unwrap()).unwrap();
        assert_eq!(host["mcpServers"], claude["mcpServers"], "{host:#}");
    }
    let _ = fs::remove_dir_all(&user.root);
}
