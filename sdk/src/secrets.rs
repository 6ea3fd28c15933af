//! Secrets the operator granted to this provider in its WasmProvider, by grant name.
//!
//! Only granted secrets are readable: the provider's `requested_grants` asks, the operator
//! decides. Never log a secret's value or put it in an error message.
//!
//! Outside a wasm32 component (a provider's native unit tests) there is no host, and so no
//! grant: [`get`] answers [`SecretError::NotGranted`].

use crate::types::{ErrorCode, ProviderError};

/// Why a secret could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// No grant of that name: the operator did not allow it. Permanent until the grants change.
    #[error("not granted to this provider")]
    NotGranted,
    /// Granted, but the Secret behind the grant does not exist (yet). May appear later.
    #[error("granted, but the secret does not exist")]
    NotFound,
}

/// A missing grant is permanent (`not-granted`); a granted secret that does not exist yet may
/// appear, so the host retries it.
impl From<SecretError> for ProviderError {
    fn from(e: SecretError) -> Self {
        match e {
            SecretError::NotGranted => {
                ProviderError::permanent(ErrorCode::NotGranted, format!("secret {e}"))
            }
            SecretError::NotFound => {
                ProviderError::retryable(ErrorCode::Unavailable, format!("secret {e}"))
            }
        }
    }
}

/// The value of the secret granted under `name`.
///
/// # Errors
///
/// [`SecretError::NotGranted`] when no grant has that name; [`SecretError::NotFound`] when the
/// Secret behind the grant does not exist.
pub fn get(name: &str) -> Result<Vec<u8>, SecretError> {
    fetch(name)
}

#[cfg(target_arch = "wasm32")]
fn fetch(name: &str) -> Result<Vec<u8>, SecretError> {
    use crate::__bindings::capw::provider::host_secrets;
    host_secrets::get(name).map_err(|e| match e {
        host_secrets::SecretError::NotGranted => SecretError::NotGranted,
        host_secrets::SecretError::NotFound => SecretError::NotFound,
    })
}

#[cfg(not(target_arch = "wasm32"))]
fn fetch(_name: &str) -> Result<Vec<u8>, SecretError> {
    Err(SecretError::NotGranted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_grant_outside_a_component() {
        assert_eq!(get("db-password"), Err(SecretError::NotGranted));
    }

    #[test]
    fn secret_errors_become_provider_errors() {
        let e = ProviderError::from(SecretError::NotGranted);
        assert_eq!(e.code, ErrorCode::NotGranted);
        assert!(!e.retryable);
        assert!(ProviderError::from(SecretError::NotFound).retryable);
    }
}
