//! `host-secrets`: a provider reads only the secrets granted to it, by the grant's name.

use super::CallState;
use super::journal::Capability;

/// Why `host-secrets.get` has no value for a name, at any contract version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecretLookupError {
    /// No grant of that name; recorded as a denial.
    NotGranted,
    /// Granted, but the Secret behind the grant does not exist (yet).
    NotFound,
}

impl CallState {
    /// `host-secrets.get`: the value of the secret granted under `name`.
    pub(crate) fn granted_secret(&mut self, name: String) -> Result<Vec<u8>, SecretLookupError> {
        match self.grants.secrets.get(&name) {
            Some(Some(secret)) => Ok(secret.expose().to_vec()),
            Some(None) => Err(SecretLookupError::NotFound),
            None => {
                self.journal.deny(Capability::Secret, name);
                Err(SecretLookupError::NotGranted)
            }
        }
    }
}
