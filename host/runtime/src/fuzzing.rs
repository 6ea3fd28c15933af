//! Entry points for the `provider_answers` fuzz target (`fuzz/`): the host's checks of what a
//! provider answers, reached without loading a component.
//!
//! Hidden from the docs and not part of the crate's API: each function only forwards to the
//! private code that [`crate::Runtime::load`] and every call run, and changes with it.

use crate::bindings::metadata::ProviderMetadata;
use crate::contract::ContractInfo;
use crate::grants::Grants;
use crate::sandbox::Redactor;

/// What [`crate::Runtime::load`] makes of a provider's `metadata.describe` answer: its name and
/// declared extension points checked against `contract`, its config schema text parsed.
///
/// # Errors
///
/// Why the answer is refused: the detail of [`crate::LoadError::BadMetadata`].
pub fn check_metadata(
    contract: &ContractInfo,
    metadata: &ProviderMetadata,
) -> Result<serde_json::Value, String> {
    crate::provider::check_metadata(contract, metadata)
}

/// A provider's text (an error message, a log line) as the host passes it on: the values of
/// the secrets in `grants` replaced by `[redacted]`.
pub fn scrub(grants: &Grants, text: &str) -> String {
    Redactor::new(grants).scrub(text)
}
