package main

import "time"

// The kubelet's restart back-off for crashing containers: the first restart is at once, each
// next one waits twice as long as the one before, from 10 s up to 300 s, and a container that
// ran without crashing for twice the longest wait starts over from the first.

// defaultBackoffBase and backoffMax are the kubelet's.
const (
	defaultBackoffBase = 10 * time.Second
	backoffMaxFactor   = 30 // 300 s with the default base
)

// crashBackoff is one container's back-off.
type crashBackoff struct {
	base, max time.Duration
	// current is the wait before the next restart; zero until the first restart.
	current time.Duration
	// updated is when the container last exited.
	updated time.Time
}

func newCrashBackoff(base time.Duration) crashBackoff {
	return crashBackoff{base: base, max: base * backoffMaxFactor}
}

// next is how long to wait before restarting a container that exited at finished, and moves
// the back-off on one step.
func (b *crashBackoff) next(finished time.Time) time.Duration {
	if !b.updated.IsZero() && finished.Sub(b.updated) > 2*b.max {
		b.current = 0
	}
	b.updated = finished
	wait := b.current
	switch {
	case b.current == 0:
		b.current = b.base
	case b.current*2 > b.max:
		b.current = b.max
	default:
		b.current *= 2
	}
	return wait
}
