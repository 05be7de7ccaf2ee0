//! The subcommands besides serving: `check`, `index`, `pins` and `learned`
//! (`status` and `fleet` are the shared fleet's, in `share`). Each returns
//! what `main` turns into output and an exit code.

pub mod check;
pub mod index;
pub mod learned;
pub mod pins;
