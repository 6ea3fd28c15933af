package main

import (
	"context"
	"log"
	"os"
	"path/filepath"
	"time"
)

// faultPollInterval is how often a booted control-plane machine looks at its fault files.
const faultPollInterval = time.Second

// killableComponents are the control-plane components a fault can kill: the file
// DIR/faults/<name>-stopped, while it exists, keeps the supervisor's child of that name down.
var killableComponents = []string{"etcd", "kube-apiserver"}

// faultWatcher keeps the supervisor's children as the machine's fault files say (simcloud's
// per-instance faults "kube-apiserver stopped" and "etcd stopped"): when a component's file
// appears, the component is killed with SIGKILL, as a crash would end it, and kept down; when
// the file goes, it is started again with the same command line. Only a component the watcher
// killed is started again: one that exited on its own stays down, as before.
type faultWatcher struct {
	dir   string
	sup   *supervisor
	names []string
	// down holds the components the watcher killed and keeps down.
	down map[string]bool
}

func newFaultWatcher(dir string, sup *supervisor, names []string) *faultWatcher {
	return &faultWatcher{dir: dir, sup: sup, names: names, down: map[string]bool{}}
}

// run polls the fault files every faultPollInterval until ctx ends. It must run on the
// goroutine that started the children (the main one): the components it starts again get
// their Pdeathsig from its thread.
func (w *faultWatcher) run(ctx context.Context) {
	t := time.NewTicker(faultPollInterval)
	defer t.Stop()
	for {
		w.poll()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// poll applies the fault files once, logging each change. A kill or start that fails is logged
// and tried again at the next poll.
func (w *faultWatcher) poll() {
	for _, name := range w.names {
		file := filepath.Join(w.dir, name+"-stopped")
		_, err := os.Stat(file)
		stopped := err == nil
		switch {
		case stopped && !w.down[name]:
			if err := w.sup.kill(name); err != nil {
				log.Printf("fault %s: %v", file, err)
				continue
			}
			w.down[name] = true
			log.Printf("%s killed and kept down by fault %s", name, file)
		case !stopped && w.down[name]:
			c, err := w.sup.restart(name)
			if err != nil {
				log.Printf("starting %s again after its fault: %v", name, err)
				continue
			}
			w.down[name] = false
			log.Printf("%s started again (pid %d): fault %s removed", name, c.cmd.Process.Pid, file)
		}
	}
}
