//! Provider answers from fuzz bytes: mirror structs of the contract's answer types (which have
//! no `Arbitrary`), each turned into its generated type, with the secrets the call was granted.
//!
//! Strings are built of [`Piece`]s chosen to meet the host's answer checks at their edges:
//! terminal escape sequences (CSI, OSC, OSC 8 links), CR, LF, NUL, DEL, C1 controls, multi-byte
//! characters, the placeholder and the cut mark, the granted secrets' values, and runs of one
//! character up to lengths around the limits (64, 253, 256, 512, 4096) and far beyond, so that
//! cuts land inside multi-byte characters and escapes. Lists may be padded to one below, at or
//! one above their limit.
//!
//! Each answer kind has a function named after it (`cluster_state`, `machine_status`...)
//! that turns its mirror into the contract's type with a call's [`Ctx`].

use std::cell::Cell;
use std::collections::BTreeMap;

use arbitrary::Arbitrary;
use capw_runtime::{
    Grants, MAX_LIST_ENTRIES, MAX_LISTED_MACHINES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, Secret,
    bootstrap, control_plane, infrastructure, lifecycle_hooks, metadata, types,
};

/// Most bytes of text one answer is built with, so that an input stays quick to run.
pub const TEXT_BUDGET: usize = 1 << 20;

