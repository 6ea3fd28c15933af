package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// The management cluster's Service routing, a stand-in for kube-proxy, a cloud's load
// balancer controller and cluster DNS, none of which can run here: kube-proxy programs
// iptables or nftables rules for a pod network this machine does not have, a load balancer
// needs a cloud, and CoreDNS needs Pods to point their resolver at it.
//
//   - Routing (`capw-node proxy`): the Services' ClusterIPs and the load balancers' addresses
//     are made local to this machine (a `local` route for each range on the loopback device,
//     as the Pods' range is), and the proxy listens on every ClusterIP:port and load balancer
//     address:port of a TCP Service port and forwards each connection to a ready endpoint of
//     the Service's EndpointSlices, as kube-proxy's old userspace mode did. That is endpoint
//     routing, not a per-node trick: what the endpointslice controller of the real
//     kube-controller-manager publishes is what a connection reaches, readiness included.
//   - Load balancers: a Service of type LoadBalancer is given the lowest free address of
//     --load-balancer-cidr in status.loadBalancer.ingress (as MetalLB or k3s's ServiceLB give
//     one of theirs) and is reached there from the whole machine: the host, the workers.
//   - Names (serviceDirectory): each Pod's hosts file (pods' etc-hosts, bind-mounted on
//     /etc/hosts) lists the Services as cluster DNS would answer them — `name.ns.svc` and
//     `name.ns.svc.cluster.local` (and `name`, `name.ns` for the names a search path would
//     complete) to the ClusterIP, a headless Service's names to its endpoints, and a
//     StatefulSet Pod's `hostname.service.ns.svc` to its address. Outside the Pods nothing
//     resolves these names: the host and the workers reach a control plane at its load
//     balancer's address.
//
// UDP Service ports, session affinity, externalTrafficPolicy, NodePorts and topology hints are
// not routed; a Service asking for them is routed for its TCP ports only.

// serviceProxySync is how often the proxy compares its listeners with the Services even
// without an event.
const serviceProxySync = 5 * time.Second

// serviceDialTimeout bounds one connection attempt to an endpoint.
const serviceDialTimeout = 2 * time.Second

func runProxy(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("proxy", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig of the management cluster")
	serviceCIDR := fs.String("service-cidr", "", "the API server's --service-cluster-ip-range")
	lbCIDR := fs.String("load-balancer-cidr", "", "the addresses given to LoadBalancer Services")
	_ = fs.Parse(args)
	if *kubeconfig == "" || *serviceCIDR == "" || *lbCIDR == "" {
		fmt.Fprintln(os.Stderr, "capw-node proxy: --kubeconfig, --service-cidr and --load-balancer-cidr are required")
		return 2
	}
	lb, err := netip.ParsePrefix(*lbCIDR)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node proxy: --load-balancer-cidr %q: %v\n", *lbCIDR, err)
		return 2
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node proxy: %v\n", err)
		return 1
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "capw-node proxy: %v\n", err)
		return 1
	}
	for _, cidr := range []string{*serviceCIDR, lb.Masked().String()} {
		if err := localRoute("replace", cidr); err != nil {
			fmt.Fprintf(os.Stderr, "capw-node proxy: %v\n", err)
			return 1
		}
		defer func() {
			if err := localRoute("del", cidr); err != nil {
				log.Printf("proxy: %v", err)
			}
		}()
	}
	p := newServiceProxy(client, lb.Masked())
	p.run(ctx)
	return 0
}

// localRoute adds ("replace") or removes ("del") a `local` route for cidr on the loopback
// device: every address of cidr is then this machine's own, so a process can listen on any
// of them and every process here can reach it.
func localRoute(op, cidr string) error {
	out, err := exec.Command("ip", "route", op, "local", cidr, "dev", "lo").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip route %s local %s dev lo: %v: %s", op, cidr, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// serviceIndex reads Services and EndpointSlices from informers' caches.
type serviceIndex struct {
	services corelisters.ServiceLister
	slices   discoverylisters.EndpointSliceLister
}

// startServiceIndex starts informers on every namespace's Services and EndpointSlices and
// waits for their first list; onChange, when given, runs after each event.
func startServiceIndex(ctx context.Context, client kubernetes.Interface, onChange func()) (*serviceIndex, error) {
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	services := factory.Core().V1().Services()
	endpointSlices := factory.Discovery().V1().EndpointSlices()
	if onChange != nil {
		handler := cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { onChange() },
			UpdateFunc: func(any, any) { onChange() },
			DeleteFunc: func(any) { onChange() },
		}
		for _, i := range []cache.SharedIndexInformer{services.Informer(), endpointSlices.Informer()} {
			if _, err := i.AddEventHandler(handler); err != nil {
				return nil, err
			}
		}
	} else {
		services.Informer()
		endpointSlices.Informer()
	}
	factory.Start(ctx.Done())
	for informer, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return nil, fmt.Errorf("the cache of %v did not sync", informer)
		}
	}
	return &serviceIndex{services: services.Lister(), slices: endpointSlices.Lister()}, nil
}

