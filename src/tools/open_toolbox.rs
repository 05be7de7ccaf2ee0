//! `open_toolbox`'s answer, made by the session from what its copies of the
//! toolbox found (`fleet::facts::Opened`): one copy, or the two of a toolbox
//! whose servers are partly shared (§8), their servers put back in config
//! order, in the form this host reads (`open_result`).

use super::meta_tools::{self, Outcome};
use super::open_result::{self, Form};
use crate::config::ToolboxConfig;
use crate::fleet::facts::{NotOpened, OpenFound};
use crate::fleet::toolbox::{OpenToolbox, ServerState, Toolboxes};

/// The answer to `open_toolbox` from what the toolbox's copies `found`
/// (`base`, the toolbox as configured, is what it describes when there were
/// two; else the one copy's definition). `form` and `requested` shape it
/// for the host (see `open_result`); `toolboxes` name the configured ones
/// for a toolbox that is not.
pub(crate) fn answer(
    base: Option<&ToolboxConfig>,
    found: Vec<OpenFound>,
    (form, requested): (Form, Option<&[String]>),
    toolboxes: &Toolboxes,
    name: &str,
) -> Outcome {
    let mut opened = Vec::new();
    let mut refused = Vec::new();
    for part in found {
        match part {
            Ok(part) => opened.push(part),
            Err(NotOpened::NotConfigured) => {
                refused.push(meta_tools::not_configured(toolboxes, name))
            }
            Err(NotOpened::Refused(why)) => refused.push(why),
        }
    }
    if !refused.is_empty() {
        return Outcome::error(refused.join("\n"));
    }
    let Some(base) = base.or(opened.first().map(|o| &*o.config)) else {
        return Outcome::error("internal error: no copy was opened".to_string());
    };
    let state_of = |name: &str| {
        opened.iter().find_map(|part| {
            let i = part.config.servers.iter().position(|s| s.name == name)?;
            Some(part.open.servers[i].clone())
        })
    };
    let open = OpenToolbox {
        servers: base
            .servers
            .iter()
            .map(|s| state_of(&s.name).unwrap_or(ServerState::Disabled))
            .collect(),
    };
    let notes = opened
        .iter()
        .flat_map(|o| &o.restarted)
        .map(|(server, why)| format!("Server '{server}' had stopped ({why}) and was restarted"))
        .collect();
    let described = meta_tools::describe_open(base, &open, notes);
    if opened.iter().all(|o| o.failed) {
        return Outcome::error(described.errors.join("\n"));
    }
    Outcome {
        text: open_result::reshape(described.json, form, requested),
        is_error: false,
        json: true,
    }
}