/// Pieces of text that meet the check's edges.
pub const PIECES: &[&str] = &[
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
pub const LENGTHS: &[usize] = &[
    0, 1, 5, 6, 7, 63, 64, 65, 66, 251, 252, 253, 254, 255, 256, 257, 258, 259, 510, 511, 512, 513,
    514, 4093, 4094, 4095, 4096, 4097, 4098, 4099, 4100, 10_000, 70_000,
];

/// Characters of 1 to 4 bytes, and controls, to pad with.
pub const FILLERS: &[char] = &['a', 'é', '€', '😀', '\n', '\u{1b}', ' ', '\u{85}', '…'];

/// One piece of a string.
#[derive(Arbitrary, Debug)]
pub enum Piece {
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
pub struct Text(Vec<Piece>);

/// What strings are built with: the granted secrets' values and what is left of the budget.
pub struct Ctx<'a> {
    secrets: &'a [Vec<u8>],
    budget: Cell<usize>,
}

impl Ctx<'_> {
    /// The string `text` describes.
    pub fn s(&self, text: &Text) -> String {
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

    pub fn opt(&self, text: &Option<Text>) -> Option<String> {
        text.as_ref().map(|t| self.s(t))
    }

    /// `many`'s entries, then, when it says so, `filler`s up to one below, at or one above
    /// `max` entries.
    pub fn list<M, G>(
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
pub struct Many<T> {
    items: Vec<T>,
    pad_around_limit: Option<u8>,
}

#[derive(Arbitrary, Debug)]
pub struct Condition {
    type_: Text,
    reason: Text,
    message: Text,
}

#[derive(Arbitrary, Debug)]
pub struct InProgress {
    reason: Text,
    message: Text,
    requeue_after_ms: u32,
    conditions: Many<Condition>,
}

#[derive(Arbitrary, Debug)]
pub struct Endpoint {
    host: Text,
    port: u16,
}

#[derive(Arbitrary, Debug)]
pub enum ClusterState {
    Ready {
        endpoint: Endpoint,
        failure_domains: Many<Text>,
        conditions: Many<Condition>,
    },
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
pub struct MachineStatus {
    provider_id: Option<Text>,
    addresses: Many<Text>,
    failure_domain: Option<Text>,
    message: Text,
    conditions: Many<Condition>,
}

#[derive(Arbitrary, Debug)]
pub struct ListedMachine {
    idempotency_key: Text,
    provider_id: Text,
    machine_name: Text,
}

#[derive(Arbitrary, Debug)]
pub enum Deletion {
    Deleted,
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
pub enum SecretsState {
    Ready(Many<Text>),
    InProgress(InProgress),
}

#[derive(Arbitrary, Debug)]
pub enum Step {
    None,
    CreateMachine(Option<Text>),
    DeleteMachine { name: Text, uid: Text },
    ApplyManifests(Vec<Text>),
    Wait(InProgress),
}

#[derive(Arbitrary, Debug)]
pub struct PlanOutput {
    step: Step,
    endpoint: Option<Endpoint>,
    conditions: Many<Condition>,
    certificates: Many<CertificateSecret>,
    /// The shared datastore's name and the Secret to write (contract 0.3).
    shared_datastore: Option<(Text, Text)>,
}

/// A Secret a hosted plan asks the host to mint (contract 0.3).
#[derive(Arbitrary, Debug)]
pub struct CertificateSecret {
    name: Text,
    certificates: Many<CertificateRequest>,
    /// Each byte picks one of the CA materials.
    materials: Vec<u8>,
}

#[derive(Arbitrary, Debug)]
pub struct CertificateRequest {
    key: Text,
    /// Picks one of the CAs.
    authority: u8,
    /// Picks one of the usages.
    usage: u8,
    common_name: Text,
    organizations: Many<Text>,
    sans: Many<Text>,
    kubeconfig_server: Option<Text>,
}

#[derive(Arbitrary, Debug)]
pub enum HookResponse {
    Proceed,
    Hold(InProgress),
}

/// A config schema's text: any text, or one at the edge of the size or depth limits.
#[derive(Arbitrary, Debug)]
pub enum Schema {
    Text(Text),
    /// Arrays nested one below, at or one above [`MAX_SCHEMA_DEPTH`].
    Deep(u8),
    /// A string one below, at or one above [`MAX_SCHEMA_BYTES`].
    Large(u8),
}

#[derive(Arbitrary, Debug)]
pub struct Describe {
    name: Text,
    version: Text,
    description: Text,
    config_schema: Schema,
    http_hosts: Many<Text>,
    secrets: Many<Text>,
}

#[derive(Arbitrary, Debug)]
pub struct FieldError {
    path: Text,
    message: Text,
}

/// One answer of any type the host checks.
#[derive(Arbitrary, Debug)]
pub enum Answer {
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
pub enum SecretValue {
    Bytes(Vec<u8>),
    Text(Text),
}

#[derive(Arbitrary, Debug)]
pub struct Input {
    /// The secrets the call was granted (`None`: granted, but not there).
    pub secrets: Vec<Option<SecretValue>>,
    pub answer: Answer,
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

pub fn cluster_state(c: &Ctx<'_>, m: &ClusterState) -> infrastructure::ClusterState {
    match m {
        ClusterState::Ready {
            endpoint: e,
            failure_domains,
            conditions: cs,
        } => infrastructure::ClusterState::Ready(infrastructure::ClusterInfrastructure {
            // An empty host is how an answer says none before 0.3; from 0.3 on it is none.
            control_plane_endpoint: Some(endpoint(c, e)).filter(|e| !e.host.is_empty()),
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

pub fn machine_status(c: &Ctx<'_>, m: &MachineStatus) -> infrastructure::MachineStatus {
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

pub fn listed_machines(c: &Ctx<'_>, m: &Many<ListedMachine>) -> Vec<infrastructure::ListedMachine> {
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

pub fn is_listed_filler(m: &infrastructure::ListedMachine) -> bool {
    [&m.idempotency_key, &m.provider_id, &m.machine_name] == LISTED_FILLER
}

pub fn deletion(c: &Ctx<'_>, m: &Deletion) -> types::Deletion {
    match m {
        Deletion::Deleted => types::Deletion::Deleted,
        Deletion::InProgress(p) => types::Deletion::InProgress(in_progress(c, p)),
    }
}

pub fn secrets_state(c: &Ctx<'_>, m: &SecretsState) -> bootstrap::SecretsState {
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

pub fn bootstrap_data(_: &Ctx<'_>, data: &[u8]) -> bootstrap::BootstrapData {
    bootstrap::BootstrapData {
        format: bootstrap::BootstrapFormat::Raw,
        data: data.to_vec(),
    }
}

pub fn plan_output(c: &Ctx<'_>, m: &PlanOutput) -> control_plane::PlanOutput {
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
        ready: None,
        version: None,
        failures_tolerated: None,
        certificates: c.list(
            &m.certificates,
            MAX_LIST_ENTRIES,
            |s| certificate_secret(c, s),
            certificate_secret_filler,
        ),
        shared_datastore: m.shared_datastore.as_ref().map(|(name, secret)| {
            control_plane::SharedDatastore {
                name: c.s(name),
                secret: c.s(secret),
            }
        }),
    }
}

const AUTHORITIES: [control_plane::CertificateAuthority; 3] = [
    control_plane::CertificateAuthority::Cluster,
    control_plane::CertificateAuthority::FrontProxy,
    control_plane::CertificateAuthority::Etcd,
];

const USAGES: [control_plane::CertificateUsage; 3] = [
    control_plane::CertificateUsage::Server,
    control_plane::CertificateUsage::Client,
    control_plane::CertificateUsage::Peer,
];

const MATERIALS: [control_plane::SecretMaterial; 5] = [
    control_plane::SecretMaterial::ClusterCaCertificate,
    control_plane::SecretMaterial::ClusterCa,
    control_plane::SecretMaterial::FrontProxyCaCertificate,
    control_plane::SecretMaterial::EtcdCaCertificate,
    control_plane::SecretMaterial::ServiceAccountKeys,
];

fn certificate_request(c: &Ctx<'_>, m: &CertificateRequest) -> control_plane::CertificateRequest {
    control_plane::CertificateRequest {
        key: c.s(&m.key),
        authority: AUTHORITIES[usize::from(m.authority) % AUTHORITIES.len()],
        usage: USAGES[usize::from(m.usage) % USAGES.len()],
        common_name: c.s(&m.common_name),
        organizations: names(c, &m.organizations, MAX_LIST_ENTRIES),
        sans: names(c, &m.sans, MAX_LIST_ENTRIES),
        kubeconfig_server: c.opt(&m.kubeconfig_server),
    }
}

/// What a list of certificates is padded with: a valid request.
fn certificate_filler() -> control_plane::CertificateRequest {
    control_plane::CertificateRequest {
        key: "apiserver".into(),
        authority: control_plane::CertificateAuthority::Cluster,
        usage: control_plane::CertificateUsage::Server,
        common_name: "kube-apiserver".into(),
        organizations: Vec::new(),
        sans: vec!["10.96.0.1".into()],
        kubeconfig_server: None,
    }
}

fn certificate_secret(c: &Ctx<'_>, m: &CertificateSecret) -> control_plane::CertificateSecret {
    control_plane::CertificateSecret {
        name: c.s(&m.name),
        certificates: c.list(
            &m.certificates,
            MAX_LIST_ENTRIES,
            |r| certificate_request(c, r),
            certificate_filler,
        ),
        materials: (m.materials.iter())
            .map(|i| MATERIALS[usize::from(*i) % MATERIALS.len()])
            .collect(),
    }
}

/// What a list of certificate Secrets is padded with: a valid Secret without certificates.
fn certificate_secret_filler() -> control_plane::CertificateSecret {
    control_plane::CertificateSecret {
        name: "c1-certs".into(),
        certificates: Vec::new(),
        materials: vec![control_plane::SecretMaterial::ClusterCaCertificate],
    }
}

pub fn hook_response(c: &Ctx<'_>, m: &HookResponse) -> lifecycle_hooks::HookResponse {
    match m {
        HookResponse::Proceed => lifecycle_hooks::HookResponse::Proceed,
        HookResponse::Hold(p) => lifecycle_hooks::HookResponse::Hold(in_progress(c, p)),
    }
}

pub fn provider_error(c: &Ctx<'_>, m: &Text) -> types::ProviderError {
    types::ProviderError {
        code: types::ErrorCode::Internal,
        message: c.s(m),
        retryable: false,
        retry_after_ms: None,
    }
}

pub fn describe(c: &Ctx<'_>, m: &Describe) -> metadata::ProviderMetadata {
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
            chains_upgrades: false,
        },
        requested_grants: metadata::RequestedGrants {
            http_hosts: names(c, &m.http_hosts, MAX_LIST_ENTRIES),
            secrets: names(c, &m.secrets, MAX_LIST_ENTRIES),
        },
    }
}

pub fn config_verdict(
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

/// The secrets granted to a call (at most four), and their values.
pub struct Call {
    /// What the call was granted: the secrets only.
    pub grants: Grants,
    /// The values granted, as the call would read them.
    pub values: Vec<Vec<u8>>,
}

impl Call {
    /// The call `input` says.
    pub fn new(input: &Input) -> Self {
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

    /// What the answer's strings are built with.
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            secrets: &self.values,
            budget: Cell::new(TEXT_BUDGET),
        }
    }
}
