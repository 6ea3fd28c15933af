//! Kubernetes-style status conditions (`metav1.Condition`), with the helpers every status uses.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether a condition holds, as Kubernetes spells it.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, JsonSchema)]
pub enum ConditionStatus {
    /// The condition holds.
    True,
    /// The condition does not hold.
    False,
    /// Not known yet (for example, the first check is still running).
    Unknown,
}

/// One observation about an object, after Kubernetes' `metav1.Condition`.
///
/// `reason` is a CamelCase machine-readable word; `message` is for people.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Condition {
    /// The kind of observation, CamelCase (for example `Loaded`, `Ready`).
    #[serde(rename = "type")]
    pub type_: String,
    /// Whether it holds.
    pub status: ConditionStatus,
    /// A CamelCase word saying why, for programs.
    #[serde(default)]
    pub reason: String,
    /// A sentence saying why, for people.
    #[serde(default)]
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: Time,
    /// The `metadata.generation` this condition was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl Condition {
    /// A condition of `type_` with `status`, observed at `now`.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
        now: Time,
    ) -> Self {
        Self {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
            last_transition_time: now,
            observed_generation: None,
        }
    }

    /// The same condition, stamped with the generation it was computed from.
    #[must_use]
    pub fn observed(mut self, generation: Option<i64>) -> Self {
        self.observed_generation = generation;
        self
    }
}

/// Puts `condition` into `conditions`, replacing the one of the same type.
///
/// # Guarantees
///
/// - At most one condition per type is kept; a new type is appended, order is otherwise kept.
/// - When the status does not change, the existing `lastTransitionTime` is kept (reason,
///   message and observed generation are updated), so the time says when the status last
///   flipped, as Kubernetes readers expect.
///
/// Returns whether anything changed, so a caller can skip a no-op status write.
pub fn set_condition(conditions: &mut Vec<Condition>, mut condition: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(existing) => {
            if existing.status == condition.status {
                condition.last_transition_time = existing.last_transition_time.clone();
            }
            let changed = *existing != condition;
            *existing = condition;
            changed
        }
        None => {
            conditions.push(condition);
            true
        }
    }
}

/// The condition of `type_`, if present.
pub fn get_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is present and `True`.
pub fn is_condition_true(conditions: &[Condition], type_: &str) -> bool {
    get_condition(conditions, type_).is_some_and(|c| c.status == ConditionStatus::True)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).expect("valid timestamp"))
    }

    fn ready(status: ConditionStatus, reason: &str, seconds: i64) -> Condition {
        Condition::new("Ready", status, reason, "", at(seconds))
    }

    #[test]
    fn keeps_transition_time_when_status_unchanged() {
        let mut conditions = vec![ready(ConditionStatus::False, "Waiting", 10)];
        assert!(set_condition(
            &mut conditions,
            ready(ConditionStatus::False, "StillWaiting", 20)
        ));
        assert_eq!(conditions.len(), 1);
        assert_eq!(conditions[0].reason, "StillWaiting");
        assert_eq!(conditions[0].last_transition_time, at(10));
    }

    #[test]
    fn moves_transition_time_when_status_flips() {
        let mut conditions = vec![ready(ConditionStatus::False, "Waiting", 10)];
        set_condition(&mut conditions, ready(ConditionStatus::True, "Up", 20));
        assert_eq!(conditions[0].last_transition_time, at(20));
        assert!(is_condition_true(&conditions, "Ready"));
    }

    #[test]
    fn reports_no_change_for_identical_condition() {
        let mut conditions = vec![ready(ConditionStatus::True, "Up", 10)];
        assert!(!set_condition(
            &mut conditions,
            ready(ConditionStatus::True, "Up", 30)
        ));
        assert_eq!(conditions[0].last_transition_time, at(10));
    }

    #[test]
    fn appends_new_types_and_reads_them_back() {
        let mut conditions = vec![ready(ConditionStatus::True, "Up", 10)];
        let loaded = Condition::new("Loaded", ConditionStatus::Unknown, "Pending", "", at(5))
            .observed(Some(3));
        set_condition(&mut conditions, loaded);
        assert_eq!(conditions.len(), 2);
        let got = get_condition(&conditions, "Loaded").expect("present");
        assert_eq!(got.observed_generation, Some(3));
        assert!(!is_condition_true(&conditions, "Loaded"));
        assert!(!is_condition_true(&conditions, "Missing"));
    }

    #[test]
    fn serializes_like_kubernetes() {
        let json = serde_json::to_value(ready(ConditionStatus::True, "Up", 0)).expect("json");
        assert_eq!(json["type"], "Ready");
        assert_eq!(json["status"], "True");
        assert_eq!(json["lastTransitionTime"], "1970-01-01T00:00:00Z");
    }
}
