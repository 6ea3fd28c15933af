package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// extraHosts gives lines to add to every Pod's hosts file ("ADDRESS NAME..."), for names the
// stand-in's machine has no DNS for. None by default.
var extraHosts = func(pod *corev1.Pod) []string { return nil }

// podHostname is the Pod's hostname as the kubelet gives it: spec.hostname, else its name
// (truncated to 63 characters).
func podHostname(pod *corev1.Pod) string {
	name := pod.Spec.Hostname
	if name == "" {
		name = pod.Name
	}
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-.")
	}
	return name
}

// hostsFile is the Pod's /etc/hosts as the kubelet writes it (its managed hosts file): the
// localhost lines, the Pod's address with its hostname (and its fully qualified name in
// subdomain.namespace.svc.cluster.local when spec.subdomain is set), spec.hostAliases, then
// extraHosts' lines.
func hostsFile(pod *corev1.Pod, podIP string) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file (the kubelet stand-in's).\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	if podIP != "" {
		hostname := podHostname(pod)
		if pod.Spec.Subdomain != "" {
			fmt.Fprintf(&b, "%s\t%s.%s.%s.svc.cluster.local\t%s\n", podIP, hostname, pod.Spec.Subdomain, pod.Namespace, hostname)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", podIP, hostname)
		}
	}
	if len(pod.Spec.HostAliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range pod.Spec.HostAliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.IP, strings.Join(a.Hostnames, "\t"))
		}
	}
	if extra := extraHosts(pod); len(extra) > 0 {
		b.WriteString("\n# Entries added by the kubelet stand-in.\n")
		for _, line := range extra {
			b.WriteString(strings.TrimRight(line, "\n") + "\n")
		}
	}
	return b.Bytes()
}

// writeHostsFile writes the Pod's hosts file at path when its content changed, in place (the
// file is bind-mounted on the containers' /etc/hosts: a rename would leave them the old one).
func writeHostsFile(path string, content []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, content, 0o644)
}
