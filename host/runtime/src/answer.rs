//! What a provider answers is data, never terminal control and never unbounded.
//!
//! Every answer is checked here before the host keeps any of it, by the rules below; the
//! limits are the contract's (docs/contract.md, "Limits on answers").
//!
//! - **Names** (machine and failure-domain names, idempotency keys, provider ids, addresses,
//!   endpoint hosts, condition types, secret names, requested hosts): the host matches and
//!   stores them as they are, so one that is too long or holds a control character makes the
//!   answer invalid ([`InvalidAnswer`] names the field), and nothing of it is kept.
//! - **Text** (messages, reasons, descriptions): for people only, so it is kept, but with
//!   any secret the call read replaced by `[redacted]`, its control characters escaped
//!   (`\n`, `\u{1b}`: it stays one line and cannot move a terminal's cursor) and cut at its
//!   limit, with `…` where it was cut.
//! - **Lists** of conditions, addresses, failure domains, listed machines and field errors
//!   have a most number of entries; more makes the answer invalid.
//! - **Data** (bootstrap data, secrets, kubeconfigs, manifests) is bounded only by the size
//!   of the whole answer ([`crate::limits::MAX_RESULT_BYTES`]).

use std::fmt::Write as _;

use crate::model::{bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata, types};
use crate::sandbox::Redactor;

/// Longest name, in bytes (a DNS subdomain's limit).
pub const MAX_NAME_BYTES: usize = 253;
/// Longest provider id, in bytes.
pub const MAX_PROVIDER_ID_BYTES: usize = 512;
/// Longest condition reason kept, in bytes.
pub const MAX_REASON_BYTES: usize = 256;
/// Longest message kept, in bytes (a provider's description too).
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Most entries of a list of conditions, addresses, failure domains or field errors.
pub const MAX_LIST_ENTRIES: usize = 256;
/// Most machines `list-machines` may answer.
pub const MAX_LISTED_MACHINES: usize = 100_000;
/// Largest config schema, in bytes.
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// Deepest nesting of arrays and objects in a config schema.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// An answer field broke the contract's limits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("answer field `{field}` {problem}")]
pub struct InvalidAnswer {
    /// Where in the answer, e.g. `machine-status.addresses[2].address`.
    pub field: String,
    /// What is wrong with it; never the value itself.
    pub problem: String,
}

/// Walks one answer, knowing where it is.
pub(crate) struct Checker<'a> {
    path: String,
    redactor: Option<&'a Redactor>,
}

impl<'a> Checker<'a> {
    pub(crate) fn new(root: &str, redactor: Option<&'a Redactor>) -> Self {
        Checker {
            path: root.to_owned(),
            redactor,
        }
    }

    fn invalid(&self, field: &str, problem: String) -> InvalidAnswer {
        InvalidAnswer {
            field: format!("{}{field}", self.path),
            problem,
        }
    }

    /// Runs `f` one level down, at `.field` (or `[i]` when `field` starts with `[`).
    fn at<T>(
        &mut self,
        field: impl std::fmt::Display,
        f: impl FnOnce(&mut Self) -> Result<T, InvalidAnswer>,
    ) -> Result<T, InvalidAnswer> {
        let len = self.path.len();
        let _ = write!(self.path, "{field}");
        let out = f(self);
        self.path.truncate(len);
        out
    }

    /// A name: at most `max` bytes, no control characters.
    fn name(&self, field: &str, value: &str, max: usize) -> Result<(), InvalidAnswer> {
        if value.len() > max {
            return Err(self.invalid(
                field,
                format!("is {} bytes long, at most {max}", value.len()),
            ));
        }
        if let Some((i, c)) = value.char_indices().find(|(_, c)| c.is_control()) {
            return Err(self.invalid(
                field,
                format!(
                    "holds the control character U+{:04X} at byte {i}",
                    u32::from(c)
                ),
            ));
        }
        Ok(())
    }

    /// Text for people: secrets redacted, control characters escaped, cut at `max` bytes.
    fn text(&self, value: &mut String, max: usize) {
        if let Some(redactor) = self.redactor {
            redactor.scrub_in_place(value);
        }
        let clean = value.len() <= max && !value.chars().any(char::is_control);
        if !clean {
            *value = printable(value, max);
        }
    }

