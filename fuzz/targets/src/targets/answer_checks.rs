//! The runtime's check of every provider answer before the host keeps any of it
//! (`host/runtime/src/answer.rs`, reached through `capw_runtime::fuzzing`): names refused when
//! too long or holding a control character, list lengths bounded, text redacted of the call's
//! secrets, escaped and cut. One answer of any type an extension point returns, a provider
//! error, a `metadata.describe` answer or a `validate-config` verdict, with the secrets the
//! call was granted.
//!
//! The answers are built by `capw_fuzz::answers`, of strings made to meet the check's edges.
//! Here each answer's fields are listed with the rule the contract gives them, independently
//! of how the host walks it, and what the host kept (or why it refused) is judged by them.
//!
//! # Checks
//!
//! No panic, and:
//! - the check is deterministic: the same answer and secrets give the same verdict and the
//!   same kept answer;
//! - an accepted answer's every name is within its limit, holds no control character and is
//!   kept as sent; its every list is within its limit;
//! - every kept text holds no control character and is within its limit (plus the `…` that
//!   marks a cut); one that was within its limit, without control characters and without a
//!   secret is kept unchanged; one that was too long (and clean) is cut to its longest prefix
//!   within the limit; one without control characters holds no secret value the host scrubs
//!   (for secret sets the placeholder cannot make anew, `capw_fuzz::secrets`);
//! - a refused answer's error names, under the answer's root, a name or a list of the answer
//!   that does break its rule, and never holds the offending value.
//!
//! Text with control characters is not checked for secrets: escaping it can spell a value the
//! provider never wrote (a tab before `tabcdef` reads `\ttabcdef`); the values it held were
//! scrubbed before escaping, which the control-free case checks.

use capw_runtime::{
    Grants, InvalidAnswer, MAX_LIST_ENTRIES, MAX_LISTED_MACHINES, MAX_MESSAGE_BYTES,
    MAX_NAME_BYTES, MAX_PROVIDER_ID_BYTES, MAX_REASON_BYTES, MAX_SCHEMA_BYTES, bootstrap,
    control_plane, fuzzing, infrastructure, lifecycle_hooks, metadata, types,
};

use super::{Replayed, decode};
use crate::answers::{
    Answer, Call, Ctx, Input, bootstrap_data, cluster_state, config_verdict, deletion, describe,
    hook_response, is_listed_filler, listed_machines, machine_status, plan_output, provider_error,
    secrets_state,
};
use crate::secrets;

/// Longest version a provider may describe itself with (`answer.rs`).
const MAX_VERSION_BYTES: usize = 64;

/// What a field of an answer is held to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    /// Refused when longer than this or holding a control character; kept as sent.
    Name(usize),
    /// Redacted, escaped and cut at this many bytes.
    Text(usize),
    /// Refused with more entries than this.
    List(usize),
    /// The config schema: refused when too large or too deep.
    Schema,
}

/// One field of an answer: where it is (as the host names it), its rule, its value (text
/// fields and names) and its length (bytes, or entries of a list).
#[derive(Debug, PartialEq)]
struct Field {
    path: String,
    rule: Rule,
    value: String,
    len: usize,
}

/// The fields of an answer, in a list.
#[derive(Default)]
struct Fields(Vec<Field>);

impl Fields {
    fn push(&mut self, path: String, rule: Rule, value: &str) {
        self.0.push(Field {
            path,
            rule,
            len: value.len(),
            value: value.to_owned(),
        });
    }

    fn name(&mut self, path: String, value: &str, max: usize) {
        self.push(path, Rule::Name(max), value);
    }

    fn text(&mut self, path: String, value: &str, max: usize) {
        self.push(path, Rule::Text(max), value);
    }

    fn list(&mut self, path: String, len: usize, max: usize) {
        self.0.push(Field {
            path,
            rule: Rule::List(max),
            value: String::new(),
            len,
        });
    }

