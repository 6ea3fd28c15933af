//! The rules of the suite, as data: an id, the extension point it concerns and what it asks
//! of a provider. The checks in [`crate::checks`] produce one outcome per rule id.

use std::fmt;

use serde::Serialize;

/// What part of the contract a rule concerns; it applies when the provider implements it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// Every provider: loading, `metadata`, and every call the suite makes.
    Every,
    Infrastructure,
    Bootstrap,
    ControlPlane,
    LifecycleHooks,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::Every => "every provider",
            Scope::Infrastructure => "infrastructure",
            Scope::Bootstrap => "bootstrap",
            Scope::ControlPlane => "control-plane",
            Scope::LifecycleHooks => "lifecycle-hooks",
        })
    }
}

/// One rule of the contract the suite checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Rule {
    /// Stable id, e.g. `infrastructure.reconcile-machine.idempotent`; messages name it.
    pub id: &'static str,
    pub scope: Scope,
    /// The contract version (`major.minor`) that brought the rule: it applies to providers of
    /// that version and later ones, and is skipped for older ones.
    pub since: &'static str,
    /// What the rule asks, in one sentence.
    pub description: &'static str,
}

impl Rule {
    /// Whether the rule applies to a provider of the contract `version` (`0.2.0`). A version
    /// that does not parse gets every rule.
    pub fn applies_to(&self, version: &str) -> bool {
        match (major_minor(self.since), major_minor(version)) {
            (Some(since), Some(version)) => version >= since,
            _ => true,
        }
    }
}

