//! Checks of the repository itself, as `cargo install` and `cargo package` see
//! it, and of the scripts that run its binaries:
//! - `cargo install --git URL` reads every `Cargo.toml` of a repository outside
//!   dot folders and `target`; exactly one package there may have binaries, and
//!   installing it gives exactly `mcp-workbench` (the test fake needs a feature);
//! - a package ships the source and documents, with the license, but no tests;
//! - scripts, examples and documents find binaries through cargo's target
//!   folder, never a fixed `target/release/`;
//! - `scripts/prerequisites` stops at once, with one line, when it cannot
//!   install what the suite needs;
//! - `scripts/fake-server`, started under `cargo run` (the README's `check`),
//!   hands its cargo none of what cargo sets for the program it runs, which
//!   would rebuild ring and outlast a server's start-up time-out;
//! - comments, tests and transcripts cite docs/reference.md sections that exist,
//!   or the MCP specification, never documents the repository does not hold;
//! - the command lists of the README and the command-line guide are the
//!   commands `mcp-workbench --help` gives, written the same, in its order.

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn cargo() -> Command {
    let mut cmd = Command::new(option_env!("CARGO").unwrap_or("cargo"));
    cmd.current_dir(ROOT);
    cmd
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("the command runs");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Every `Cargo.toml` that `cargo install --git` would read: it walks the
/// repository and skips dot folders and the `target` folder.
fn manifests(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !name.starts_with('.') && name != "target" {
                manifests(&path, out);
            }
        } else if name == "Cargo.toml" {
            out.push(path);
        }
    }
}