    fn names<'a>(&mut self, at: &str, values: impl ExactSizeIterator<Item = &'a str>) {
        self.list(at.to_owned(), values.len(), MAX_LIST_ENTRIES);
        for (i, v) in values.enumerate() {
            self.name(format!("{at}[{i}]"), v, MAX_NAME_BYTES);
        }
    }

    fn conditions(&mut self, at: &str, cs: &[types::Condition]) {
        self.list(format!("{at}.conditions"), cs.len(), MAX_LIST_ENTRIES);
        for (i, c) in cs.iter().enumerate() {
            let at = format!("{at}.conditions[{i}]");
            self.name(format!("{at}.type"), &c.type_, MAX_NAME_BYTES);
            self.text(format!("{at}.reason"), &c.reason, MAX_REASON_BYTES);
            self.text(format!("{at}.message"), &c.message, MAX_MESSAGE_BYTES);
        }
    }

    fn in_progress(&mut self, at: &str, p: &types::InProgress) {
        self.text(format!("{at}.reason"), &p.reason, MAX_REASON_BYTES);
        self.text(format!("{at}.message"), &p.message, MAX_MESSAGE_BYTES);
        self.conditions(at, &p.conditions);
    }
}

/// An answer type, its fields listed the way the contract (docs/contract.md, "Limits on
/// answers") gives them, independently of how the host walks it.
trait Walk {
    fn walk(&self, root: &str, f: &mut Fields);
}

impl Walk for infrastructure::ClusterState {
    fn walk(&self, root: &str, f: &mut Fields) {
        match self {
            infrastructure::ClusterState::Ready(r) => {
                let at = format!("{root}.ready");
                if let Some(e) = &r.control_plane_endpoint {
                    f.name(
                        format!("{at}.control-plane-endpoint.host"),
                        &e.host,
                        MAX_NAME_BYTES,
                    );
                }
                f.list(
                    format!("{at}.failure-domains"),
                    r.failure_domains.len(),
                    MAX_LIST_ENTRIES,
                );
                for (i, d) in r.failure_domains.iter().enumerate() {
                    f.name(
                        format!("{at}.failure-domains[{i}].name"),
                        &d.name,
                        MAX_NAME_BYTES,
                    );
                }
                f.conditions(&at, &r.conditions);
            }
            infrastructure::ClusterState::InProgress(p) => {
                f.in_progress(&format!("{root}.in-progress"), p)
            }
        }
    }
}

impl Walk for infrastructure::MachineStatus {
    fn walk(&self, root: &str, f: &mut Fields) {
        if let Some(id) = &self.provider_id {
            f.name(format!("{root}.provider-id"), id, MAX_PROVIDER_ID_BYTES);
        }
        f.list(
            format!("{root}.addresses"),
            self.addresses.len(),
            MAX_LIST_ENTRIES,
        );
        for (i, a) in self.addresses.iter().enumerate() {
            f.name(
                format!("{root}.addresses[{i}].address"),
                &a.address,
                MAX_NAME_BYTES,
            );
        }
        if let Some(d) = &self.failure_domain {
            f.name(format!("{root}.failure-domain"), d, MAX_NAME_BYTES);
        }
        f.text(format!("{root}.message"), &self.message, MAX_MESSAGE_BYTES);
        f.conditions(root, &self.conditions);
    }
}

impl Walk for Vec<infrastructure::ListedMachine> {
    fn walk(&self, root: &str, f: &mut Fields) {
        f.list(root.to_owned(), self.len(), MAX_LISTED_MACHINES);
        for (i, m) in self.iter().enumerate() {
            if is_listed_filler(m) {
                continue;
            }
            let at = format!("{root}[{i}]");
            f.name(
                format!("{at}.idempotency-key"),
                &m.idempotency_key,
                MAX_NAME_BYTES,
            );
            f.name(
                format!("{at}.provider-id"),
                &m.provider_id,
                MAX_PROVIDER_ID_BYTES,
            );
            f.name(
                format!("{at}.machine-name"),
                &m.machine_name,
                MAX_NAME_BYTES,
            );
        }
    }
}