    fn list(&self, field: &str, len: usize, max: usize) -> Result<(), InvalidAnswer> {
        if len > max {
            return Err(self.invalid(field, format!("has {len} entries, at most {max}")));
        }
        Ok(())
    }

    fn conditions(&mut self, conditions: &mut [types::Condition]) -> Result<(), InvalidAnswer> {
        self.list(".conditions", conditions.len(), MAX_LIST_ENTRIES)?;
        for (i, c) in conditions.iter_mut().enumerate() {
            self.at(format_args!(".conditions[{i}]"), |a| {
                a.name(".type", &c.type_, MAX_NAME_BYTES)?;
                a.text(&mut c.reason, MAX_REASON_BYTES);
                a.text(&mut c.message, MAX_MESSAGE_BYTES);
                Ok(())
            })?;
        }
        Ok(())
    }

    /// The Secrets a hosted plan asks for: names and SANs are matched and stored as they are,
    /// so each is a name; the lists are bounded.
    fn certificates(
        &mut self,
        secrets: &[control_plane::CertificateSecret],
    ) -> Result<(), InvalidAnswer> {
        self.list(".certificates", secrets.len(), MAX_LIST_ENTRIES)?;
        for (i, secret) in secrets.iter().enumerate() {
            self.at(format_args!(".certificates[{i}]"), |a| {
                a.name(".name", &secret.name, MAX_NAME_BYTES)?;
                a.list(".certificates", secret.certificates.len(), MAX_LIST_ENTRIES)?;
                for (j, c) in secret.certificates.iter().enumerate() {
                    a.at(format_args!(".certificates[{j}]"), |a| {
                        a.name(".key", &c.key, MAX_NAME_BYTES)?;
                        a.name(".common-name", &c.common_name, MAX_NAME_BYTES)?;
                        a.list(".organizations", c.organizations.len(), MAX_LIST_ENTRIES)?;
                        for (k, o) in c.organizations.iter().enumerate() {
                            a.name(&format!(".organizations[{k}]"), o, MAX_NAME_BYTES)?;
                        }
                        a.list(".sans", c.sans.len(), MAX_LIST_ENTRIES)?;
                        for (k, san) in c.sans.iter().enumerate() {
                            a.name(&format!(".sans[{k}]"), san, MAX_NAME_BYTES)?;
                        }
                        match &c.kubeconfig_server {
                            Some(url) => a.name(".kubeconfig-server", url, MAX_NAME_BYTES),
                            None => Ok(()),
                        }
                    })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    fn in_progress(&mut self, p: &mut types::InProgress) -> Result<(), InvalidAnswer> {
        self.text(&mut p.reason, MAX_REASON_BYTES);
        self.text(&mut p.message, MAX_MESSAGE_BYTES);
        self.conditions(&mut p.conditions)
    }

    fn endpoint(&self, field: &str, e: &types::Endpoint) -> Result<(), InvalidAnswer> {
        self.name(&format!("{field}.host"), &e.host, MAX_NAME_BYTES)
    }
}

/// `s` with control characters escaped (`\n`, `\r`, `\u{1b}`...), cut after at most `max`
/// bytes on a character boundary, with `…` where it was cut.
pub fn printable(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max) + 3);
    for c in s.chars() {
        let before = out.len();
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
        if out.len() > max {
            out.truncate(before);
            out.push('…');
            break;
        }
    }
    out
}

/// The WIT name of what `operation` answers, the root of its fields' paths.
pub(crate) fn answer_root(operation: &str) -> &'static str {
    match operation.rsplit('.').next().unwrap_or_default() {
        "reconcile-cluster" => "cluster-state",
        "delete-cluster" | "delete-machine" | "delete-control-plane" => "deletion",
        "reconcile-control-plane" => "reconcile-output",
        "reconcile-machine" => "machine-status",
        "list-machines" => "listed-machines",
        "cluster-secrets" => "secrets-state",
        "generate" => "bootstrap-data",
        "kubeconfig" => "kubeconfig",
        "current-join-token" | "renew-join-token" => "join-token",
        "plan" => "plan-output",
        "handle" => "hook-response",
        "describe" => "provider-metadata",
        "validate-config" => "validate-config",
        _ => "answer",
    }
}

/// An answer the host checks before it keeps it.
pub(crate) trait Answer {
    /// Checks names and list lengths, and makes text safe to keep, in place.
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer>;
}

impl Answer for types::Deletion {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        match self {
            types::Deletion::Deleted => Ok(()),
            types::Deletion::InProgress(p) => a.at(".in-progress", |a| a.in_progress(p)),
        }
    }
}

impl Answer for infrastructure::ClusterState {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        match self {
            infrastructure::ClusterState::Ready(r) => a.at(".ready", |a| {
                if let Some(e) = &r.control_plane_endpoint {
                    a.endpoint(".control-plane-endpoint", e)?;
                    if e.host.is_empty() {
                        return Err(a.invalid(
                            ".control-plane-endpoint.host",
                            "is empty: an infrastructure that makes no endpoint answers none"
                                .to_owned(),
                        ));
                    }
                }
                a.list(
                    ".failure-domains",
                    r.failure_domains.len(),
                    MAX_LIST_ENTRIES,
                )?;
                for (i, d) in r.failure_domains.iter().enumerate() {
                    a.name(
                        &format!(".failure-domains[{i}].name"),
                        &d.name,
                        MAX_NAME_BYTES,
                    )?;
                }
                a.conditions(&mut r.conditions)
            }),
            infrastructure::ClusterState::InProgress(p) => {
                a.at(".in-progress", |a| a.in_progress(p))
            }
        }
    }
}

