//! {{name}}: a control-plane provider written with capw's Rust SDK, of the machines shape: the
//! host creates and deletes the control-plane machines, one step at a time, and `plan` says
//! which step is safe next. Scalable, no version upgrades (set `VERSION_UPGRADES` and plan a
//! rollout to add them: kubeadm-control-plane in the capw repository shows how).

use std::time::Duration;

use capw_sdk::prelude::*;
use serde::Deserialize;

/// The provider's config, as a ClusterClass gives it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Config {
    /// The most control-plane machines a cluster may ask for: odd, 1 to 9.
    #[serde(default = "default_max_replicas")]
    #[schemars(range(min = 1, max = 9))]
    pub max_replicas: u32,
}

fn default_max_replicas() -> u32 {
    7
}

/// How soon to plan again while a machine comes up or goes away.
const WAIT: Duration = Duration::from_secs(5);

pub struct StarterProvider;

impl Provider for StarterProvider {
    type Config = Config;
    const NAME: &'static str = "{{name}}";
    const DESCRIPTION: &'static str =
        "Control-plane provider: machines, one at a time, scaled up and down.";
}

impl Validate for Config {
    fn validate(&self) -> Result<(), Vec<FieldError>> {
        if self.max_replicas.is_multiple_of(2) {
            return Err(vec![FieldError::new(
                "/maxReplicas",
                "must be odd, so that etcd keeps a quorum",
            )]);
        }
        Ok(())
    }
}

impl ControlPlane for StarterProvider {
    const SHAPE: ControlPlaneShape = ControlPlaneShape::Machines;
    const SCALABLE: bool = true;

    fn plan(ctx: &Context<Config>, input: PlanInput) -> Result<Plan, ProviderError> {
        let live: Vec<&Member> = input.members.iter().filter(|m| !m.deleting).collect();
        let ready = live.iter().filter(|m| m.ready).count();
        let wanted = input.replicas.min(ctx.config.max_replicas) as usize;
        let wait = |reason: &str, message: String| {
            Step::Wait(InProgress::new(reason, message).requeue_after(WAIT))
        };

        let step = if let Some(going) = input.members.iter().find(|m| m.deleting) {
            // One change at a time: nothing else until the machine is gone.
            wait(
                "MachineDeleting",
                format!("machine {} is being deleted", going.machine.name),
            )
        } else if live.len() < wanted {
            if ready < live.len() {
                wait(
                    "MachineNotReady",
                    format!("{ready} of {} machines ready", live.len()),
                )
            } else {
                let domains = &input.failure_domains;
                Step::CreateMachine(MachineToCreate {
                    init: live.is_empty(),
                    version: input.version,
                    failure_domain: (!domains.is_empty())
                        .then(|| domains[live.len() % domains.len()].clone()),
                })
            }
        } else if live.len() > wanted {
            // The oldest goes first: etcd lets it go, then the host deletes its machine.
            let oldest = live
                .iter()
                .min_by_key(|m| (m.created_at, &m.machine.name))
                .expect("more live members than wanted");
            if oldest.etcd == EtcdMembership::Member {
                Step::RemoveEtcdMember(oldest.machine.clone())
            } else {
                Step::DeleteMachine(oldest.machine.clone())
            }
        } else {
            Step::None
        };

        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Ok(Plan {
            step,
            status: ControlPlaneStatus {
                initialized: input.members.iter().any(|m| m.ready),
                ready: !live.is_empty() && ready == live.len(),
                version: (!input.members.is_empty()).then_some(input.version),
                endpoint: input.endpoint.clone(),
                conditions: Vec::new(),
                failures_tolerated: None,
            },
            replicas: count(live.len()),
            ready_replicas: count(ready),
            up_to_date_replicas: count(live.len()),
            certificates: Vec::new(),
            shared_datastore: None,
        })
    }
}

capw_sdk::export_provider!(
    StarterProvider,
    unsupported: [Infrastructure, Bootstrap, LifecycleHooks]
);

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{self, context, machine, version};

    use super::*;

    fn member(name: &str, ready: bool, created_at: u64) -> Member {
        Member {
            machine: machine(name),
            version: version(35),
            failure_domain: None,
            ready,
            created_at,
            deleting: false,
            etcd: EtcdMembership::Unknown,
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        }
    }

    fn input(replicas: u32, members: Vec<Member>) -> PlanInput {
        PlanInput {
            version: version(35),
            replicas,
            members,
            failure_domains: vec!["a".into(), "b".into()],
            endpoint: None,
            failures_tolerated: None,
            objects: Vec::new(),
        }
    }

    #[test]
    fn scales_up_one_ready_machine_at_a_time() {
        let ctx = context::<Config>("{}");
        let plan = StarterProvider::plan(&ctx, input(3, vec![])).unwrap();
        assert!(matches!(plan.step, Step::CreateMachine(ref m) if m.init));
        let plan = StarterProvider::plan(&ctx, input(3, vec![member("m-0", false, 1)])).unwrap();
        assert!(matches!(plan.step, Step::Wait(_)), "{:?}", plan.step);
        let plan = StarterProvider::plan(&ctx, input(3, vec![member("m-0", true, 1)])).unwrap();
        assert!(matches!(plan.step, Step::CreateMachine(ref m) if !m.init));
    }

    #[test]
    fn scales_down_the_oldest_first() {
        let ctx = context::<Config>("{}");
        let members = vec![member("new", true, 2), member("old", true, 1)];
        let plan = StarterProvider::plan(&ctx, input(1, members)).unwrap();
        assert!(matches!(plan.step, Step::DeleteMachine(ref m) if m.name == "old"));
    }

    #[test]
    fn an_even_maximum_is_refused() {
        testing::assert_refused_at::<StarterProvider>(r#"{"maxReplicas": 4}"#, &["/maxReplicas"]);
    }
}