impl Walk for types::Deletion {
    fn walk(&self, root: &str, f: &mut Fields) {
        if let types::Deletion::InProgress(p) = self {
            f.in_progress(&format!("{root}.in-progress"), p);
        }
    }
}

impl Walk for bootstrap::SecretsState {
    fn walk(&self, root: &str, f: &mut Fields) {
        match self {
            bootstrap::SecretsState::Ready(items) => {
                let at = format!("{root}.ready");
                f.list(at.clone(), items.len(), MAX_LIST_ENTRIES);
                for (i, item) in items.iter().enumerate() {
                    f.name(format!("{at}[{i}].name"), &item.name, MAX_NAME_BYTES);
                }
            }
            bootstrap::SecretsState::InProgress(p) => {
                f.in_progress(&format!("{root}.in-progress"), p)
            }
        }
    }
}

impl Walk for bootstrap::BootstrapData {
    fn walk(&self, _: &str, _: &mut Fields) {}
}

impl Walk for control_plane::PlanOutput {
    fn walk(&self, root: &str, f: &mut Fields) {
        let step = format!("{root}.step");
        match &self.step {
            control_plane::Step::None | control_plane::Step::ApplyManifests(_) => {}
            control_plane::Step::CreateMachine(m) => {
                if let Some(d) = &m.failure_domain {
                    f.name(
                        format!("{step}.create-machine.failure-domain"),
                        d,
                        MAX_NAME_BYTES,
                    );
                }
            }
            control_plane::Step::DeleteMachine(m) => {
                f.name(
                    format!("{step}.delete-machine.name"),
                    &m.name,
                    MAX_NAME_BYTES,
                );
                f.name(format!("{step}.delete-machine.uid"), &m.uid, MAX_NAME_BYTES);
            }
            control_plane::Step::RemoveEtcdMember(m) => {
                f.name(
                    format!("{step}.remove-etcd-member.name"),
                    &m.name,
                    MAX_NAME_BYTES,
                );
                f.name(
                    format!("{step}.remove-etcd-member.uid"),
                    &m.uid,
                    MAX_NAME_BYTES,
                );
            }
            control_plane::Step::Wait(p) => f.in_progress(&format!("{step}.wait"), p),
        }
        if let Some(e) = &self.endpoint {
            f.name(format!("{root}.endpoint.host"), &e.host, MAX_NAME_BYTES);
        }
        let at = format!("{root}.certificates");
        f.list(at.clone(), self.certificates.len(), MAX_LIST_ENTRIES);
        for (i, secret) in self.certificates.iter().enumerate() {
            let at = format!("{at}[{i}]");
            f.name(format!("{at}.name"), &secret.name, MAX_NAME_BYTES);
            let at = format!("{at}.certificates");
            f.list(at.clone(), secret.certificates.len(), MAX_LIST_ENTRIES);
            for (j, c) in secret.certificates.iter().enumerate() {
                let at = format!("{at}[{j}]");
                f.name(format!("{at}.key"), &c.key, MAX_NAME_BYTES);
                f.name(format!("{at}.common-name"), &c.common_name, MAX_NAME_BYTES);
                f.names(
                    &format!("{at}.organizations"),
                    c.organizations.iter().map(String::as_str),
                );
                f.names(&format!("{at}.sans"), c.sans.iter().map(String::as_str));
                if let Some(url) = &c.kubeconfig_server {
                    f.name(format!("{at}.kubeconfig-server"), url, MAX_NAME_BYTES);
                }
            }
        }
        f.conditions(root, &self.conditions);
    }
}

impl Walk for lifecycle_hooks::HookResponse {
    fn walk(&self, root: &str, f: &mut Fields) {
        if let lifecycle_hooks::HookResponse::Hold(p) = self {
            f.in_progress(&format!("{root}.hold"), p);
        }
    }
}

impl Walk for types::ProviderError {
    fn walk(&self, root: &str, f: &mut Fields) {
        f.text(format!("{root}.message"), &self.message, MAX_MESSAGE_BYTES);
    }
}