impl Answer for infrastructure::MachineStatus {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        if let Some(id) = &self.provider_id {
            a.name(".provider-id", id, MAX_PROVIDER_ID_BYTES)?;
        }
        a.list(".addresses", self.addresses.len(), MAX_LIST_ENTRIES)?;
        for (i, address) in self.addresses.iter().enumerate() {
            a.name(
                &format!(".addresses[{i}].address"),
                &address.address,
                MAX_NAME_BYTES,
            )?;
        }
        if let Some(domain) = &self.failure_domain {
            a.name(".failure-domain", domain, MAX_NAME_BYTES)?;
        }
        a.text(&mut self.message, MAX_MESSAGE_BYTES);
        a.conditions(&mut self.conditions)
    }
}

impl Answer for Vec<infrastructure::ListedMachine> {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        a.list("", self.len(), MAX_LISTED_MACHINES)?;
        for (i, m) in self.iter().enumerate() {
            a.at(format_args!("[{i}]"), |a| {
                a.name(".idempotency-key", &m.idempotency_key, MAX_NAME_BYTES)?;
                a.name(".provider-id", &m.provider_id, MAX_PROVIDER_ID_BYTES)?;
                a.name(".machine-name", &m.machine_name, MAX_NAME_BYTES)
            })?;
        }
        Ok(())
    }
}

impl Answer for bootstrap::SecretsState {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        match self {
            bootstrap::SecretsState::Ready(items) => a.at(".ready", |a| {
                a.list("", items.len(), MAX_LIST_ENTRIES)?;
                for (i, item) in items.iter().enumerate() {
                    a.name(&format!("[{i}].name"), &item.name, MAX_NAME_BYTES)?;
                }
                Ok(())
            }),
            bootstrap::SecretsState::InProgress(p) => a.at(".in-progress", |a| a.in_progress(p)),
        }
    }
}

/// Bootstrap data is data, bounded by the answer's size.
impl Answer for bootstrap::BootstrapData {
    fn check(&mut self, _: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        Ok(())
    }
}

/// A token's parts go into a Secret's name and data in the workload cluster: they must have
/// the form Kubernetes accepts (`[a-z0-9]{6}` and `[a-z0-9]{16}`), and its groups the prefix
/// the API server requires of a bootstrap token's extra groups.
impl Answer for bootstrap::JoinToken {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        a.name(".item", &self.item, MAX_NAME_BYTES)?;
        let token_part = |field: &str, value: &str, len: usize| {
            let ok = value.len() == len
                && value
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
            if ok {
                Ok(())
            } else {
                Err(a.invalid(field, format!("is not {len} characters of [a-z0-9]")))
            }
        };
        token_part(".id", &self.id, 6)?;
        token_part(".secret", &self.secret, 16)?;
        a.list(".extra-groups", self.extra_groups.len(), MAX_LIST_ENTRIES)?;
        for (i, group) in self.extra_groups.iter().enumerate() {
            a.name(&format!(".extra-groups[{i}]"), group, MAX_NAME_BYTES)?;
            if !group.starts_with("system:bootstrappers:") {
                return Err(a.invalid(
                    &format!(".extra-groups[{i}]"),
                    "does not start with `system:bootstrappers:`".into(),
                ));
            }
        }
        Ok(())
    }
}