#[test]
fn cargo_install_finds_one_package_and_installs_only_the_workbench() {
    let mut found = Vec::new();
    manifests(Path::new(ROOT), &mut found);
    assert_eq!(
        found,
        [Path::new(ROOT).join("Cargo.toml")],
        "another package with binaries makes `cargo install --git` ambiguous"
    );
    let metadata: Value = serde_json::from_str(&stdout_of(cargo().args([
        "metadata",
        "--format-version",
        "1",
        "--no-deps",
    ])))
    .unwrap();
    let targets = metadata["packages"][0]["targets"].as_array().unwrap();
    let installed: Vec<&str> = targets
        .iter()
        .filter(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .filter(|t| t["required-features"].as_array().is_none_or(Vec::is_empty))
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(installed, ["mcp-workbench"]);
    let package = &metadata["packages"][0];
    assert_eq!(package["license"], "MIT");
    for key in ["repository", "description"] {
        assert!(package[key].is_string(), "{key} is set");
    }
    for key in ["keywords", "categories"] {
        assert!(!package[key].as_array().unwrap().is_empty(), "{key} is set");
    }
    let license = fs::read_to_string(Path::new(ROOT).join("LICENSE")).unwrap();
    assert!(
        license.starts_with("MIT License\n"),
        "LICENSE matches Cargo.toml"
    );
}

#[test]
fn a_package_ships_the_source_and_no_tests() {
    let listed = stdout_of(cargo().args(["package", "--list", "--allow-dirty", "--offline"]));
    let files: Vec<&str> = listed.lines().collect();
    for needed in [
        "LICENSE",
        "README.md",
        "Cargo.toml",
        "Cargo.lock",
        "src/main.rs",
        "src/lib.rs",
    ] {
        assert!(files.contains(&needed), "{needed} missing from {files:#?}");
    }
    let stray: Vec<&&str> = files
        .iter()
        .filter(|f| {
            [
                "testdata/",
                "tests/",
                "scripts/",
                "examples/",
                ".fuzz/",
                ".ci/",
            ]
            .iter()
            .any(|dir| f.starts_with(dir))
        })
        .collect();
    assert!(stray.is_empty(), "shipped: {stray:#?}");
    // The source and its documents: about two hundred files, not the six
    // hundred of the repository.
    assert!(files.len() < 250, "{} files: {files:#?}", files.len());
}

#[test]
fn binaries_are_found_through_cargo_not_a_fixed_target_folder() {
    let mut offenders = Vec::new();
    let mut check = |path: PathBuf| {
        let text = fs::read_to_string(&path).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            if line.contains("target/release/") || line.contains("target/debug/") {
                offenders.push(format!("{}:{}: {line}", path.display(), i + 1));
            }
        }
    };
    let root = Path::new(ROOT);
    for file in [
        "README.md",
        "ARCHITECTURE.md",
        "docs/testing.md",
        "docs/performance.md",
        "docs/maintaining.md",
        "docs/guide-config.md",
        "docs/guide-behaviour.md",
        "docs/guide-tools.md",
        "docs/guide-command-line.md",
    ] {
        check(root.join(file));
    }
    for dir in [
        "scripts",
        "scripts/interop.d",
        "examples",
        "examples/bench",
        "testdata/example",
    ] {
        for entry in fs::read_dir(root.join(dir)).unwrap().flatten() {
            if entry.path().is_file() {
                check(entry.path());
            }
        }
    }
    assert!(offenders.is_empty(), "{offenders:#?}");

    // The scripts' way to the target folder honours CARGO_TARGET_DIR.
    let elsewhere = std::env::temp_dir().join("mcp-workbench target elsewhere");
    let out = Command::new(root.join("scripts/target-dir"))
        .env("CARGO_TARGET_DIR", &elsewhere)
        .env("CARGO", option_env!("CARGO").unwrap_or("cargo"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", elsewhere.display())
    );
}

#[test]
#[cfg(unix)] // the script is bash, run with a PATH of symlinks
fn missing_prerequisites_stop_the_suite_with_one_line() {
    // A PATH with bash and nothing else, and a user who is not root: nothing
    // can be installed, so the script must stop at once and say what is missing.
    let bin = std::env::temp_dir().join(format!("mcp-workbench-prereq-{}", std::process::id()));
    let _ = fs::remove_dir_all(&bin);
    fs::create_dir_all(&bin).unwrap();
    let bash = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("bash is installed");
    std::os::unix::fs::symlink(bash, bin.join("bash")).unwrap();
    fs::write(bin.join("id"), "#!/bin/sh\necho 1000\n").unwrap();
    let mut mode = fs::metadata(bin.join("id")).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut mode, 0o755);
    fs::set_permissions(bin.join("id"), mode).unwrap();
    let run = |args: &[&str]| {
        Command::new(Path::new(ROOT).join("scripts/prerequisites"))
            .args(args)
            .env_clear()
            .env("PATH", &bin)
            .output()
            .unwrap()
    };
    let (out, linux_only) = (run(&[]), run(&["--no-wine"]));
    let _ = fs::remove_dir_all(&bin);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "setup failed: missing nodejs npm python3 python3-venv g++ gcc-mingw-w64-x86-64 wine wine64; \
         install them (on Debian, as root: apt-get install -y nodejs npm python3 python3-venv \
         g++ gcc-mingw-w64-x86-64 wine wine64)\n"
    );
    // scripts/test --no-wine asks for neither MinGW nor Wine.
    assert_eq!(linux_only.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&linux_only.stderr),
        "setup failed: missing nodejs npm python3 python3-venv g++; \
         install them (on Debian, as root: apt-get install -y nodejs npm python3 python3-venv g++)\n"
    );
}

fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().to_string();
        if path.is_dir() {
            if !["target", ".git", ".cache", "seeds", "node_modules"].contains(&name.as_str()) {
                text_files(&path, out);
            }
        } else if fs::read_to_string(&path).is_ok() {
            out.push(path);
        }
    }
}

