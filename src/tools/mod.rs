//! The meta-tools as the host sees them: their definitions and texts
//! (`meta_tools`), the validation of their arguments (`params`), the
//! `use_tool` hot path (`forward`), the forms of `open_toolbox` results
//! (`open_result`), and dynamic mode's native tools (`dynamic`, `naming`).

pub(crate) mod close_toolbox;
pub(crate) mod dynamic;
pub(crate) mod find_tools;
pub(crate) mod meta_tools;
pub(crate) mod naming;
pub(crate) mod open_result;
pub(crate) mod open_toolbox;
pub(crate) mod params;
