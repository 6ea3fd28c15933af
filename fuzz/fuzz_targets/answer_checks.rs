//! The runtime's check of every provider answer before the host keeps any of it
//! (`host/runtime/src/answer.rs`, reached through `capw_runtime::fuzzing`): names refused when
//! too long or holding a control character, list lengths bounded, text redacted of the call's
//! secrets, escaped and cut. One answer of any type an extension point returns, a provider
//! error, a `metadata.describe` answer or a `validate-config` verdict, with the secrets the
//! call was granted.
//!
//! The generated contract types have no `Arbitrary`, so the fuzzer fills mirror structs here
//! and each is turned into its contract type. Strings are built from pieces chosen to meet
//! the check's edges: terminal escape sequences (CSI, OSC, OSC 8 links), CR, LF, NUL, DEL, C1
//! controls, multi-byte characters, the placeholder and the cut mark, the granted secrets'
//! values, and runs of a character up to lengths around the limits (64, 253, 256, 512, 4096)
//! and far beyond, so that cuts land inside multi-byte characters and escapes.
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

#![no_main]

use std::cell::Cell;
use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use capw_fuzz::secrets;
use capw_runtime::{
    Grants, InvalidAnswer, MAX_LIST_ENTRIES, MAX_LISTED_MACHINES, MAX_MESSAGE_BYTES,
    MAX_NAME_BYTES, MAX_PROVIDER_ID_BYTES, MAX_REASON_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH,
    Secret, bootstrap, control_plane, fuzzing, infrastructure, lifecycle_hooks, metadata, types,
};
use libfuzzer_sys::fuzz_target;

/// Longest version a provider may describe itself with (`answer.rs`).
const MAX_VERSION_BYTES: usize = 64;

/// Most bytes of text one answer is built with, so that an input stays quick to run.
const TEXT_BUDGET: usize = 1 << 20;

/// Pieces of text that meet the check's edges.
const PIECES: &[&str] = &[
    "\u{1b}[2J",
    "\u{1b}[31m",
    "\u{1b}]0;forged\u{7}",
    "\u{1b}]8;;https://evil.example/\u{1b}\\link\u{1b}]8;;\u{1b}\\",
    "\r",
    "\n",
    "\r\n",
    "\t",
    "\0",
    "\u{7f}",
    "\u{85}",
    "\u{9b}31m",
    "Ready=True",
    "é",
    "€",
    "😀",
    "\u{202e}",
    "[redacted]",
    "redacted",
    "…",
    "\\n",
    "\\u{1b}",
    " ",
    "sim://i-1",
    "10.0.0.1",
    "zone-a",
    "s3cr3t-token",
];

/// Lengths a run of one character is padded to: around every limit, and far beyond.
const LENGTHS: &[usize] = &[
    0, 1, 5, 6, 7, 63, 64, 65, 66, 251, 252, 253, 254, 255, 256, 257, 258, 259, 510, 511, 512, 513,
    514, 4093, 4094, 4095, 4096, 4097, 4098, 4099, 4100, 10_000, 70_000,
];

/// Characters of 1 to 4 bytes, and controls, to pad with.
const FILLERS: &[char] = &['a', 'é', '€', '😀', '\n', '\u{1b}', ' ', '\u{85}', '…'];

/// One piece of a string.
#[derive(Arbitrary, Debug)]
enum Piece {
    /// One of [`PIECES`].
    Known(u8),
    Any(String),
    /// The value of a granted secret, by index.
    Secret(u8),
    /// A [`FILLERS`] character repeated while the string stays within a [`LENGTHS`] length.
    PadTo {
        length: u8,
        filler: u8,
    },
}

/// A string the fuzzer builds of [`Piece`]s.
#[derive(Arbitrary, Debug)]
struct Text(Vec<Piece>);

/// What strings are built with: the granted secrets' values and what is left of the budget.
struct Ctx<'a> {
    secrets: &'a [Vec<u8>],
    budget: Cell<usize>,
}