impl Walk for metadata::ProviderMetadata {
    fn walk(&self, root: &str, f: &mut Fields) {
        f.name(format!("{root}.name"), &self.name, MAX_NAME_BYTES);
        f.name(format!("{root}.version"), &self.version, MAX_VERSION_BYTES);
        f.text(
            format!("{root}.description"),
            &self.description,
            MAX_MESSAGE_BYTES,
        );
        f.push(
            format!("{root}.config-schema"),
            Rule::Schema,
            &self.config_schema,
        );
        let grants = &self.requested_grants;
        f.names(
            &format!("{root}.requested-grants.http-hosts"),
            grants.http_hosts.iter().map(String::as_str),
        );
        f.names(
            &format!("{root}.requested-grants.secrets"),
            grants.secrets.iter().map(String::as_str),
        );
    }
}

impl Walk for Result<(), Vec<metadata::FieldError>> {
    fn walk(&self, root: &str, f: &mut Fields) {
        if let Err(errors) = self {
            f.list(format!("{root}.errors"), errors.len(), MAX_LIST_ENTRIES);
            for (i, e) in errors.iter().enumerate() {
                let at = format!("{root}.errors[{i}]");
                f.text(format!("{at}.path"), &e.path, MAX_REASON_BYTES);
                f.text(format!("{at}.message"), &e.message, MAX_MESSAGE_BYTES);
            }
        }
    }
}

type Check<A> = fn(&mut A, &Grants) -> Result<(), InvalidAnswer>;

/// Each kind of answer: the root the host names its fields under, how its contract value is
/// built, and the check of `capw_runtime::fuzzing` it goes through.
macro_rules! judge {
    ($call:expr, $answer:expr, $($kind:ident => $root:literal, $build:ident, $check:ident;)*) => {
        match $answer {
            $(Answer::$kind(m) => judge_answer($call, $root, |c| $build(c, m), fuzzing::$check),)*
        }
    };
}

/// Decodes `bytes` as libFuzzer's entry does and runs [`run`].
pub fn replay(bytes: &[u8]) -> Replayed {
    let Some(input) = decode::<Input>(bytes) else {
        return Replayed::Rejected;
    };
    run(input);
    Replayed::Ran
}

/// The target: one answer, with the call's secrets, through the runtime's check, and what the
/// host kept (or why it refused it) judged.
///
/// # Panics
///
/// When a check of the module's documentation fails.
pub fn run(input: Input) {
    judge!(&Call::new(&input), &input.answer,
        ClusterState => "cluster-state", cluster_state, check_cluster_state;
        MachineStatus => "machine-status", machine_status, check_machine_status;
        ListedMachines => "listed-machines", listed_machines, check_listed_machines;
        Deletion => "deletion", deletion, check_deletion;
        SecretsState => "secrets-state", secrets_state, check_secrets_state;
        BootstrapData => "bootstrap-data", bootstrap_data, check_bootstrap_data;
        PlanOutput => "plan-output", plan_output, check_plan_output;
        HookResponse => "hook-response", hook_response, check_hook_response;
        ProviderError => "provider-error", provider_error, check_provider_error;
        Describe => "provider-metadata", describe, check_described;
        ConfigVerdict => "validate-config", config_verdict, check_config_verdict;
    );
}

