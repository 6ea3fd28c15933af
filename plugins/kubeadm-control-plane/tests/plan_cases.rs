//! The plan cases of `plan-cases.json` against [`plan::plan`]: the planner answers each as
//! the file says. The same file drives the ports of this planner to other languages
//! (`plugins/other-languages/py-control-plane`), so they and this crate answer alike.

use std::path::Path;

use capw_kubeadm_control_plane::KubeadmControlPlaneConfig;
use capw_kubeadm_control_plane::plan;
use capw_sdk::control_plane::{EtcdMembership, Member, Plan, PlanInput, Step};
use capw_sdk::types::{ConditionStatus, Endpoint, KubernetesVersion, MachineRef};
use serde_json::{Map, Value, json};

/// The file, beside this crate's `Cargo.toml`.
fn cases_file() -> (Value, Vec<Value>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("plan-cases.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let mut document: Value = match serde_json::from_str(&text) {
        Ok(document) => document,
        Err(e) => panic!("{}: {e}", path.display()),
    };
    let cases = match document["cases"].take() {
        Value::Array(cases) => cases,
        other => panic!("`cases` is not a list: {other}"),
    };
    (document["defaults"].take(), cases)
}

fn field<'a>(object: &'a Value, name: &str) -> &'a Value {
    match object.get(name) {
        Some(value) => value,
        None => panic!("no `{name}` in {object}"),
    }
}

fn text(value: &Value) -> &str {
    match value.as_str() {
        Some(s) => s,
        None => panic!("not a string: {value}"),
    }
}

fn number(value: &Value) -> u64 {
    match value.as_u64() {
        Some(n) => n,
        None => panic!("not a count: {value}"),
    }
}

fn count(value: &Value) -> u32 {
    match u32::try_from(number(value)) {
        Ok(n) => n,
        Err(e) => panic!("{value}: {e}"),
    }
}

/// `vMAJOR.MINOR.PATCH`.
fn version(value: &Value) -> KubernetesVersion {
    let parts: Vec<u32> = (text(value).trim_start_matches('v').split('.'))
        .map(|p| match p.parse() {
            Ok(n) => n,
            Err(e) => panic!("version {value}: {e}"),
        })
        .collect();
    match parts[..] {
        [major, minor, patch] => KubernetesVersion {
            major,
            minor,
            patch,
        },
        _ => panic!("not a version: {value}"),
    }
}

fn endpoint(value: &Value) -> Option<Endpoint> {
    (!value.is_null()).then(|| Endpoint {
        host: text(field(value, "host")).to_owned(),
        port: match u16::try_from(number(field(value, "port"))) {
            Ok(port) => port,
            Err(e) => panic!("{value}: {e}"),
        },
    })
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| items.iter().map(|s| text(s).to_owned()).collect())
        .unwrap_or_default()
}

fn member(value: &Value) -> Member {
    let name = text(field(value, "name"));
    Member {
        machine: MachineRef {
            name: name.to_owned(),
            uid: format!("uid-{name}"),
        },
        version: version(field(value, "version")),
        failure_domain: value
            .get("failureDomain")
            .and_then(Value::as_str)
            .map(String::from),
        ready: value.get("ready").and_then(Value::as_bool).unwrap_or(true),
        created_at: number(field(value, "createdAt")),
        deleting: value
            .get("deleting")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        etcd: match value.get("etcd").and_then(Value::as_str) {
            None | Some("unknown") => EtcdMembership::Unknown,
            Some("member") => EtcdMembership::Member,
            Some("not-member") => EtcdMembership::NotMember,
            Some(other) => panic!("etcd membership {other:?}"),
        },
        out_of_date: strings(value.get("outOfDate")),
        unhealthy: strings(value.get("unhealthy")),
    }
}

/// The case's config and plan input: the defaults, overridden by the case's own fields.
fn case_input(defaults: &Value, case: &Value) -> (KubeadmControlPlaneConfig, PlanInput) {
    let mut given: Map<String, Value> = defaults.as_object().cloned().unwrap_or_default();
    if let Some(own) = field(case, "input").as_object() {
        given.extend(own.clone());
    }
    let given = Value::Object(given);
    let config = match serde_json::from_value(field(&given, "config").clone()) {
        Ok(config) => config,
        Err(e) => panic!("config of {}: {e}", field(case, "name")),
    };
    let members = match field(&given, "members").as_array() {
        Some(members) => members.iter().map(member).collect(),
        None => panic!("members of {} is not a list", field(case, "name")),
    };
    let input = PlanInput {
        version: version(field(&given, "version")),
        replicas: count(field(&given, "replicas")),
        members,
        failure_domains: strings(given.get("failureDomains")),
        endpoint: endpoint(field(&given, "endpoint")),
        failures_tolerated: given.get("failuresTolerated").map(count),
        objects: Vec::new(),
    };
    (config, input)
}

