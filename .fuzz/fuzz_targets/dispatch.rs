//! Fuzzes everything the host can send: framing, JSON-RPC classification, and
//! a whole `Server` run in-process on the bytes (in proxy and in dynamic
//! mode), which runs the meta-tools' validators on every call.
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
use mcp_workbench::host::inbox::HostInput;
use mcp_workbench::host::server::Server;
use mcp_workbench::protocol::framing::LineReader;
use mcp_workbench::protocol::jsonrpc::{self, Incoming, Members, Read};
use mcp_workbench::tools;
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
    // (a) Framing, parsing, classification and the validators, line by line:
    // the validators as the server calls them, on the members of a message's
    // params and of their `arguments`, read without building values.
    let mut reader = LineReader::new(data);
    while let Ok(Some(line)) = reader.next_line() {
        if let Ok(Read::One(
            Incoming::Request {
                params: Some(p), ..
            }
            | Incoming::Notification {
                params: Some(p), ..
            },
        )) = jsonrpc::read(line)
        {
            if let Ok(members) = Members::read(&p) {
                tools::check_arguments(&members);
                if let Some(Ok(args)) = members.get("arguments").map(Members::read) {
                    tools::check_arguments(&args);
                }
            }
        }
    }

    // (b) A whole server, in proxy and in dynamic mode, until EOF; output is discarded.
    let threads = thread_count();
    for mode in [Mode::Proxy, Mode::Dynamic] {
        let mut config = config().clone();
        config.mode = mode;
        let input = HostInput::reader(std::io::Cursor::new(data.to_vec()));
        if let Ok(server) = Server::with_output(config, Box::new(std::io::sink()), input) {
            let _ = server.run();
        }
    }
    settle(threads);
});