/// Checks one answer (built twice more, to see the check deterministic) and judges what the
/// host kept or why it refused it.
fn judge_answer<A: Walk>(call: &Call, root: &str, build: impl Fn(&Ctx<'_>) -> A, check: Check<A>) {
    let sent = build(&call.ctx());
    let mut kept = build(&call.ctx());
    let verdict = check(&mut kept, &call.grants);
    let mut again = build(&call.ctx());
    let verdict_again = check(&mut again, &call.grants);
    assert_eq!(verdict, verdict_again, "the same answer, another verdict");

    let mut before = Fields::default();
    sent.walk(root, &mut before);
    match verdict {
        Ok(()) => {
            let mut after = Fields::default();
            kept.walk(root, &mut after);
            let mut after_again = Fields::default();
            again.walk(root, &mut after_again);
            assert!(after.0 == after_again.0, "the same answer, kept otherwise");
            assert_eq!(before.0.len(), after.0.len(), "the answer's shape changed");
            let needles = secrets::scrubbed(&call.values);
            let checks_secrets = secrets::placeholder_free(&needles);
            for (sent, kept) in before.0.iter().zip(&after.0) {
                accepted(sent, kept, &needles, checks_secrets);
            }
        }
        Err(error) => refused(&error, root, &before),
    }
}

fn accepted(sent: &Field, kept: &Field, needles: &[&str], checks_secrets: bool) {
    let path = &sent.path;
    match sent.rule {
        Rule::Name(max) => {
            assert!(sent.len <= max, "accepted {path} of {} bytes", sent.len);
            assert!(
                !sent.value.chars().any(char::is_control),
                "accepted {path} with a control character: {:?}",
                sent.value
            );
            assert_eq!(sent.value, kept.value, "{path} changed");
        }
        Rule::List(max) => assert!(sent.len <= max, "accepted {path} of {} entries", sent.len),
        Rule::Schema => assert!(sent.len <= MAX_SCHEMA_BYTES, "accepted a schema too large"),
        Rule::Text(max) => kept_text(path, &sent.value, &kept.value, max, needles, checks_secrets),
    }
}

fn kept_text(
    path: &str,
    sent: &str,
    kept: &str,
    max: usize,
    needles: &[&str],
    checks_secrets: bool,
) {
    assert!(
        !kept.chars().any(char::is_control),
        "{path} kept a control character: {kept:?}"
    );
    if kept.len() > max {
        let head = kept.strip_suffix('…');
        assert!(
            head.is_some_and(|h| h.len() <= max),
            "{path} kept {} bytes, at most {max}",
            kept.len()
        );
    }
    let has_control = sent.chars().any(char::is_control);
    let has_secret = needles.iter().any(|n| sent.contains(n));
    if !has_control && !has_secret {
        if sent.len() <= max {
            assert_eq!(kept, sent, "{path}: a clean text within its limit changed");
        } else {
            let head = kept
                .strip_suffix('…')
                .unwrap_or_else(|| panic!("{path}: a cut text without its mark: {kept:?}"));
            assert!(
                sent.starts_with(head),
                "{path}: a cut text is not a prefix of the sent one"
            );
            let next = sent[head.len()..].chars().next().map_or(0, char::len_utf8);
            assert!(
                head.len() + next > max,
                "{path}: cut at {} bytes, before the limit {max}",
                head.len()
            );
        }
    }
    if checks_secrets && !has_control {
        // The cut mark can complete a value that ends with it; the provider never wrote it.
        for needle in needles.iter().filter(|n| !n.contains('…')) {
            assert!(
                !kept.contains(needle),
                "{path} kept a secret value {needle:?}: {kept:?}"
            );
        }
    }
}

fn refused(error: &InvalidAnswer, root: &str, fields: &Fields) {
    let shown = error.to_string();
    assert!(
        error.field.starts_with(root),
        "the refusal names {:?}, outside {root}",
        error.field
    );
    assert!(
        !shown.chars().any(char::is_control),
        "the refusal holds a control character: {shown:?}"
    );
    let field = fields
        .0
        .iter()
        .find(|f| f.path == error.field)
        .unwrap_or_else(|| panic!("the refusal names no field of the answer: {error}"));
    match field.rule {
        Rule::Name(max) => {
            assert!(
                field.len > max || field.value.chars().any(char::is_control),
                "refused {} that keeps its rule: {error}",
                field.path
            );
            assert!(
                !shown.contains(&field.value),
                "the refusal holds the value it refuses: {shown:?}"
            );
        }
        Rule::List(max) => assert!(
            field.len > max,
            "refused {} of {} entries: {error}",
            field.path,
            field.len
        ),
        Rule::Schema => assert!(
            !shown.contains(&field.value),
            "the refusal holds the schema it refuses"
        ),
        Rule::Text(_) => panic!("refused the text {}: {error}", field.path),
    }
}