impl<T: Answer> Answer for Option<T> {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        match self {
            Some(t) => t.check(a),
            None => Ok(()),
        }
    }
}

/// Not an answer: what instantiating a component gives, which goes through the same
/// classification of how a call ended.
impl Answer for wasmtime::component::Instance {
    fn check(&mut self, _: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        Ok(())
    }
}

/// A kubeconfig is data, bounded by the answer's size.
impl Answer for String {
    fn check(&mut self, _: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        Ok(())
    }
}

impl Answer for control_plane::PlanOutput {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        a.at(".step", |a| match &mut self.step {
            control_plane::Step::None | control_plane::Step::ApplyManifests(_) => Ok(()),
            control_plane::Step::CreateMachine(m) => match &m.failure_domain {
                Some(d) => a.name(".create-machine.failure-domain", d, MAX_NAME_BYTES),
                None => Ok(()),
            },
            control_plane::Step::DeleteMachine(m) => {
                a.name(".delete-machine.name", &m.name, MAX_NAME_BYTES)?;
                a.name(".delete-machine.uid", &m.uid, MAX_NAME_BYTES)
            }
            control_plane::Step::RemoveEtcdMember(m) => {
                a.name(".remove-etcd-member.name", &m.name, MAX_NAME_BYTES)?;
                a.name(".remove-etcd-member.uid", &m.uid, MAX_NAME_BYTES)
            }
            control_plane::Step::Wait(p) => a.at(".wait", |a| a.in_progress(p)),
        })?;
        if let Some(e) = &self.endpoint {
            a.endpoint(".endpoint", e)?;
        }
        a.certificates(&self.certificates)?;
        a.conditions(&mut self.conditions)
    }
}

/// A service's control plane has no machines: only `none` and `wait` are steps it can take;
/// its access's endpoint and token are checked as an infrastructure's endpoint and a join
/// token are, its kubeconfig and CA are data bounded by the answer's size.
impl Answer for control_plane::ReconcileOutput {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        a.at(".plan", |a| {
            match &self.plan.step {
                control_plane::Step::None | control_plane::Step::Wait(_) => {}
                _ => {
                    return Err(a.invalid(
                        ".step",
                        "is a machine or manifest step; reconcile-control-plane answers none or wait"
                            .into(),
                    ));
                }
            }
            self.plan.check(a)
        })?;
        if let Some(access) = &mut self.access {
            a.at(".access", |a| {
                a.endpoint(".endpoint", &access.endpoint)?;
                if !access
                    .ca_certificate
                    .contains("-----BEGIN CERTIFICATE-----")
                {
                    return Err(a.invalid(".ca-certificate", "is not a PEM certificate".into()));
                }
                if access.admin_kubeconfig.trim().is_empty() {
                    return Err(a.invalid(".admin-kubeconfig", "is empty".into()));
                }
                match &mut access.join_token {
                    Some(token) => a.at(".join-token", |a| token.check(a)),
                    None => Ok(()),
                }
            })?;
        }
        Ok(())
    }
}

impl Answer for lifecycle_hooks::HookResponse {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        match self {
            lifecycle_hooks::HookResponse::Proceed => Ok(()),
            lifecycle_hooks::HookResponse::Hold(p) => a.at(".hold", |a| a.in_progress(p)),
        }
    }
}

