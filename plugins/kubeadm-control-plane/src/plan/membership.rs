//! The observed members, split the way every rule looks at them, and etcd's quorum.

use capw_sdk::control_plane::{EtcdMembership, Member, PlanInput};
use capw_sdk::types::KubernetesVersion;

/// The members of one plan input, split into those that stay (live) and those already being
/// deleted, with the desired version to tell up-to-date from out-of-date.
///
/// # Guarantees
///
/// `live` and `deleting` keep the input's order; each member is in exactly one of them.
#[derive(Debug, Clone)]
pub struct Membership<'a> {
    /// Members not being deleted: the etcd membership the plan reasons about.
    pub live: Vec<&'a Member>,
    /// Members being deleted already.
    pub deleting: Vec<&'a Member>,
    /// The desired version; a live member running another is out of date.
    pub target: KubernetesVersion,
}

impl<'a> Membership<'a> {
    /// Splits `input.members`.
    pub fn new(input: &'a PlanInput) -> Self {
        let (deleting, live) = input.members.iter().partition(|m| m.deleting);
        Self {
            live,
            deleting,
            target: input.version,
        }
    }

    /// Live members.
    pub fn replicas(&self) -> u32 {
        count(self.live.len())
    }

    /// Live members whose node is ready.
    pub fn ready(&self) -> u32 {
        count(self.live.iter().filter(|m| m.ready).count())
    }

    /// Live members that are up to date.
    pub fn up_to_date(&self) -> u32 {
        count(self.live.iter().filter(|m| self.is_up_to_date(m)).count())
    }

    /// Whether `member` runs the desired version, patch included, and the host found nothing
    /// else that shaped it out of date (`out-of-date` empty: a changed machine-shaping input
    /// rolls the machine as a version does).
    pub fn is_up_to_date(&self, member: &Member) -> bool {
        member.version == self.target && member.out_of_date.is_empty()
    }

    /// Live members that are not up to date, in input order.
    pub fn out_of_date(&self) -> Vec<&'a Member> {
        self.live
            .iter()
            .copied()
            .filter(|m| !self.is_up_to_date(m))
            .collect()
    }

    /// Live members the host asks to replace as unhealthy, in input order.
    pub fn unhealthy(&self) -> Vec<&'a Member> {
        (self.live.iter().copied())
            .filter(|m| !m.unhealthy.is_empty())
            .collect()
    }

    /// Live members whose node is not ready, in input order.
    pub fn unready(&self) -> Vec<&'a Member> {
        self.live.iter().copied().filter(|m| !m.ready).collect()
    }
}

/// Whether etcd lists `member`, as the host observed it: such a member leaves through
/// `remove-etcd-member`, never `delete-machine`.
pub fn in_etcd(member: &Member) -> bool {
    member.etcd == EtcdMembership::Member
}

/// The majority of `members` etcd members: how many must be healthy for etcd to commit
/// anything, a membership change included. 1 for 1, 2 for 2 and 3, 3 for 4 and 5.
pub fn quorum(members: u32) -> u32 {
    members / 2 + 1
}

/// A count as the contract carries it. A control plane never has 4 billion members, but
/// saturate rather than wrap if one did.
pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quorum_is_a_strict_majority() {
        let found: Vec<u32> = (1..=7).map(quorum).collect();
        assert_eq!(found, [1, 2, 2, 3, 3, 4, 4]);
    }

    #[test]
    fn count_saturates() {
        assert_eq!(count(3), 3);
        assert_eq!(count(usize::MAX), u32::MAX);
    }
}
