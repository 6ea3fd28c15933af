//! Where a new machine goes and which machine goes first: the failure-domain rules.
//!
//! Both rules together keep members spread evenly over the failure domains, through scale-ups,
//! scale-downs and rollouts alike: new machines fill the emptiest domain, removals thin the
//! fullest.

use std::cmp::Ordering;

use capw_sdk::control_plane::Member;
use capw_sdk::types::KubernetesVersion;

/// The failure domain for a new machine, given the live members.
///
/// # Guarantees
///
/// - `None` exactly when `domains` is empty.
/// - The domain holding the fewest live members; among equals, the one holding the fewest
///   up-to-date live members (at `target`, nothing out of date: so that a rollout, which adds a machine to a full set, lands
///   the replacement where no replacement is yet and the spread survives the rollout); among
///   equals still, the first in `domains`.
/// - Members in a domain that is not in `domains` (or in none) count for no domain.
pub fn domain_for_new_machine(
    domains: &[String],
    live: &[&Member],
    target: KubernetesVersion,
) -> Option<String> {
    let load = |domain: &String| {
        let members = live
            .iter()
            .filter(|m| m.failure_domain.as_ref() == Some(domain));
        let total = members.clone().count();
        let up_to_date =
            (members.filter(|m| m.version == target && m.out_of_date.is_empty())).count();
        (total, up_to_date)
    };
    // `min_by_key` keeps the first of equal keys, which is the order tie-break.
    domains.iter().min_by_key(|domain| load(domain)).cloned()
}

/// The machine to remove from `candidates`, given all live members.
///
/// # Guarantees
///
/// - `None` exactly when `candidates` is empty.
/// - A candidate in the most populated failure domain, counting every live member (members
///   without a domain count as one more domain); among candidates in equally populated
///   domains, the oldest (`created-at`), then the first by name, then by uid, so the answer
///   never depends on the input's order.
pub fn machine_to_remove<'a>(candidates: &[&'a Member], live: &[&Member]) -> Option<&'a Member> {
    let population = |member: &Member| {
        live.iter()
            .filter(|m| m.failure_domain == member.failure_domain)
            .count()
    };
    candidates
        .iter()
        .copied()
        .min_by(|a, b| removal_order(a, b, population(a), population(b)))
}

/// `Less` when `a` should go before `b`: fuller domain, then older, then by name and uid.
fn removal_order(a: &Member, b: &Member, population_a: usize, population_b: usize) -> Ordering {
    population_b
        .cmp(&population_a)
        .then_with(|| a.created_at.cmp(&b.created_at))
        .then_with(|| a.machine.name.cmp(&b.machine.name))
        .then_with(|| a.machine.uid.cmp(&b.machine.uid))
}

#[cfg(test)]
mod tests {
    use capw_sdk::testing::{machine, version};

    use super::*;

    fn member(name: &str, domain: Option<&str>, minor: u32, created_at: u64) -> Member {
        Member {
            machine: machine(name),
            version: version(minor),
            failure_domain: domain.map(String::from),
            ready: true,
            created_at,
            deleting: false,
            etcd: capw_sdk::control_plane::EtcdMembership::Unknown,
            out_of_date: Vec::new(),
            unhealthy: Vec::new(),
        }
    }

    fn domains() -> Vec<String> {
        ["a", "b", "c"].map(String::from).to_vec()
    }

    #[test]
    fn no_domains_means_none() {
        let m = member("m0", None, 35, 1);
        assert_eq!(domain_for_new_machine(&[], &[&m], version(35)), None);
    }

    #[test]
    fn fewest_members_first_then_list_order() {
        assert_eq!(
            domain_for_new_machine(&domains(), &[], version(35)).as_deref(),
            Some("a")
        );
        let a = member("m0", Some("a"), 35, 1);
        let c = member("m1", Some("c"), 35, 2);
        assert_eq!(
            domain_for_new_machine(&domains(), &[&a, &c], version(35)).as_deref(),
            Some("b")
        );
        let b = member("m2", Some("b"), 35, 3);
        assert_eq!(
            domain_for_new_machine(&domains(), &[&a, &b, &c], version(35)).as_deref(),
            Some("a")
        );
        // The list's order, not the alphabet's.
        let reversed: Vec<String> = ["c", "b", "a"].map(String::from).to_vec();
        assert_eq!(
            domain_for_new_machine(&reversed, &[&a, &b, &c], version(35)).as_deref(),
            Some("c")
        );
    }

    #[test]
    fn ties_prefer_the_domain_without_an_up_to_date_member() {
        let a = member("m0", Some("a"), 35, 1);
        let b = member("m1", Some("b"), 34, 2);
        let c = member("m2", Some("c"), 34, 3);
        assert_eq!(
            domain_for_new_machine(&domains(), &[&a, &b, &c], version(35)).as_deref(),
            Some("b")
        );
    }

    #[test]
    fn members_outside_the_listed_domains_count_for_none() {
        let gone = member("m0", Some("z"), 35, 1);
        let none = member("m1", None, 35, 2);
        assert_eq!(
            domain_for_new_machine(&domains(), &[&gone, &none], version(35)).as_deref(),
            Some("a")
        );
    }

    #[test]
    fn removes_from_the_most_populated_domain() {
        let a0 = member("a0", Some("a"), 35, 1);
        let b0 = member("b0", Some("b"), 35, 2);
        let b1 = member("b1", Some("b"), 35, 3);
        let live = [&a0, &b0, &b1];
        assert_eq!(
            machine_to_remove(&live, &live).map(|m| m.machine.name.as_str()),
            Some("b0")
        );
    }

    #[test]
    fn equal_domains_remove_the_oldest_then_by_name() {
        let a0 = member("a0", Some("a"), 35, 5);
        let b0 = member("b0", Some("b"), 35, 4);
        let c0 = member("c0", Some("c"), 35, 9);
        let live = [&a0, &b0, &c0];
        assert_eq!(
            machine_to_remove(&live, &live).map(|m| m.machine.name.as_str()),
            Some("b0")
        );
        let x = member("x", None, 35, 4);
        let w = member("w", None, 35, 4);
        let live = [&x, &w];
        assert_eq!(
            machine_to_remove(&live, &live).map(|m| m.machine.name.as_str()),
            Some("w")
        );
    }

    #[test]
    fn population_counts_members_that_are_not_candidates() {
        // Only the out-of-date machines are candidates; `b` holds two members, one new.
        let a0 = member("a0", Some("a"), 34, 1);
        let b0 = member("b0", Some("b"), 34, 2);
        let b1 = member("b1", Some("b"), 35, 3);
        let live = [&a0, &b0, &b1];
        assert_eq!(
            machine_to_remove(&[&a0, &b0], &live).map(|m| m.machine.name.as_str()),
            Some("b0")
        );
        assert_eq!(machine_to_remove(&[], &live), None);
    }
}