impl Answer for metadata::ProviderMetadata {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        // The name has rules of its own, checked when the provider loads.
        a.name(".name", &self.name, MAX_NAME_BYTES)?;
        a.name(".version", &self.version, 64)?;
        a.text(&mut self.description, MAX_MESSAGE_BYTES);
        if self.config_schema.len() > MAX_SCHEMA_BYTES {
            return Err(a.invalid(
                ".config-schema",
                format!(
                    "is {} bytes long, at most {MAX_SCHEMA_BYTES}",
                    self.config_schema.len()
                ),
            ));
        }
        if let Some(depth) = too_deep(&self.config_schema, MAX_SCHEMA_DEPTH) {
            return Err(a.invalid(
                ".config-schema",
                format!("nests arrays and objects {depth} deep, at most {MAX_SCHEMA_DEPTH}"),
            ));
        }
        let grants = &self.requested_grants;
        a.list(
            ".requested-grants.http-hosts",
            grants.http_hosts.len(),
            MAX_LIST_ENTRIES,
        )?;
        for (i, host) in grants.http_hosts.iter().enumerate() {
            a.name(
                &format!(".requested-grants.http-hosts[{i}]"),
                host,
                MAX_NAME_BYTES,
            )?;
        }
        a.list(
            ".requested-grants.secrets",
            grants.secrets.len(),
            MAX_LIST_ENTRIES,
        )?;
        for (i, secret) in grants.secrets.iter().enumerate() {
            a.name(
                &format!(".requested-grants.secrets[{i}]"),
                secret,
                MAX_NAME_BYTES,
            )?;
        }
        Ok(())
    }
}

/// An answer whose text is kept as the provider wrote it (control characters and all), with
/// every other check made: for judging the provider's own answer (the conformance suite).
/// Never stored, and printed only through [`printable`] or `{:?}`.
pub struct AsWritten<T>(pub T);

impl Answer for AsWritten<metadata::ProviderMetadata> {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        let description = std::mem::take(&mut self.0.description);
        let checked = self.0.check(a);
        self.0.description = description;
        checked
    }
}

impl Answer for Result<(), Vec<metadata::FieldError>> {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        let Err(errors) = self else {
            return Ok(());
        };
        a.list(".errors", errors.len(), MAX_LIST_ENTRIES)?;
        for e in errors {
            // A path points into the config the host sent; shown to people, so text.
            a.text(&mut e.path, MAX_REASON_BYTES);
            a.text(&mut e.message, MAX_MESSAGE_BYTES);
        }
        Ok(())
    }
}

impl Answer for types::ProviderError {
    fn check(&mut self, a: &mut Checker<'_>) -> Result<(), InvalidAnswer> {
        a.text(&mut self.message, MAX_MESSAGE_BYTES);
        Ok(())
    }
}