fn version_text(v: &KubernetesVersion) -> String {
    format!("v{}.{}.{}", v.major, v.minor, v.patch)
}

fn status_text(s: ConditionStatus) -> &'static str {
    match s {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    }
}

/// The plan in the file's terms, restricted to the fields `expect` names, so that a
/// difference shows field by field.
fn answer(plan: &Plan, expect: &Value) -> Value {
    let mut found = match &plan.step {
        Step::None => json!({"step": "none"}),
        Step::CreateMachine(m) => json!({
            "step": "create-machine",
            "init": m.init,
            "version": version_text(&m.version),
            "failureDomain": m.failure_domain,
        }),
        Step::DeleteMachine(m) => json!({"step": "delete-machine", "machine": m.name}),
        Step::RemoveEtcdMember(m) => json!({"step": "remove-etcd-member", "machine": m.name}),
        Step::ApplyManifests(_) => json!({"step": "apply-manifests"}),
        Step::Wait(p) => json!({
            "step": "wait",
            "reason": p.reason,
            "message": p.message,
            "requeueAfterMs": p.requeue_after_ms,
        }),
    };
    let status = &plan.status;
    let wanted_conditions: Vec<usize> = expect
        .get("conditions")
        .and_then(Value::as_array)
        .map(|c| c.iter().map(|w| w.as_array().map_or(0, Vec::len)).collect())
        .unwrap_or_default();
    let conditions: Vec<Value> = (status.conditions.iter().enumerate())
        .map(|(i, c)| {
            let full = [
                c.type_.clone(),
                status_text(c.status).to_owned(),
                c.reason.clone(),
                c.message.clone(),
            ];
            let shown = wanted_conditions.get(i).copied().unwrap_or(1);
            Value::from(full[..shown.min(full.len())].to_vec())
        })
        .collect();
    let extra = json!({
        "initialized": status.initialized,
        "ready": status.ready,
        "replicas": plan.replicas,
        "readyReplicas": plan.ready_replicas,
        "upToDateReplicas": plan.up_to_date_replicas,
        "statusVersion": status.version.as_ref().map(version_text),
        "statusEndpoint": status.endpoint.as_ref().map(|e| json!({"host": e.host, "port": e.port})),
        "conditions": conditions,
    });
    if let (Some(found), Some(extra)) = (found.as_object_mut(), extra.as_object()) {
        found.extend(extra.clone());
    }
    let restricted: Map<String, Value> = (expect.as_object().into_iter().flatten())
        .map(|(k, _)| (k.clone(), found.get(k).cloned().unwrap_or(Value::Null)))
        .collect();
    Value::Object(restricted)
}

#[test]
fn every_plan_case_is_answered_as_the_file_says() {
    let (defaults, cases) = cases_file();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = text(field(case, "name"));
        let expect = field(case, "expect");
        let (config, input) = case_input(&defaults, case);
        let outcome = plan::plan(&config, &input);
        let problem = match (expect.get("refused"), outcome) {
            (Some(refused), Err(e)) if e.to_string() == text(refused) => None,
            (Some(refused), Err(e)) => Some(format!("refused with {e:?}, not {refused}")),
            (Some(refused), Ok(p)) => {
                Some(format!("answered {:?}, not refused: {refused}", p.step))
            }
            (None, Err(e)) => Some(format!("refused: {e}")),
            (None, Ok(p)) => {
                let found = answer(&p, expect);
                (found != *expect).then(|| format!("answered {found}\n  expected {expect}"))
            }
        };
        if let Some(problem) = problem {
            failures.push(format!("{name}: {problem}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn refusals_are_permanent_invalid_input() {
    use capw_sdk::types::{ErrorCode, ProviderError};
    let (defaults, cases) = cases_file();
    for case in cases
        .iter()
        .filter(|c| field(c, "expect").get("refused").is_some())
    {
        let (config, input) = case_input(&defaults, case);
        let Err(e) = plan::plan(&config, &input) else {
            panic!("{}: accepted", field(case, "name"));
        };
        let e = ProviderError::from(e);
        assert_eq!((e.code, e.retryable), (ErrorCode::InvalidInput, false));
    }
}
