package main

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the process kubelet stand-in does with each part of a Pod it runs. Every field is
// honoured, refused or ignored; a refused field keeps the Pod Pending with each container
// waiting with the reason FieldNotSupported and a message naming the field, and the Pod's
// Ready and ContainersReady conditions saying so. Nothing is dropped silently.
//
// Honoured:
//   - containers, initContainers (run to completion in order), sidecars (init containers with
//     restartPolicy Always, kept running), command, args, workingDir, image (through the image
//     table: images.go), restartPolicy Always/OnFailure/Never, terminationGracePeriodSeconds
//     and the deletion's grace period.
//   - env value with $(VAR) expansion, valueFrom fieldRef (metadata.name, namespace, uid,
//     labels['…'], annotations['…'], spec.nodeName, spec.serviceAccountName, status.podIP(s),
//     status.hostIP(s)), secretKeyRef, configMapKeyRef (optional too), envFrom (prefix,
//     optional); the `kubernetes` Service's variables, naming the API server (env.go).
//   - volumes secret, configMap (items, defaultMode, optional), emptyDir (mode 0777, as the
//     kubelet makes it), projected
//     (serviceAccountToken, configMap, secret, downwardAPI), downwardAPI,
//     persistentVolumeClaim (local or hostPath PersistentVolumes); the service account token
//     volume the admission plugin adds. volumeMounts mountPath, subPath, subPathExpr, readOnly.
//   - securityContext runAsUser, runAsGroup, runAsNonRoot (refused to start as uid 0, as the
//     kubelet does), supplementalGroups, fsGroup (added to the groups and given the volumes'
//     files).
//   - probes startup, readiness, liveness with httpGet, tcpSocket and exec and all their
//     timings; readinessGates.
//   - hostNetwork (the Pod gets the Node's address), hostname, subdomain, hostAliases (the
//     hosts file: hosts.go); the container's hostname is the Pod's (its own UTS namespace).
//   - ports with hostPort on a host-network Pod (the port is the Node's anyway).
//
// Refused:
//   - volumes of any other kind (hostPath, csi, ephemeral, image, nfs, …), volumeDevices,
//     projected clusterTrustBundle and podCertificate sources.
//   - ports with hostPort on a Pod of its own address: nothing forwards the Node's port.
//   - lifecycle hooks (postStart, preStop) and grpc probes: not implemented.
//   - env valueFrom resourceFieldRef and fileKeyRef, downwardAPI resourceFieldRef items, and
//     fieldRef paths other than those above: not implemented.
//   - hostUsers false (user namespaces) and securityContext.windowsOptions: isolation the
//     stand-in does not give.
//   - mountPropagation other than None: mounts are private to each container.
//
// Ignored, because they change nothing here:
//   - resources requests (the scheduler's business) and limits: not enforced, there are no
//     cgroups; processes use what they use.
//   - imagePullPolicy, imagePullSecrets: nothing is pulled.
//   - nodeSelector, affinity, tolerations, topologySpreadConstraints, priority,
//     schedulerName, schedulingGates, preemptionPolicy, overhead, runtimeClassName, os: the
//     scheduler's and admission's; the Pod is here once bound.
//   - dnsPolicy, dnsConfig, enableServiceLinks, setHostnameAsFQDN: there is no cluster DNS;
//     names reach processes through the hosts file.
//   - hostPID, hostIPC, shareProcessNamespace: processes share the machine's PID and IPC
//     namespaces whatever the Pod asks. A non-host-network Pod shares the machine's network
//     namespace too, and is reached on its own address through the local route of the pod
//     CIDR (kubelet_command.go).
//   - securityContext privileged, capabilities, seccompProfile, appArmorProfile, seLinuxOptions,
//     readOnlyRootFilesystem, allowPrivilegeEscalation, procMount, sysctls: no sandbox is made;
//     a process runs with the powers of its user.
//   - stdin, stdinOnce, tty, terminationMessagePath, terminationMessagePolicy, resizePolicy,
//     ephemeralContainers (never run: there is no kubelet API to attach them through).
//   - emptyDir medium Memory and sizeLimit: a directory on disk.

// fieldNotSupported is the waiting reason of the containers of a Pod that asks for something
// the stand-in refuses.
const fieldNotSupported = "FieldNotSupported"

