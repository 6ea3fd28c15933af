//! Loopback addresses of a real-boot cloud: every instance and load balancer gets its own
//! `127.a.b.h`, so each machine can use kubeadm's standard ports (6443, 2379, 2380...).
//!
//! Addresses come from /24 blocks `127.a.b.0/24` with `a` never 0 (127.0.0.0/16 holds the
//! addresses other programs use, 127.0.0.1 first). A cloud picks its blocks from a seed, so
//! two clouds on one host rarely share one; it keeps them in its state, so addresses are
//! stable across a restart. Addresses are handed out round-robin, so one freed by a delete is
//! reused only after every other address of the blocks, long after its processes are gone.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::{CloudState, StateError};

/// Blocks one cloud may use: 254 addresses each, far more than a host can run machines for.
const MAX_BLOCKS: usize = 64;

/// Host numbers used in a block: neither the network (`.0`) nor the broadcast (`.255`)
/// number, which some tools refuse as a host.
const HOSTS: std::ops::RangeInclusive<u8> = 1..=254;

/// The blocks a cloud took, in the order it took them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct LoopbackPool {
    /// Each block as its second and third octets, `a << 8 | b`, with `a >= 1`.
    blocks: Vec<u16>,
    /// Where the next search starts, as a position over every block's hosts in order.
    #[serde(default)]
    next: usize,
}

/// How many host numbers a block has.
const PER_BLOCK: usize = 254;

fn address_at(blocks: &[u16], position: usize) -> Option<Ipv4Addr> {
    let [a, b] = blocks.get(position / PER_BLOCK)?.to_be_bytes();
    let host = u8::try_from(position % PER_BLOCK)
        .ok()?
        .checked_add(*HOSTS.start())?;
    Some(Ipv4Addr::new(127, a, b, host))
}

impl CloudState {
    /// A loopback address held by no instance or load balancer of the cloud: the lowest free
    /// host of its blocks, taking a new block (chosen from `seed`) when they are full.
    ///
    /// # Errors
    ///
    /// [`StateError::Exhausted`] when [`MAX_BLOCKS`] blocks are full.
    pub(super) fn allocate_loopback(&mut self, seed: u64) -> Result<Ipv4Addr, StateError> {
        let used: BTreeSet<Ipv4Addr> = self
            .instances
            .values()
            .map(|i| i.address)
            .chain(self.load_balancers.values().filter_map(|lb| lb.address))
            .chain(self.control_planes.values().filter_map(|cp| cp.address))
            .collect();
        let total = self.loopback.blocks.len() * PER_BLOCK;
        let found = (0..total)
            .map(|step| (self.loopback.next + step) % total)
            .find(|&p| address_at(&self.loopback.blocks, p).is_some_and(|ip| !used.contains(&ip)));
        let position = match found {
            Some(position) => position,
            None => {
                if self.loopback.blocks.len() >= MAX_BLOCKS {
                    return Err(StateError::Exhausted {
                        what: format!("loopback addresses ({MAX_BLOCKS} blocks of {PER_BLOCK})"),
                    });
                }
                let block = (0u64..)
                    .map(|attempt| block_from(seed, self.loopback.blocks.len() as u64, attempt))
                    .find(|b| !self.loopback.blocks.contains(b))
                    .unwrap_or(u16::MAX);
                self.loopback.blocks.push(block);
                total
            }
        };
        self.loopback.next = position + 1;
        address_at(&self.loopback.blocks, position).ok_or_else(|| StateError::Exhausted {
            what: "loopback addresses".into(),
        })
    }
}

/// A block outside 127.0.0.0/16, mixed from the seed, the block's index and an attempt
/// number (to step past blocks taken already).
fn block_from(seed: u64, index: u64, attempt: u64) -> u16 {
    let mut x = seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ attempt.rotate_left(32);
    // splitmix64's finaliser: every input bit moves every output bit.
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    // 256..=65535: a second octet of 1 to 255.
    (256 + x % (65536 - 256)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_never_in_127_0() {
        for seed in 0..2000 {
            for index in 0..3 {
                assert!(block_from(seed, index, 0) >= 256);
            }
        }
    }

    #[test]
    fn addresses_are_unique_and_a_freed_one_comes_back_last() {
        let mut state = CloudState::default();
        let mut seen = BTreeSet::new();
        for _ in 0..300 {
            let ip = state.allocate_loopback(7).unwrap_or(Ipv4Addr::UNSPECIFIED);
            assert!(ip.is_loopback() && ip.octets()[1] != 0, "{ip}");
            assert!(seen.insert(ip), "{ip} handed out twice");
            // Not held by a record: the pool only knows its blocks, so mark it held.
            state.load_balancers.insert(
                seen.len() as u64,
                super::super::LoadBalancerRecord {
                    id: seen.len() as u64,
                    client_token: None,
                    cluster: "c".into(),
                    name: "n".into(),
                    port: 6443,
                    state: crate::model::LoadBalancerState::Active,
                    created_at_ms: 0,
                    address: Some(ip),
                },
            );
        }
        assert_eq!(state.loopback.blocks.len(), 2);
        // A freed address is not the next one handed out, but comes back once the rest of
        // the blocks are held.
        let freed = state.load_balancers.remove(&5).and_then(|lb| lb.address);
        let next = state.allocate_loopback(7).ok();
        assert_ne!(next, freed);
        assert!(next.is_some_and(|ip| !seen.contains(&ip)));
    }
}
