// Command etcd is etcd's own server command (go.etcd.io/etcd/server/v3/etcdmain) built from
// this module, so it is the etcd release this Kubernetes version builds against and every
// etcd flag works: TLS, --initial-cluster, --initial-cluster-state existing, and so on.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