impl Ctx<'_> {
    fn s(&self, text: &Text) -> String {
        let mut out = String::new();
        for piece in &text.0 {
            match piece {
                Piece::Known(i) => out.push_str(PIECES[usize::from(*i) % PIECES.len()]),
                Piece::Any(s) => out.push_str(s),
                Piece::Secret(i) => {
                    if let Some(v) = self
                        .secrets
                        .get(usize::from(*i) % self.secrets.len().max(1))
                    {
                        out.push_str(&String::from_utf8_lossy(v));
                    }
                }
                Piece::PadTo { length, filler } => {
                    let length = LENGTHS[usize::from(*length) % LENGTHS.len()];
                    let filler = FILLERS[usize::from(*filler) % FILLERS.len()];
                    let room = length.saturating_sub(out.len()).min(self.budget.get());
                    let n = room / filler.len_utf8();
                    self.budget.set(self.budget.get() - n * filler.len_utf8());
                    out.extend(std::iter::repeat_n(filler, n));
                }
            }
        }
        out
    }

    fn opt(&self, text: &Option<Text>) -> Option<String> {
        text.as_ref().map(|t| self.s(t))
    }

    /// `many`'s entries, then, when it says so, `filler`s up to one below, at or one above
    /// `max` entries.
    fn list<M, G>(
        &self,
        many: &Many<M>,
        max: usize,
        convert: impl Fn(&M) -> G,
        filler: impl Fn() -> G,
    ) -> Vec<G> {
        let mut out: Vec<G> = many.items.iter().map(convert).collect();
        if let Some(pad) = many.pad_around_limit {
            let len = max - 1 + usize::from(pad % 3);
            out.extend(std::iter::repeat_with(filler).take(len.saturating_sub(out.len())));
        }
        out
    }
}

/// A list, maybe padded to around its limit.
#[derive(Arbitrary, Debug)]
struct Many<T> {
    items: Vec<T>,
    pad_around_limit: Option<u8>,
}

#[derive(Arbitrary, Debug)]
struct Condition {
    type_: Text,
    reason: Text,
    message: Text,
}

#[derive(Arbitrary, Debug)]
struct InProgress {
    reason: Text,
    message: Text,
    requeue_after_ms: u32,
    conditions: Many<Condition>,
}

#[derive(Arbitrary, Debug)]
struct Endpoint {
    host: Text,
    port: u16,
}