/// How deep the first array or object nested past `max` is, or `None`; counts brackets
/// outside strings, without parsing.
fn too_deep(json: &str, max: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for b in json.bytes() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<A: Answer>(answer: &mut A) -> Result<(), InvalidAnswer> {
        answer.check(&mut Checker::new("answer", None))
    }

    fn condition(message: &str) -> types::Condition {
        types::Condition {
            type_: "Ready".into(),
            status: types::ConditionStatus::False,
            reason: "Waiting\u{1b}[2J".into(),
            message: message.into(),
        }
    }

    fn status() -> infrastructure::MachineStatus {
        infrastructure::MachineStatus {
            provider_id: Some("sim://i-1".into()),
            phase: infrastructure::MachinePhase::Running,
            addresses: vec![types::Address {
                kind: types::AddressKind::InternalIp,
                address: "10.0.0.1".into(),
            }],
            failure_domain: None,
            message: "running".into(),
            requeue_after_ms: None,
            conditions: vec![condition("fine")],
        }
    }

    #[test]
    fn text_is_escaped_and_cut_and_names_are_refused() {
        let mut s = status();
        s.message = format!("\r\u{1b}]0;forged\u{7}Ready=True\n{}", "x".repeat(1 << 20));
        s.conditions[0].message = "line one\nline two".into();
        check(&mut s).unwrap();
        assert!(
            s.message.len() <= MAX_MESSAGE_BYTES + 3,
            "{}",
            s.message.len()
        );
        assert!(
            s.message
                .starts_with("\\r\\u{1b}]0;forged\\u{7}Ready=True\\n")
        );
        assert!(s.message.ends_with('…'));
        assert!(!s.message.chars().any(char::is_control));
        assert_eq!(s.conditions[0].message, "line one\\nline two");
        assert_eq!(s.conditions[0].reason, "Waiting\\u{1b}[2J");

        let mut long_id = status();
        long_id.provider_id = Some("i".repeat(1 << 20));
        let e = check(&mut long_id).unwrap_err();
        assert_eq!(e.field, "answer.provider-id");
        assert_eq!(e.problem, "is 1048576 bytes long, at most 512");

        let mut forged = status();
        forged.addresses.push(types::Address {
            kind: types::AddressKind::ExternalIp,
            address: "1.2.3.4\nReady=True".into(),
        });
        let e = check(&mut forged).unwrap_err();
        assert_eq!(e.field, "answer.addresses[1].address");
        assert_eq!(e.problem, "holds the control character U+000A at byte 7");
        // The value itself is never in the error.
        assert!(!e.to_string().contains("Ready=True"), "{e}");
    }

    #[test]
    fn lists_are_bounded_and_named_with_their_index() {
        let mut s = status();
        s.conditions = (0..=MAX_LIST_ENTRIES).map(|_| condition("x")).collect();
        let e = check(&mut s).unwrap_err();
        assert_eq!(e.field, "answer.conditions");
        assert_eq!(e.problem, "has 257 entries, at most 256");

        let mut listed: Vec<infrastructure::ListedMachine> = (0..3)
            .map(|i| infrastructure::ListedMachine {
                idempotency_key: format!("uid/m-{i}"),
                provider_id: format!("sim://i-{i}"),
                machine_name: format!("m-{i}"),
                phase: infrastructure::MachinePhase::Running,
            })
            .collect();
        check(&mut listed).unwrap();
        listed[2].machine_name = "m\u{1b}[31m".into();
        let e = check(&mut listed).unwrap_err();
        assert_eq!(e.field, "answer[2].machine-name");
    }

    #[test]
    fn nested_answers_name_their_path() {
        let mut state =
            infrastructure::ClusterState::Ready(infrastructure::ClusterInfrastructure {
                control_plane_endpoint: Some(types::Endpoint {
                    host: "lb.sim".into(),
                    port: 6443,
                }),
                failure_domains: vec![infrastructure::FailureDomain {
                    name: "zone\ta".into(),
                    control_plane: true,
                }],
                conditions: vec![],
            });
        let e = check(&mut state).unwrap_err();
        assert_eq!(e.field, "answer.ready.failure-domains[0].name");

        // No endpoint is said with none, never with an empty host.
        let infra = |endpoint| {
            infrastructure::ClusterState::Ready(infrastructure::ClusterInfrastructure {
                control_plane_endpoint: endpoint,
                failure_domains: vec![],
                conditions: vec![],
            })
        };
        check(&mut infra(None)).unwrap();
        let empty = types::Endpoint {
            host: String::new(),
            port: 0,
        };
        let e = check(&mut infra(Some(empty))).unwrap_err();
        assert_eq!(e.field, "answer.ready.control-plane-endpoint.host");
        assert!(e.problem.contains("answers none"), "{}", e.problem);

        let mut hold = lifecycle_hooks::HookResponse::Hold(types::InProgress {
            reason: "R".repeat(10_000),
            message: "m".into(),
            requeue_after_ms: 10,
            conditions: vec![condition("\u{1b}[2J")],
        });
        check(&mut hold).unwrap();
        let lifecycle_hooks::HookResponse::Hold(p) = hold else {
            unreachable!()
        };
        assert!(p.reason.len() <= MAX_REASON_BYTES + 3);
        assert_eq!(p.conditions[0].message, "\\u{1b}[2J");
    }

    #[test]
    fn printable_cuts_on_a_character_boundary() {
        assert_eq!(printable("abc", 3), "abc");
        assert_eq!(printable("abcd", 3), "abc…");
        assert_eq!(printable("ééé", 4), "éé…");
        assert_eq!(printable("a\nb", 10), "a\\nb");
        assert_eq!(printable("a\nb", 2), "a…");
    }

    #[test]
    fn deep_schemas_are_found_without_parsing() {
        assert_eq!(too_deep(r#"{"a": [1, {"b": "[[[["}]}"#, 3), None);
        assert_eq!(too_deep(r#"{"a": [1, {"b": [[]]}]}"#, 3), Some(4));
        assert_eq!(too_deep(&"[".repeat(100_000), 64), Some(65));
        assert_eq!(too_deep(r#""\"[[[""#, 1), None);
    }
}