// endpoints are the addresses of svc's EndpointSlices that serve the Service port named
// portName, as host:port; only ready ones unless the Service publishes not-ready addresses.
func (x *serviceIndex) endpoints(svc *corev1.Service, portName string) []string {
	selector := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name})
	list, err := x.slices.EndpointSlices(svc.Namespace).List(selector)
	if err != nil {
		return nil
	}
	var out []string
	for _, slice := range list {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		port := int32(0)
		for _, p := range slice.Ports {
			if p.Port != nil && ptr.Deref(p.Name, "") == portName && (p.Protocol == nil || *p.Protocol == corev1.ProtocolTCP) {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range slice.Endpoints {
			if !serves(svc, e) {
				continue
			}
			for _, a := range e.Addresses {
				out = append(out, net.JoinHostPort(a, strconv.Itoa(int(port))))
			}
		}
	}
	sort.Strings(out)
	return out
}

// serves reports whether endpoint e takes svc's traffic: ready, or the Service publishes
// addresses that are not.
func serves(svc *corev1.Service, e discoveryv1.Endpoint) bool {
	return svc.Spec.PublishNotReadyAddresses || e.Conditions.Ready == nil || *e.Conditions.Ready
}

// hosts are the hosts-file lines that name the management cluster's Services for pod, as
// cluster DNS would answer them (see the comment at the top of this file), sorted so that an
// unchanged cluster gives the same file.
func (x *serviceIndex) hosts(pod *corev1.Pod) []string {
	services, err := x.services.List(labels.Everything())
	if err != nil {
		return nil
	}
	var lines []string
	for _, svc := range services {
		names := serviceNames(svc, pod.Namespace)
		if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
			lines = append(lines, ip+" "+strings.Join(names, " "))
			continue
		}
		// Headless: the Service's names are its endpoints' addresses; an endpoint with a
		// hostname (a StatefulSet's Pod) has a name of its own.
		list, err := x.slices.EndpointSlices(svc.Namespace).List(
			labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: svc.Name}))
		if err != nil {
			continue
		}
		for _, slice := range list {
			for _, e := range slice.Endpoints {
				if !serves(svc, e) || len(e.Addresses) == 0 {
					continue
				}
				lines = append(lines, e.Addresses[0]+" "+strings.Join(names, " "))
				if e.Hostname != nil && *e.Hostname != "" {
					own := *e.Hostname + "." + svc.Name + "." + svc.Namespace + ".svc"
					lines = append(lines, e.Addresses[0]+" "+own+" "+own+".cluster.local")
				}
			}
		}
	}
	if pod.Spec.Subdomain != "" && pod.Status.PodIP != "" {
		hostname := pod.Spec.Hostname
		if hostname == "" {
			hostname = pod.Name
		}
		lines = append(lines, pod.Status.PodIP+" "+hostname+"."+pod.Spec.Subdomain+"."+pod.Namespace+".svc")
	}
	sort.Strings(lines)
	return slices.Compact(lines)
}

// serviceNames are the names svc answers to from a Pod in namespace: the full ones, and the
// short ones a search path would complete.
func serviceNames(svc *corev1.Service, namespace string) []string {
	full := svc.Name + "." + svc.Namespace + ".svc"
	names := []string{full, full + ".cluster.local", svc.Name + "." + svc.Namespace}
	if svc.Namespace == namespace {
		names = append(names, svc.Name)
	}
	return names
}

// serviceProxy listens where the Services are reached and forwards to their endpoints.
type serviceProxy struct {
	client  kubernetes.Interface
	lbCIDR  netip.Prefix
	index   *serviceIndex
	changed chan struct{}

	mu        sync.Mutex
	listeners map[string]*serviceListener // by listen address
}

// serviceListener is one listen address of one Service port.
type serviceListener struct {
	service  types.NamespacedName
	portName string
	ln       net.Listener
}

func newServiceProxy(client kubernetes.Interface, lbCIDR netip.Prefix) *serviceProxy {
	return &serviceProxy{
		client:    client,
		lbCIDR:    lbCIDR,
		changed:   make(chan struct{}, 1),
		listeners: map[string]*serviceListener{},
	}
}

func (p *serviceProxy) run(ctx context.Context) {
	for {
		index, err := startServiceIndex(ctx, p.client, p.poke)
		if err == nil {
			p.index = index
			break
		}
		if ctx.Err() != nil {
			return
		}
		log.Printf("proxy: %v", err)
		time.Sleep(time.Second)
	}
	log.Printf("proxy: routing the Services; load balancers from %s", p.lbCIDR)
	tick := time.NewTicker(serviceProxySync)
	defer tick.Stop()
	for {
		p.sync(ctx)
		select {
		case <-ctx.Done():
			p.closeAll()
			return
		case <-p.changed:
		case <-tick.C:
		}
	}
}

