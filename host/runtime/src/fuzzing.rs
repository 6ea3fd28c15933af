//! Entry points for the `provider_answers` fuzz target (`fuzz/`): the host's checks of what a
//! provider answers, reached without loading a component.
//!
//! Hidden from the docs and not part of the crate's API: each function only forwards to the
//! private code that [`crate::Runtime::load`] and every call run, and changes with it.

use crate::answer::{Answer, Checker, InvalidAnswer, answer_root};
use crate::contract::ContractInfo;
use crate::grants::Grants;
use crate::model::metadata::{FieldError, ProviderMetadata};
use crate::model::{bootstrap, control_plane, infrastructure, lifecycle_hooks, types};
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

/// The check a call's end (`call::finish`) makes of an answer, rooted where it roots it, with
/// the secrets of `grants` as the call's redactor holds them.
fn check(root: &str, answer: &mut impl Answer, grants: &Grants) -> Result<(), InvalidAnswer> {
    let redactor = Redactor::new(grants);
    answer.check(&mut Checker::new(root, Some(&redactor)))
}

/// One public function per answer type, each checking an answer of `operation` as a call of
/// it ends: names and list lengths checked, text redacted, escaped and cut in place.
macro_rules! answer_checks {
    ($($name:ident($answer:ty) as $operation:literal;)*) => {$(
        #[doc = concat!("An answer to `", $operation, "` as the call ends with it.")]
        ///
        /// # Errors
        ///
        /// The field that breaks the contract's limits; the answer is then not kept.
        pub fn $name(answer: &mut $answer, grants: &Grants) -> Result<(), InvalidAnswer> {
            check(answer_root($operation), answer, grants)
        }
    )*};
}

answer_checks! {
    check_cluster_state(infrastructure::ClusterState) as "infrastructure.reconcile-cluster";
    check_machine_status(infrastructure::MachineStatus) as "infrastructure.reconcile-machine";
    check_listed_machines(Vec<infrastructure::ListedMachine>) as "infrastructure.list-machines";
    check_deletion(types::Deletion) as "infrastructure.delete-machine";
    check_secrets_state(bootstrap::SecretsState) as "bootstrap.cluster-secrets";
    check_bootstrap_data(bootstrap::BootstrapData) as "bootstrap.generate";
    check_plan_output(control_plane::PlanOutput) as "control-plane.plan";
    check_hook_response(lifecycle_hooks::HookResponse) as "lifecycle-hooks.handle";
    check_described(ProviderMetadata) as "metadata.describe";
    check_config_verdict(Result<(), Vec<FieldError>>) as "metadata.validate-config";
}

/// A provider error as a call ends with it (rooted at `provider-error`, as `call::finish`
/// does).
///
/// # Errors
///
/// The field that breaks the contract's limits.
pub fn check_provider_error(
    error: &mut types::ProviderError,
    grants: &Grants,
) -> Result<(), InvalidAnswer> {
    check("provider-error", error, grants)
}
