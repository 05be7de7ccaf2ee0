//! What a request to a server comes to, as the handle's callers see it:
//! an answer (`Reply`), a failure and why (`Failure`, `Why`), a call not
//! taken (`Refused`), and whether the server is idle (`Idle`). Plain data,
//! shared by the pump's files; no IO.

use crate::protocol::jsonrpc::ErrorObject;
use serde_json::value::RawValue;
use std::time::Instant;

/// Why a request to a child produced no result.
#[derive(Debug, Clone)]
pub(crate) struct Failure {
    pub why: Why,
    /// The child's last stderr lines when it failed (`tail::Tail::text`):
    /// told with a timeout or the end, empty when none are known.
    pub tail: String,
}

#[derive(Debug, Clone)]
pub(crate) enum Why {
    /// The child answered with a JSON-RPC error.
    Rpc(ErrorObject),
    /// No answer before the deadline.
    Timeout,
    /// The child is gone, was stopped, or sent what cannot be read; the
    /// text says how.
    Down(String),
}

impl Failure {
    pub(super) fn rpc(error: ErrorObject, tail: String) -> Failure {
        Failure {
            why: Why::Rpc(error),
            tail,
        }
    }

    pub(super) fn timeout(tail: String) -> Failure {
        Failure {
            why: Why::Timeout,
            tail,
        }
    }

    pub(super) fn down(why: String, tail: String) -> Failure {
        Failure {
            why: Why::Down(why),
            tail,
        }
    }
}

/// A request's answer, with the child's last stderr lines then (for a
/// failure found in the answer).
pub(crate) struct Reply {
    pub raw: Box<RawValue>,
    pub tail: String,
}

/// Whether a child is idle (`Downstream::idle_since`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Idle {
    /// A forwarded call is in flight.
    Busy,
    /// No call has been in flight since then.
    Since(Instant),
    /// It is gone, being stopped, or retiring.
    NotServing,
}

/// Why `forward_call` did not take a call.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The child is gone or going: a restart may serve the call.
    Down(String),
    /// The child is alive but has not read what it was sent.
    Busy(String),
}