#[test]
fn citations_point_into_the_repository() {
    let root = Path::new(ROOT);
    let reference = fs::read_to_string(root.join("docs/reference.md")).unwrap();
    // "## 5. Meta-tools" and "### 5.2 use_tool" define §5 and §5.2.
    let sections: Vec<String> = reference
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .filter_map(|l| l.trim_start_matches('#').split_whitespace().next())
        .map(|n| n.trim_end_matches('.').to_string())
        .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    // Outside documents the repository does not hold, by the words that cite them.
    let outside = [
        ["contract", " §"].concat(),
        ["seed", " 00"].concat(),
        ["Seed", " 00"].concat(),
        ["issue", " 3,"].concat(),
        ["issue", " 4,"].concat(),
        ["user", " story"].concat(),
        ["mcp-protocol", ".md"].concat(),
        ["real-peers", ".md"].concat(),
    ];
    let mut files = Vec::new();
    text_files(root, &mut files);
    let mut problems = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if relative == "tests/it/repo.rs" {
            continue;
        }
        let text = fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            for word in &outside {
                if line.contains(word.as_str()) {
                    problems.push(format!(
                        "{relative}:{}: cites an outside document: {line}",
                        i + 1
                    ));
                }
            }
            for (at, _) in line.match_indices("docs/reference.md §") {
                // "§4.3, §5" or "§4-5": every number must be a section.
                let numbers = cited_sections(&line[at + "docs/reference.md ".len()..]);
                for number in numbers {
                    if !sections.iter().any(|s| s == number) {
                        problems.push(format!(
                            "{relative}:{}: no section {number} in docs/reference.md",
                            i + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The section numbers at the start of `text`: `§4.3, §5` gives 4.3 and 5,
/// `§4-5` gives 4 and 5.
fn cited_sections(mut text: &str) -> Vec<&str> {
    let mut numbers = Vec::new();
    while let Some(rest) = text.strip_prefix('§').or_else(|| {
        (!numbers.is_empty())
            .then(|| text.strip_prefix('-'))
            .flatten()
    }) {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = rest[..end].trim_end_matches('.');
        if number.is_empty() {
            break;
        }
        numbers.push(number);
        text = &rest[end..];
        text = text.strip_prefix(", ").unwrap_or(text);
    }
    numbers
}

#[test]
fn cited_sections_are_read_as_written() {
    assert_eq!(cited_sections("§4.3, §5): x"), ["4.3", "5"]);
    assert_eq!(cited_sections("§4-5 and 2025-06-18"), ["4", "5"]);
    assert_eq!(cited_sections("§6. Names"), ["6"]);
    assert_eq!(cited_sections("§1, 2"), ["1"]);
    assert!(cited_sections("says").is_empty());
}

/// The README's `check` runs the workbench with `cargo run`, whose children
/// inherit `CARGO_MANIFEST_DIR` and `CARGO_PKG_*`; ring's build script tracks
/// them, so a cargo started with them rebuilds ring (and the fake server
/// misses its start-up time-out). The script's cargo is a stand-in here that
/// writes down the environment it got.
#[cfg(unix)]
#[test]
fn the_fake_server_script_hands_cargo_none_of_what_cargo_run_sets() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("wb-fake-server-env-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let seen = dir.join("env.txt");
    let stand_in = dir.join("cargo");
    fs::write(
        &stand_in,
        format!("#!/bin/sh\nenv > '{}'\n", seen.display()),
    )
    .unwrap();
    fs::set_permissions(&stand_in, fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let status = Command::new("bash")
        .arg(Path::new(ROOT).join("scripts/fake-server"))
        .env("PATH", path)
        .env("CARGO_MANIFEST_DIR", ROOT)
        .env("CARGO_PKG_NAME", "mcp-workbench")
        .env("CARGO_TARGET_DIR", "kept")
        .status()
        .unwrap();
    assert!(status.success());
    let env = fs::read_to_string(&seen).unwrap();
    let _ = fs::remove_dir_all(&dir);
    let names: Vec<&str> = env.lines().filter_map(|l| l.split('=').next()).collect();
    assert!(!names.contains(&"CARGO_MANIFEST_DIR"), "{env}");
    assert!(!names.contains(&"CARGO_PKG_NAME"), "{env}");
    assert!(env.lines().any(|l| l == "CARGO_TARGET_DIR=kept"), "{env}");
}

/// The synopses of a document's command list (the code block after
/// `heading`): each line up to the two spaces before its description.
fn listed_commands(document: &str, heading: &str) -> Vec<String> {
    let text = fs::read_to_string(Path::new(ROOT).join(document)).unwrap();
    let (_, after) = text
        .split_once(heading)
        .unwrap_or_else(|| panic!("{document} has no {heading:?}"));
    let (_, block) = after.split_once("```\n").unwrap();
    let (block, _) = block.split_once("```").unwrap();
    block
        .lines()
        .map(|line| {
            line.split("  ")
                .next()
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn the_documents_list_every_command_as_help_does() {
    let out = Command::new(crate::harness::WORKBENCH)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let commands: Vec<String> = help
        .lines()
        .filter(|line| line.starts_with("  mcp-workbench"))
        .map(|line| line.trim().to_string())
        .collect();
    assert!(commands.len() > 5, "{help}");
    for (document, heading) in [
        ("README.md", "### Command line and exit codes"),
        (
            "docs/guide-command-line.md",
            "## Command line and exit codes",
        ),
    ] {
        assert_eq!(
            listed_commands(document, heading),
            commands,
            "{document}'s command list is not --help's"
        );
    }
}
