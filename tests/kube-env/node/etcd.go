package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// etcdClient connects to endpoints with the API server's etcd client certificate, as kubeadm
// does for membership changes.
func etcdClient(pkiDir string, endpoints []string) (*clientv3.Client, error) {
	tlsInfo := transport.TLSInfo{
		CertFile:      pkiDir + "/apiserver-etcd-client.crt",
		KeyFile:       pkiDir + "/apiserver-etcd-client.key",
		TrustedCAFile: pkiDir + "/etcd/ca.crt",
	}
	tlsConfig, err := tlsInfo.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the etcd client certificate from %s: %w", pkiDir, err)
	}
	return clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		TLS:         tlsConfig,
		Logger:      zap.NewNop(),
	})
}

// addEtcdMember adds this machine as a member of the cluster reached through endpoints and
// returns the members --initial-cluster must name. A member already registered with this
// machine's peer URL (an agent restarted after member add) is not added twice.
func addEtcdMember(ctx context.Context, m machine, endpoints []string) ([]etcdMember, error) {
	cli, err := etcdClient(m.pkiDir(), endpoints)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		members, err := addOrFindMember(ctx, cli, m)
		if err == nil {
			return members, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("adding etcd member %s (%s) through %s: %w", m.Name, m.etcdPeerURL(), strings.Join(endpoints, ","), err)
		}
		time.Sleep(2 * time.Second)
	}
}

func addOrFindMember(ctx context.Context, cli *clientv3.Client, m machine) ([]etcdMember, error) {
	reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(reqCtx)
	if err != nil {
		return nil, err
	}
	for _, mem := range list.Members {
		if hasURL(mem.PeerURLs, m.etcdPeerURL()) {
			return membersOf(list.Members, m), nil
		}
	}
	resp, err := cli.MemberAdd(reqCtx, []string{m.etcdPeerURL()})
	if err != nil {
		return nil, err
	}
	return membersOf(resp.Members, m), nil
}

type memberLike interface {
	GetName() string
	GetPeerURLs() []string
}

func membersOf[M memberLike](members []M, m machine) []etcdMember {
	var out []etcdMember
	for _, mem := range members {
		name := mem.GetName()
		if hasURL(mem.GetPeerURLs(), m.etcdPeerURL()) {
			name = m.Name // the new member has no name until it starts
		}
		for _, u := range mem.GetPeerURLs() {
			out = append(out, etcdMember{Name: name, PeerURL: u})
		}
	}
	return out
}

func hasURL(urls []string, want string) bool {
	for _, u := range urls {
		if u == want {
			return true
		}
	}
	return false
}

// etcdClientURLs are the client URLs of the cluster's members, for the state file.
func etcdClientURLs(ctx context.Context, m machine, endpoints []string) ([]string, error) {
	cli, err := etcdClient(m.pkiDir(), endpoints)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list, err := cli.MemberList(reqCtx)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, mem := range list.Members {
		urls = append(urls, mem.ClientURLs...)
	}
	return urls, nil
}

// removeEtcdMember removes the member named name or with peerURL, trying each endpoint in
// turn until one answers. A member already gone is not an error.
func removeEtcdMember(ctx context.Context, pkiDir, name, peerURL string, endpoints []string) error {
	var errs []string
	for _, ep := range endpoints {
		err := removeThrough(ctx, pkiDir, name, peerURL, ep)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Sprintf("%s: %v", ep, err))
	}
	return fmt.Errorf("removing etcd member %s (%s): no member answered: %s", name, peerURL, strings.Join(errs, "; "))
}

func removeThrough(ctx context.Context, pkiDir, name, peerURL, endpoint string) error {
	cli, err := etcdClient(pkiDir, []string{endpoint})
	if err != nil {
		return err
	}
	defer cli.Close()
	reqCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := cli.MemberList(reqCtx)
	if err != nil {
		return err
	}
	for _, mem := range list.Members {
		if (name != "" && mem.Name == name) || hasURL(mem.PeerURLs, peerURL) {
			if len(list.Members) == 1 {
				// The last member: the cluster goes with it, as kubeadm reset leaves it.
				return nil
			}
			_, err := cli.MemberRemove(reqCtx, mem.ID)
			return err
		}
	}
	return nil
}

// etcdEndpointsFromAPIServers are the client URLs of the stacked etcd members beside the
// control plane's API servers (the addresses of the `kubernetes` Service's endpoints).
func etcdEndpointsFromAddresses(addrs []string) []string {
	var out []string
	for _, a := range addrs {
		out = append(out, (&url.URL{Scheme: "https", Host: net.JoinHostPort(a, "2379")}).String())
	}
	return out
}