// refusals lists what pod asks for that the stand-in refuses, one message per field, each
// naming the field by its path in the Pod.
func refusals(pod *corev1.Pod) []string {
	var out []string
	refuse := func(field, why string) { out = append(out, field+": "+why) }
	spec := &pod.Spec
	if spec.HostUsers != nil && !*spec.HostUsers {
		refuse("spec.hostUsers", "user namespaces are not made by the kubelet stand-in")
	}
	if spec.SecurityContext != nil && spec.SecurityContext.WindowsOptions != nil {
		refuse("spec.securityContext.windowsOptions", "not a Windows node")
	}
	for i, v := range spec.Volumes {
		field := fmt.Sprintf("spec.volumes[%d] (%s)", i, v.Name)
		switch {
		case v.Secret != nil, v.ConfigMap != nil, v.EmptyDir != nil, v.PersistentVolumeClaim != nil:
		case v.DownwardAPI != nil:
			refuseResourceItems(field+".downwardAPI", v.DownwardAPI.Items, refuse)
		case v.Projected != nil:
			for j, s := range v.Projected.Sources {
				if s.ClusterTrustBundle != nil || s.PodCertificate != nil {
					refuse(fmt.Sprintf("%s.projected.sources[%d]", field, j), "only serviceAccountToken, secret, configMap and downwardAPI sources are projected by the kubelet stand-in")
				}
				if s.DownwardAPI != nil {
					refuseResourceItems(fmt.Sprintf("%s.projected.sources[%d].downwardAPI", field, j), s.DownwardAPI.Items, refuse)
				}
			}
		default:
			refuse(field, "only secret, configMap, emptyDir, projected, downwardAPI and persistentVolumeClaim volumes are made by the kubelet stand-in")
		}
	}
	check := func(kind string, i int, c corev1.Container) {
		field := fmt.Sprintf("spec.%s[%d] (%s)", kind, i, c.Name)
		for j, p := range c.Ports {
			if p.HostPort != 0 && !spec.HostNetwork {
				refuse(fmt.Sprintf("%s.ports[%d].hostPort", field, j), "nothing forwards the Node's ports to a Pod's address")
			}
		}
		if c.Lifecycle != nil && (c.Lifecycle.PostStart != nil || c.Lifecycle.PreStop != nil) {
			refuse(field+".lifecycle", "lifecycle hooks are not run by the kubelet stand-in")
		}
		for name, p := range map[string]*corev1.Probe{"startupProbe": c.StartupProbe, "readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
			if p != nil && p.GRPC != nil {
				refuse(field+"."+name+".grpc", "grpc probes are not run by the kubelet stand-in")
			}
		}
		for j, e := range c.Env {
			if e.ValueFrom != nil && (e.ValueFrom.ResourceFieldRef != nil || e.ValueFrom.FileKeyRef != nil) {
				refuse(fmt.Sprintf("%s.env[%d] (%s).valueFrom", field, j, e.Name), "only fieldRef, secretKeyRef and configMapKeyRef are resolved by the kubelet stand-in")
			}
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && !downwardField(e.ValueFrom.FieldRef.FieldPath) {
				refuse(fmt.Sprintf("%s.env[%d] (%s).valueFrom.fieldRef", field, j, e.Name), fmt.Sprintf("field %q is not given by the kubelet stand-in", e.ValueFrom.FieldRef.FieldPath))
			}
		}
		if len(c.VolumeDevices) > 0 {
			refuse(field+".volumeDevices", "block devices are not attached by the kubelet stand-in")
		}
		for j, m := range c.VolumeMounts {
			if m.MountPropagation != nil && *m.MountPropagation != corev1.MountPropagationNone {
				refuse(fmt.Sprintf("%s.volumeMounts[%d].mountPropagation", field, j), "mounts are private to each container")
			}
		}
		if c.SecurityContext != nil && c.SecurityContext.WindowsOptions != nil {
			refuse(field+".securityContext.windowsOptions", "not a Windows node")
		}
	}
	for i, c := range spec.InitContainers {
		check("initContainers", i, c)
	}
	for i, c := range spec.Containers {
		check("containers", i, c)
	}
	return out
}

// refuseResourceItems refuses the downward API items that are not a field the stand-in gives
// (resourceFieldRef items, unknown field paths).
func refuseResourceItems(field string, items []corev1.DownwardAPIVolumeFile, refuse func(field, why string)) {
	for i, item := range items {
		switch {
		case item.ResourceFieldRef != nil:
			refuse(fmt.Sprintf("%s.items[%d].resourceFieldRef", field, i), "resource fields are not written by the kubelet stand-in")
		case item.FieldRef != nil && !downwardField(item.FieldRef.FieldPath):
			refuse(fmt.Sprintf("%s.items[%d].fieldRef", field, i), fmt.Sprintf("field %q is not given by the kubelet stand-in", item.FieldRef.FieldPath))
		}
	}
}

// downwardField reports whether the downward API field path is one the stand-in gives.
func downwardField(path string) bool {
	switch path {
	case "metadata.name", "metadata.namespace", "metadata.uid", "metadata.labels", "metadata.annotations",
		"spec.nodeName", "spec.serviceAccountName", "status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs":
		return true
	}
	return strings.HasPrefix(path, "metadata.labels[") || strings.HasPrefix(path, "metadata.annotations[")
}
