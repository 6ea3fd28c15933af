//! When a cluster whose work is under way is passed over again: one policy for both modes.
//!
//! The local mode's executor and the Kubernetes mode's controller each keep one [`Requeue`]
//! per cluster while its passes end in [`PassOutcome::Progress`], and drop it once the
//! cluster converged, is blocked or is gone (the next progress starts over).

use std::time::Duration;

use capw_reconcile::StatusView;

use crate::config::RequeueBounds;
#[cfg(doc)]
use crate::pass::PassOutcome;

impl RequeueBounds {
    /// A cluster's waits before its first pass.
    pub fn start(&self) -> Requeue {
        Requeue::new(self.min, self.base_backoff, self.max)
    }
}

/// One cluster's waits between passes while work is under way.
///
/// - A provider's hint (an in-progress answer's `requeue-after-ms`, an error's
///   `retry-after-ms`) is followed, within `[min, max]`.
/// - Without a hint, a failed pass waits `base_backoff`, twice as long after each failure in
///   a row, up to `max`; a pass that did not fail starts the backoff over.
/// - Without a hint, a pass that changed what the cluster shows passes again after `min`; one
///   that changed nothing waits twice as long as the last, up to `max`. Work that goes on
///   elsewhere (a machine booting) is looked at often while it moves and seldom while it
///   does not, and an action whose effect never shows (an orphan that stays listed after its
///   deletion) cannot turn into a hot loop.
#[derive(Clone, Debug)]
pub struct Requeue {
    min: Duration,
    max: Duration,
    base_backoff: Duration,
    backoff: Duration,
    idle: Duration,
    last_status: Option<StatusView>,
}

impl Requeue {
    /// A cluster's state before its first pass. `max` below `min` is taken as `min`.
    pub fn new(min: Duration, base_backoff: Duration, max: Duration) -> Self {
        let max = max.max(min);
        Requeue {
            min,
            max,
            base_backoff: base_backoff.clamp(min, max),
            backoff: base_backoff.clamp(min, max),
            idle: min,
            last_status: None,
        }
    }

    /// How long to wait before the next pass, after a pass that ended in
    /// [`PassOutcome::Progress`] with these fields.
    pub fn progress(
        &mut self,
        status: Option<&StatusView>,
        hint: Option<Duration>,
        failed: bool,
    ) -> Duration {
        let unchanged = status.is_some() && status == self.last_status.as_ref();
        self.last_status = status.cloned();
        self.idle = if unchanged {
            (self.idle * 2).min(self.max)
        } else {
            self.min
        };
        let wait = if failed {
            let wait = self.backoff;
            self.backoff = (self.backoff * 2).min(self.max);
            hint.unwrap_or(wait)
        } else {
            self.backoff = self.base_backoff;
            hint.unwrap_or(self.idle)
        };
        wait.clamp(self.min, self.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capw_reconcile::{ClusterPhase, PoolStatus};

    const MS: Duration = Duration::from_millis(1);

    fn status(phase: ClusterPhase) -> StatusView {
        StatusView {
            phase,
            control_plane: PoolStatus::default(),
            workers: Vec::new(),
            conditions: Vec::new(),
        }
    }

    #[test]
    fn hints_are_followed_within_bounds() {
        let mut r = Requeue::new(10 * MS, 100 * MS, 1000 * MS);
        assert_eq!(r.progress(None, Some(300 * MS), false), 300 * MS);
        assert_eq!(r.progress(None, Some(MS), false), 10 * MS);
        assert_eq!(r.progress(None, Some(3_600_000 * MS), true), 1000 * MS);
    }

    #[test]
    fn failures_in_a_row_back_off_and_a_success_starts_over() {
        let mut r = Requeue::new(10 * MS, 100 * MS, 1000 * MS);
        let waits: Vec<_> = (0..6)
            .map(|_| r.progress(None, None, true).as_millis())
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1000, 1000]);
        r.progress(Some(&status(ClusterPhase::Provisioning)), None, false);
        assert_eq!(r.progress(None, None, true), 100 * MS);
    }

    #[test]
    fn a_pass_that_changes_nothing_waits_longer_each_time() {
        let mut r = Requeue::new(10 * MS, 100 * MS, 1000 * MS);
        let same = status(ClusterPhase::Provisioning);
        let waits: Vec<_> = (0..8)
            .map(|_| r.progress(Some(&same), None, false).as_millis())
            .collect();
        assert_eq!(waits, [10, 20, 40, 80, 160, 320, 640, 1000]);
        // A change is looked at again soon.
        assert_eq!(
            r.progress(Some(&status(ClusterPhase::Provisioned)), None, false),
            10 * MS
        );
    }
}
