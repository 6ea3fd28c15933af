//! The call's journal: what the sandbox refused during one call. The answer alone cannot say
//! why a provider failed; a refusal recorded here usually does, and the caller reports it with
//! the failure ([`crate::CallFailure::Denied`]).

use std::fmt;
use std::sync::Mutex;

/// A capability the sandbox can refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Outbound HTTP to an authority not granted.
    Http,
    /// A secret not granted.
    Secret,
    /// A socket (every socket is refused).
    Socket,
}

/// One refusal of the sandbox during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// The kind of capability refused.
    pub capability: Capability,
    /// What was asked for, e.g. `https://example.com:443` or the secret's name.
    pub target: String,
}

impl fmt::Display for Denial {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.capability {
            Capability::Http => "outbound HTTP to",
            Capability::Secret => "secret",
            Capability::Socket => "socket to",
        };
        write!(f, "{what} {}", self.target)
    }
}

/// What one call leaves behind besides its answer: refusals and limit hits. Shared with
/// closures the WASI context keeps, hence the lock.
#[derive(Default)]
pub(crate) struct CallJournal {
    denials: Mutex<Vec<Denial>>,
}

impl CallJournal {
    /// Records (and logs) that the sandbox refused `capability` for `target`.
    pub(super) fn deny(&self, capability: Capability, target: String) {
        tracing::warn!(capability = ?capability, %target, "sandbox denied a capability");
        self.denials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Denial { capability, target });
    }

    /// The call's first refusal: the one that most likely explains its failure.
    pub(crate) fn first_denial(&self) -> Option<Denial> {
        self.denials
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .cloned()
    }
}