func (p *serviceProxy) poke() {
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// sync gives LoadBalancer Services their addresses and makes the listeners match the
// Services' ports.
func (p *serviceProxy) sync(ctx context.Context) {
	services, err := p.index.services.List(labels.Everything())
	if err != nil {
		log.Printf("proxy: listing Services: %v", err)
		return
	}
	used := map[netip.Addr]bool{}
	for _, svc := range services {
		for _, a := range loadBalancerIPs(svc) {
			used[a] = true
		}
	}
	want := map[string]*serviceListener{}
	for _, svc := range services {
		key := types.NamespacedName{Namespace: svc.Namespace, Name: svc.Name}
		var addresses []string
		if ip := svc.Spec.ClusterIP; ip != "" && ip != corev1.ClusterIPNone {
			addresses = append(addresses, ip)
		}
		if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
			ips := loadBalancerIPs(svc)
			if len(ips) == 0 {
				ip, err := p.assign(ctx, svc, used)
				if err != nil {
					log.Printf("proxy: Service %s: %v", key, err)
				} else {
					ips = []netip.Addr{ip}
				}
			}
			for _, ip := range ips {
				if p.lbCIDR.Contains(ip) {
					addresses = append(addresses, ip.String())
				}
			}
		}
		for _, port := range svc.Spec.Ports {
			if port.Protocol != "" && port.Protocol != corev1.ProtocolTCP {
				continue
			}
			for _, a := range addresses {
				addr := net.JoinHostPort(a, strconv.Itoa(int(port.Port)))
				want[addr] = &serviceListener{service: key, portName: port.Name}
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		if w, ok := want[addr]; !ok || w.service != l.service || w.portName != l.portName {
			_ = l.ln.Close()
			delete(p.listeners, addr)
			log.Printf("proxy: %s no longer routed (Service %s)", addr, l.service)
		}
	}
	for addr, w := range want {
		if _, ok := p.listeners[addr]; ok {
			continue
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			log.Printf("proxy: Service %s: listening on %s: %v", w.service, addr, err)
			continue
		}
		w.ln = ln
		p.listeners[addr] = w
		go p.serve(w)
		log.Printf("proxy: %s routes to Service %s port %q", addr, w.service, w.portName)
	}
}

// loadBalancerIPs are the IP addresses of svc's status.loadBalancer.ingress.
func loadBalancerIPs(svc *corev1.Service) []netip.Addr {
	var out []netip.Addr
	for _, i := range svc.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(i.IP); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// assign gives svc the lowest address of the load balancers' range not in used and writes it
// into its status.
func (p *serviceProxy) assign(ctx context.Context, svc *corev1.Service, used map[netip.Addr]bool) (netip.Addr, error) {
	ip := p.lbCIDR.Addr().Next()
	for ; p.lbCIDR.Contains(ip) && used[ip]; ip = ip.Next() {
	}
	if !p.lbCIDR.Contains(ip) {
		return netip.Addr{}, fmt.Errorf("no free load balancer address in %s", p.lbCIDR)
	}
	updated := svc.DeepCopy()
	updated.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{
		IP:     ip.String(),
		IPMode: ptr.To(corev1.LoadBalancerIPModeVIP),
	}}
	if _, err := p.client.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err != nil {
		return netip.Addr{}, fmt.Errorf("writing its load balancer address %s: %w", ip, err)
	}
	used[ip] = true
	log.Printf("proxy: Service %s/%s: load balancer address %s", svc.Namespace, svc.Name, ip)
	return ip, nil
}

// serve accepts on l until it is closed, forwarding each connection to an endpoint.
func (p *serviceProxy) serve(l *serviceListener) {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(conn, l)
	}
}

// forward connects conn to a ready endpoint of l's Service port, trying them in random
// order; with none reachable the connection is closed, as a Service without endpoints
// refuses.
func (p *serviceProxy) forward(conn net.Conn, l *serviceListener) {
	defer conn.Close()
	svc, err := p.index.services.Services(l.service.Namespace).Get(l.service.Name)
	if err != nil {
		return
	}
	backends := p.index.endpoints(svc, l.portName)
	rand.Shuffle(len(backends), func(i, j int) { backends[i], backends[j] = backends[j], backends[i] })
	for _, b := range backends {
		upstream, err := net.DialTimeout("tcp", b, serviceDialTimeout)
		if err != nil {
			continue
		}
		splice(conn, upstream)
		return
	}
}

// splice copies both ways between a and b until both directions end.
func splice(a, b net.Conn) {
	defer b.Close()
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}

func (p *serviceProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for addr, l := range p.listeners {
		_ = l.ln.Close()
		delete(p.listeners, addr)
	}
}
