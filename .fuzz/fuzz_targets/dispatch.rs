//! Fuzzes everything the host can send: framing, JSON-RPC classification, the
//! meta-tool validators, and a whole `Server` run in-process on the bytes (in
//! proxy and in dynamic mode).
//!
//! Every server in the config has a command that does not exist, so an
//! `open_toolbox` fails fast without starting a real process. Run it from the
//! repository root with a scratch corpus first, so that new inputs do not land
//! in the committed seeds:
//!
//! ```text
//! mkdir -p /tmp/fuzz-corpus
//! CARGO_TARGET_DIR=/tmp/fuzz-target cargo +nightly fuzz run --fuzz-dir .fuzz dispatch \
//!     /tmp/fuzz-corpus .fuzz/seeds/dispatch -- -max_total_time=600
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_workbench::config::{self, Config, Mode};
use mcp_workbench::framing::LineReader;
use mcp_workbench::jsonrpc::{self, Incoming, Members, Read};
use mcp_workbench::params;
use mcp_workbench::server::Server;
use serde_json::{Map, Value};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const CONFIG: &str = r#"{
  "toolboxes": {
    "dev": {
      "description": "Development environment",
      "mcpServers": {
        "files": {"command": "/nonexistent/fuzz-server", "args": ["x"], "startupTimeoutMs": 2000},
        "off": {"command": "/nonexistent/fuzz-server", "disabled": true}
      }
    },
    "prod": {
      "description": "Production",
      "mcpServers": {
        "files": {"command": "/nonexistent/fuzz-server"}
      }
    }
  }
}"#;

/// The config, loaded once from a file with `config::load` (as the binary does).
fn config() -> &'static Config {
    static CONFIG_ONCE: OnceLock<Config> = OnceLock::new();
    CONFIG_ONCE.get_or_init(|| {
        let path =
            std::env::temp_dir().join(format!("mcp-workbench-fuzz-{}.json", std::process::id()));
        std::fs::write(&path, CONFIG).expect("the temp dir is writable");
        let loaded = config::load(&path).expect("the fuzz config is valid");
        let _ = std::fs::remove_file(&path);
        loaded.config
    })
}

/// The meta-tool validators on an object and on every object nested in it
/// (bounded, so that deep input cannot make this harness itself recurse deeply).
fn validate(obj: &Map<String, Value>, depth: usize) {
    let _ = params::use_tool(obj);
    let _ = params::toolbox_name(obj);
    if depth == 0 {
        return;
    }
    for value in obj.values() {
        if let Value::Object(inner) = value {
            validate(inner, depth - 1);
        }
    }
}

/// The threads of this process.
fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task").map_or(0, |d| d.count())
}

/// `Server::run` may return while detached helper threads (the fleet loop,
/// workers past their grace) are still ending; their thread-locals
/// are freed only as they exit. Waiting for them keeps LeakSanitizer's check at
/// the end of each input from reporting a thread that is half-way out. A thread
/// still alive after a second is a real finding: it is left for the leak check.
fn settle(baseline: usize) {
    let deadline = Instant::now() + Duration::from_secs(1);
    while thread_count() > baseline && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
}

fuzz_target!(|data: &[u8]| {
    // (a) Framing, parsing, classification and the validators, line by line.
    let mut reader = LineReader::new(data);
    while let Ok(Some(line)) = reader.next_line() {
        if let Ok(Value::Object(obj)) = serde_json::from_slice::<Value>(line) {
            validate(&obj, 4);
        }
        if let Ok(Read::One(
            Incoming::Request {
                params: Some(p), ..
            }
            | Incoming::Notification {
                params: Some(p), ..
            },
        )) = jsonrpc::read(line)
        {
            // The validators as the server calls them: on an outline of the
            // members, read without building values.
            if let Ok(members) = Members::read(&p) {
                validate(&params::outline(&members, &["tool"]), 0);
                if let Some(Ok(args)) = members.get("arguments").map(Members::read) {
                    validate(&params::outline(&args, &["tool"]), 0);
                }
            }
        }
    }

    // (b) A whole server, in proxy and in dynamic mode, until EOF; output is discarded.
    let threads = thread_count();
    for mode in [Mode::Proxy, Mode::Dynamic] {
        let mut config = config().clone();
        config.mode = mode;
        let server = Server::new(config, Box::new(std::io::sink()));
        let _ = server.run(data);
    }
    settle(threads);
});