/// `(major, minor)` of `0.2` or `0.2.1`.
fn major_minor(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

macro_rules! rules {
    ($($konst:ident = $id:literal, $scope:ident $(since $since:literal)?, $description:literal;)*) => {
        /// Rule ids, as constants for the checks.
        pub mod id {
            $(pub const $konst: &str = $id;)*
        }

        /// Every rule, in the order the report lists them.
        pub const RULES: &[Rule] = &[
            $(Rule {
                id: $id,
                scope: Scope::$scope,
                since: rules!(@since $($since)?),
                description: $description,
            },)*
        ];
    };
    (@since) => { "0.1" };
    (@since $since:literal) => { $since };
}

rules! {
    LOADS = "provider.loads", Every,
        "The component loads: a component of a contract version the host serves, linkable in the sandbox, whose describe answers usable metadata.";
    DESCRIBE_WELL_FORMED = "metadata.describe.well-formed", Every,
        "describe names a semantic version, a one-line description, at least one extension point (each once), a control-plane shape exactly when it implements control-plane, and grant requests that parse.";
    DESCRIBE_DETERMINISTIC = "metadata.describe.deterministic", Every,
        "describe answers the same every time.";
    SCHEMA_WELL_FORMED = "metadata.config-schema.well-formed", Every,
        "config-schema is a valid JSON Schema (draft 2020-12) the host can compile.";
    EXAMPLE_ACCEPTED = "metadata.validate-config.accepts-example", Every,
        "The example config passes the config schema and validate-config.";
    REJECTS_MALFORMED = "metadata.validate-config.rejects-malformed", Every,
        "validate-config rejects text that is not JSON with at least one field error, without trapping.";
    FIELD_PATHS = "metadata.validate-config.field-paths", Every,
        "validate-config rejects a config whose field has a value of a kind its schema refuses (a number for a string, ...), with an error whose path is a JSON Pointer to that field; every path is a JSON Pointer.";
    VALIDATE_DETERMINISTIC = "metadata.validate-config.deterministic", Every,
        "validate-config answers the same for the same config.";
    UNDECLARED_UNSUPPORTED = "contract.undeclared-points-unsupported", Every,
        "An exported interface that describe does not declare answers every call with a permanent unsupported error.";
    BAD_INPUT_PERMANENT = "errors.bad-config-is-permanent", Every,
        "A call whose config is not JSON fails with a provider error that is not retryable (the same input fails again), not a trap.";
    RETRY_FLAG = "errors.retry-flag", Every,
        "Every provider error carries a consistent retry flag: invalid-input and unsupported are never retryable, and retry-after-ms comes only with retryable.";
    WITHIN_DEADLINE = "calls.within-deadline", Every,
        "No call the suite makes runs past its deadline.";
    CLUSTER_CONVERGES = "infrastructure.reconcile-cluster.in-progress", Infrastructure,
        "reconcile-cluster, called again with the same key after each in-progress hint (a requeue hint above 0 and a reason), becomes ready with a usable endpoint, or none (contract 0.3: an infrastructure whose clusters' control plane a service runs makes no endpoint).";
    CLUSTER_IDEMPOTENT = "infrastructure.reconcile-cluster.idempotent", Infrastructure,
        "reconcile-cluster called again once ready stays ready with the same endpoint.";
    MACHINE_IN_PROGRESS = "infrastructure.reconcile-machine.in-progress", Infrastructure,
        "reconcile-machine answers a requeue hint while the phase is neither running nor failed, and settles when called again with the same key.";
    MACHINE_IDEMPOTENT = "infrastructure.reconcile-machine.idempotent", Infrastructure,
        "reconcile-machine called again with the same idempotency key reports the same machine (same provider id); another key gives another machine.";
    LIST_ONE_PER_KEY = "infrastructure.list-machines.one-per-key", Infrastructure,
        "list-machines lists no idempotency key twice, a created machine at most once under its provider id, and no machine once it was deleted.";
    DELETE_MACHINE_GONE = "infrastructure.delete-machine.gone-is-deleted", Infrastructure,
        "delete-machine answers deleted for a key that never created anything, and again for a machine already deleted.";
    DELETE_CLUSTER_GONE = "infrastructure.delete-cluster.gone-is-deleted", Infrastructure,
        "delete-cluster reaches deleted (honouring in-progress), answers deleted again once gone, and answers deleted for a cluster that never existed.";
    SECRETS_CONVERGE = "bootstrap.cluster-secrets.in-progress", Bootstrap,
        "cluster-secrets, called again after each in-progress hint, becomes ready with named items (no name twice).";
    GENERATE_ROLES = "bootstrap.generate.roles", Bootstrap,
        "generate answers bootstrap data for the roles init, join-control-plane and worker.";
    GENERATE_DETERMINISTIC = "bootstrap.generate.deterministic", Bootstrap,
        "generate answers the same data for the same request.";
    KUBECONFIG = "bootstrap.kubeconfig.answers", Bootstrap,
        "kubeconfig answers a non-empty kubeconfig for the cluster's secrets.";
    JOIN_TOKEN_RENEWS = "bootstrap.join-token.renews", Bootstrap since "0.3",
        "current-join-token answers none, or the token in an item of the cluster's secrets; renew-join-token then answers a token with a new id for the same item, which current-join-token names once it is stored there.";
    PLAN_DETERMINISTIC = "control-plane.plan.deterministic", ControlPlane,
        "plan answers the same output for the same input.";
    PLAN_WELL_FORMED = "control-plane.plan.well-formed", ControlPlane,
        "plan's step fits its input: a machine to delete (or to take out of etcd) is one of the members, an init machine only when there are none, a wait with a requeue hint above 0. A hosted plan (contract 0.3) answers no machine step and not none while nothing is applied, and its apply-manifests holds only what the host applies: one YAML object each, an apps/v1 Deployment or StatefulSet or a v1 Service, Secret or ConfigMap, in the Cluster's namespace, named with the Cluster's name and a dash first, each once, beside certificate Secrets so named whose serving certificates name a SAN and whose kubeconfigs are a client's for an https server.";
    PLAN_STATUS = "control-plane.plan.status", ControlPlane since "0.2",
        "plan's control-plane status is consistent: ready only when initialised, ready replicas at most the replicas, and a version, when given, one the members or the input name; a hosted plan's not ready while nothing is applied.";
    PLAN_ETCD_MEMBERS = "control-plane.plan.etcd-members", ControlPlane since "0.3",
        "plan never answers delete-machine for a member the input says etcd lists: such a member leaves through remove-etcd-member, which the host carries out from another member before it deletes the machine.";
    SERVICE_CONVERGES = "control-plane.reconcile-control-plane.converges", ControlPlane since "0.3",
        "For a control plane a service runs (shape managed): reconcile-control-plane, called again with the same key after each wait hint, answers none with a ready, initialised status and the access (endpoint, PEM CA, admin kubeconfig), and again none when called once more; plan answers no machine step. For the hosted shape, whose objects the host applies from plan (it calls no reconcile-control-plane): plan, told each round that every object of its last answer is applied and ready, settles within 4 rounds on apply-manifests with no object it was not told of, and then its status is ready and initialised. The machines shape answers reconcile-control-plane with a permanent unsupported error.";
    SERVICE_DELETE = "control-plane.delete-control-plane.gone-is-deleted", ControlPlane since "0.3",
        "For a control plane a service runs (shape managed): delete-control-plane reaches deleted (honouring in-progress), answers deleted again once gone, and answers deleted for a cluster that never had one. The machines shape answers it with a permanent unsupported error; the hosted shape is not asked (the host deletes the objects it applied).";
    HOOKS_ANSWER = "lifecycle-hooks.handle.idempotent", LifecycleHooks,
        "handle answers proceed or hold (with a requeue hint above 0) for every hook, and answers again when called a second time with the same key.";
}

/// The rule with this id.
pub fn rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn ids_are_unique_and_dotted() {
        let ids: BTreeSet<_> = RULES.iter().map(|r| r.id).collect();
        assert_eq!(ids.len(), RULES.len());
        for r in RULES {
            assert!(r.id.split('.').count() >= 2, "{}", r.id);
            assert!(r.description.ends_with('.'), "{}", r.id);
        }
        assert_eq!(
            rule(id::WITHIN_DEADLINE).map(|r| r.scope),
            Some(Scope::Every)
        );
    }

    #[test]
    fn rules_apply_from_their_contract_version_on() {
        let status = rule(id::PLAN_STATUS).unwrap();
        assert_eq!(status.since, "0.2");
        assert!(!status.applies_to("0.1.0"));
        assert!(status.applies_to("0.2.0"));
        assert!(status.applies_to("0.3.1"));
        assert!(status.applies_to("1.0.0"));
        let etcd = rule(id::PLAN_ETCD_MEMBERS).unwrap();
        assert!(!etcd.applies_to("0.2.0") && etcd.applies_to("0.3.0"));
        let loads = rule(id::LOADS).unwrap();
        assert_eq!(loads.since, "0.1");
        assert!(loads.applies_to("0.1.0") && loads.applies_to("0.2.0"));
        // Every rule names a version the host serves.
        for r in RULES {
            assert!(
                ["0.1", "0.2", "0.3"].contains(&r.since),
                "{}: {}",
                r.id,
                r.since
            );
        }
    }
}