#[derive(Arbitrary, Debug)]
enum ClusterState {
    Ready {
        endpoint: Endpoint,
        failure_domains: Many<Text>,
        conditions: Many<Condition>,
    },
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
struct MachineStatus {
    provider_id: Option<Text>,
    addresses: Many<Text>,
    failure_domain: Option<Text>,
    message: Text,
    conditions: Many<Condition>,
}

#[derive(Arbitrary, Debug)]
struct ListedMachine {
    idempotency_key: Text,
    provider_id: Text,
    machine_name: Text,
}

#[derive(Arbitrary, Debug)]
enum Deletion {
    Deleted,
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
enum SecretsState {
    Ready(Many<Text>),
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
enum Step {
    None,
    CreateMachine(Option<Text>),
    DeleteMachine { name: Text, uid: Text },
    ApplyManifests(Vec<Text>),
    Wait(InProgress),
}

#[derive(Arbitrary, Debug)]
struct PlanOutput {
    step: Step,
    endpoint: Option<Endpoint>,
    conditions: Many<Condition>,
}

#[derive(Arbitrary, Debug)]
enum HookResponse {
    Proceed,
    Hold(InProgress),
}

/// A config schema's text: any text, or one at the edge of the size or depth limits.
#[derive(Arbitrary, Debug)]
enum Schema {
    Text(Text),
    /// Arrays nested one below, at or one above [`MAX_SCHEMA_DEPTH`].
    Deep(u8),
    /// A string one below, at or one above [`MAX_SCHEMA_BYTES`].
    Large(u8),
}

#[derive(Arbitrary, Debug)]
struct Describe {
    name: Text,
    version: Text,
    description: Text,
    config_schema: Schema,
    http_hosts: Many<Text>,
    secrets: Many<Text>,
}

#[derive(Arbitrary, Debug)]
struct FieldError {
    path: Text,
    message: Text,
}

/// One answer of any type the host checks.
#[derive(Arbitrary, Debug)]
enum Answer {
    ClusterState(ClusterState),
    MachineStatus(MachineStatus),
    ListedMachines(Many<ListedMachine>),
    Deletion(Deletion),
    SecretsState(SecretsState),
    BootstrapData(Vec<u8>),
    PlanOutput(PlanOutput),
    HookResponse(HookResponse),
    ProviderError(Text),
    Describe(Describe),
    ConfigVerdict(Option<Many<FieldError>>),
}

/// A granted secret's value: any bytes, or text built of pieces (without secrets).
#[derive(Arbitrary, Debug)]
enum SecretValue {
    Bytes(Vec<u8>),
    Text(Text),
}

#[derive(Arbitrary, Debug)]
struct Input {
    /// The secrets the call was granted (`None`: granted, but not there).
    secrets: Vec<Option<SecretValue>>,
    answer: Answer,
}

fn condition(c: &Ctx<'_>, m: &Condition) -> types::Condition {
    types::Condition {
        type_: c.s(&m.type_),
        status: types::ConditionStatus::Unknown,
        reason: c.s(&m.reason),
        message: c.s(&m.message),
    }
}

fn ready_condition() -> types::Condition {
    types::Condition {
        type_: "Ready".into(),
        status: types::ConditionStatus::True,
        reason: "Ready".into(),
        message: String::new(),
    }
}

fn conditions(c: &Ctx<'_>, m: &Many<Condition>) -> Vec<types::Condition> {
    c.list(m, MAX_LIST_ENTRIES, |m| condition(c, m), ready_condition)
}

fn names(c: &Ctx<'_>, m: &Many<Text>, max: usize) -> Vec<String> {
    c.list(m, max, |t| c.s(t), || "zone-a".to_owned())
}

fn in_progress(c: &Ctx<'_>, m: &InProgress) -> types::InProgress {
    types::InProgress {
        reason: c.s(&m.reason),
        message: c.s(&m.message),
        requeue_after_ms: m.requeue_after_ms,
        conditions: conditions(c, &m.conditions),
    }
}

fn endpoint(c: &Ctx<'_>, m: &Endpoint) -> types::Endpoint {
    types::Endpoint {
        host: c.s(&m.host),
        port: m.port,
    }
}

fn cluster_state(c: &Ctx<'_>, m: &ClusterState) -> infrastructure::ClusterState {
    match m {
        ClusterState::Ready {
            endpoint: e,
            failure_domains,
            conditions: cs,
        } => infrastructure::ClusterState::Ready(infrastructure::ClusterInfrastructure {
            control_plane_endpoint: endpoint(c, e),
            failure_domains: names(c, failure_domains, MAX_LIST_ENTRIES)
                .into_iter()
                .map(|name| infrastructure::FailureDomain {
                    name,
                    control_plane: true,
                })
                .collect(),
            conditions: conditions(c, cs),
        }),
        ClusterState::InProgress(p) => infrastructure::ClusterState::InProgress(in_progress(c, p)),
    }
}

fn machine_status(c: &Ctx<'_>, m: &MachineStatus) -> infrastructure::MachineStatus {
    infrastructure::MachineStatus {
        provider_id: c.opt(&m.provider_id),
        phase: infrastructure::MachinePhase::Running,
        addresses: names(c, &m.addresses, MAX_LIST_ENTRIES)
            .into_iter()
            .map(|address| types::Address {
                kind: types::AddressKind::InternalIp,
                address,
            })
            .collect(),
        failure_domain: c.opt(&m.failure_domain),
        message: c.s(&m.message),
        requeue_after_ms: None,
        conditions: conditions(c, &m.conditions),
    }
}

fn listed_machines(c: &Ctx<'_>, m: &Many<ListedMachine>) -> Vec<infrastructure::ListedMachine> {
    c.list(
        m,
        MAX_LISTED_MACHINES,
        |m| infrastructure::ListedMachine {
            idempotency_key: c.s(&m.idempotency_key),
            provider_id: c.s(&m.provider_id),
            machine_name: c.s(&m.machine_name),
            phase: infrastructure::MachinePhase::Running,
        },
        listed_filler,
    )
}

/// What a list of listed machines is padded with: a valid entry, which walking skips so that
/// a list of 100,000 stays quick to judge.
fn listed_filler() -> infrastructure::ListedMachine {
    let [idempotency_key, provider_id, machine_name] = LISTED_FILLER.map(String::from);
    infrastructure::ListedMachine {
        idempotency_key,
        provider_id,
        machine_name,
        phase: infrastructure::MachinePhase::Running,
    }
}

/// The names of [`listed_filler`].
const LISTED_FILLER: [&str; 3] = ["uid-1/m-1", "sim://i-1", "m-1"];

fn is_listed_filler(m: &infrastructure::ListedMachine) -> bool {
    [&m.idempotency_key, &m.provider_id, &m.machine_name] == LISTED_FILLER
}

fn deletion(c: &Ctx<'_>, m: &Deletion) -> types::Deletion {
    match m {
        Deletion::Deleted => types::Deletion::Deleted,
        Deletion::InProgress(p) => types::Deletion::InProgress(in_progress(c, p)),
    }
}

fn secrets_state(c: &Ctx<'_>, m: &SecretsState) -> bootstrap::SecretsState {
    match m {
        SecretsState::Ready(items) => bootstrap::SecretsState::Ready(
            names(c, items, MAX_LIST_ENTRIES)
                .into_iter()
                .map(|name| bootstrap::SecretItem {
                    name,
                    data: b"data".to_vec(),
                })
                .collect(),
        ),
        SecretsState::InProgress(p) => bootstrap::SecretsState::InProgress(in_progress(c, p)),
    }
}

fn bootstrap_data(_: &Ctx<'_>, data: &[u8]) -> bootstrap::BootstrapData {
    bootstrap::BootstrapData {
        format: bootstrap::BootstrapFormat::Raw,
        data: data.to_vec(),
    }
}

fn plan_output(c: &Ctx<'_>, m: &PlanOutput) -> control_plane::PlanOutput {
    let version = types::KubernetesVersion {
        major: 1,
        minor: 34,
        patch: 4,
    };
    control_plane::PlanOutput {
        step: match &m.step {
            Step::None => control_plane::Step::None,
            Step::CreateMachine(domain) => {
                control_plane::Step::CreateMachine(control_plane::MachineToCreate {
                    init: false,
                    version,
                    failure_domain: c.opt(domain),
                })
            }
            Step::DeleteMachine { name, uid } => {
                control_plane::Step::DeleteMachine(types::MachineRef {
                    name: c.s(name),
                    uid: c.s(uid),
                })
            }
            Step::ApplyManifests(manifests) => {
                control_plane::Step::ApplyManifests(manifests.iter().map(|t| c.s(t)).collect())
            }
            Step::Wait(p) => control_plane::Step::Wait(in_progress(c, p)),
        },
        initialized: true,
        replicas: 3,
        ready_replicas: 1,
        up_to_date_replicas: 1,
        endpoint: m.endpoint.as_ref().map(|e| endpoint(c, e)),
        conditions: conditions(c, &m.conditions),
    }
}

fn hook_response(c: &Ctx<'_>, m: &HookResponse) -> lifecycle_hooks::HookResponse {
    match m {
        HookResponse::Proceed => lifecycle_hooks::HookResponse::Proceed,
        HookResponse::Hold(p) => lifecycle_hooks::HookResponse::Hold(in_progress(c, p)),
    }
}

fn provider_error(c: &Ctx<'_>, m: &Text) -> types::ProviderError {
    types::ProviderError {
        code: types::ErrorCode::Internal,
        message: c.s(m),
        retryable: false,
        retry_after_ms: None,
    }
}

fn describe(c: &Ctx<'_>, m: &Describe) -> metadata::ProviderMetadata {
    metadata::ProviderMetadata {
        name: c.s(&m.name),
        version: c.s(&m.version),
        description: c.s(&m.description),
        extension_points: vec![metadata::ExtensionPoint::Infrastructure],
        config_schema: match &m.config_schema {
            Schema::Text(t) => c.s(t),
            Schema::Deep(n) => {
                let depth = MAX_SCHEMA_DEPTH - 1 + usize::from(n % 3);
                format!("{}{}", "[".repeat(depth), "]".repeat(depth))
            }
            Schema::Large(n) => {
                let len = MAX_SCHEMA_BYTES - 1 + usize::from(n % 3);
                format!("\"{}\"", "a".repeat(len - 2))
            }
        },
        capabilities: metadata::Capabilities {
            control_plane_shape: None,
            control_plane_scalable: false,
            version_upgrades: false,
        },
        requested_grants: metadata::RequestedGrants {
            http_hosts: names(c, &m.http_hosts, MAX_LIST_ENTRIES),
            secrets: names(c, &m.secrets, MAX_LIST_ENTRIES),
        },
    }
}

fn config_verdict(
    c: &Ctx<'_>,
    m: &Option<Many<FieldError>>,
) -> Result<(), Vec<metadata::FieldError>> {
    match m {
        None => Ok(()),
        Some(errors) => Err(c.list(
            errors,
            MAX_LIST_ENTRIES,
            |e| metadata::FieldError {
                path: c.s(&e.path),
                message: c.s(&e.message),
            },
            || metadata::FieldError {
                path: "/size".into(),
                message: "too large".into(),
            },
        )),
    }
}

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
                f.name(
                    format!("{at}.control-plane-endpoint.host"),
                    &r.control_plane_endpoint.host,
                    MAX_NAME_BYTES,
                );
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
            control_plane::Step::Wait(p) => f.in_progress(&format!("{step}.wait"), p),
        }
        if let Some(e) = &self.endpoint {
            f.name(format!("{root}.endpoint.host"), &e.host, MAX_NAME_BYTES);
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

/// The secrets of a call, and the values of them the host scrubs.
struct Call {
    grants: Grants,
    values: Vec<Vec<u8>>,
}

impl Call {
    fn new(input: &Input) -> Self {
        let empty = Ctx {
            secrets: &[],
            budget: Cell::new(TEXT_BUDGET),
        };
        let secrets: BTreeMap<String, Option<Secret>> = (input.secrets.iter().take(4).enumerate())
            .map(|(i, value)| {
                let value = value.as_ref().map(|v| match v {
                    SecretValue::Bytes(b) => b.clone(),
                    SecretValue::Text(t) => empty.s(t).into_bytes(),
                });
                (format!("s{i}"), value.map(Secret::new))
            })
            .collect();
        let values = (secrets.values().flatten())
            .map(|s| s.expose().to_vec())
            .collect();
        Call {
            grants: Grants {
                http: Vec::new(),
                secrets,
                limits: Default::default(),
            },
            values,
        }
    }

    fn ctx(&self) -> Ctx<'_> {
        Ctx {
            secrets: &self.values,
            budget: Cell::new(TEXT_BUDGET),
        }
    }
}

type Check<A> = fn(&mut A, &Grants) -> Result<(), InvalidAnswer>;

/// Each kind of answer: the root the host names its fields under, how its contract value is
/// built, and the check of `capw_runtime::fuzzing` it goes through.
macro_rules! judge {
    ($call:expr, $answer:expr, $($kind:ident => $root:literal, $build:ident, $check:ident;)*) => {
        match $answer {
            $(Answer::$kind(m) => run($call, $root, |c| $build(c, m), fuzzing::$check),)*
        }
    };
}

fuzz_target!(|input: Input| {
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
});

/// Checks one answer (built twice more, to see the check deterministic) and judges what the
/// host kept or why it refused it.
fn run<A: Walk>(call: &Call, root: &str, build: impl Fn(&Ctx<'_>) -> A, check: Check<A>) {
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
