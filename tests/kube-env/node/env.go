package main

import (
	"context"
	"fmt"
	"net"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/third_party/forked/golang/expansion"
)

// A container's environment and command line, as the kubelet makes them: envFrom first, then
// env in order, each value expanded with $(VAR) against what came before it; then command and
// args expanded against the whole environment. $$ escapes a $, and a reference to a variable
// that is not defined stays as it is (Kubernetes' own expansion code).

// configError is a container whose configuration cannot be made yet (a missing Secret,
// ConfigMap or key that is not optional): the kubelet reports it as CreateContainerConfigError
// and tries again, and so does the stand-in.
type configError struct{ msg string }

func (e *configError) Error() string { return e.msg }

// podFieldValue is the downward API's value of a Pod field (env fieldRef and downwardAPI
// volume items). Beyond metadata (name, namespace, uid, labels, annotations), the kubelet's
// runtime fields: the Node's name, the service account, the Pod's and host's addresses.
func podFieldValue(pod *corev1.Pod, path, podIP, hostIP string) (string, error) {
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP", "status.podIPs":
		return podIP, nil
	case "status.hostIP", "status.hostIPs":
		return hostIP, nil
	}
	v, err := fieldpath.ExtractFieldPathAsString(pod, path)
	if err != nil {
		return "", fmt.Errorf("fieldRef %s: %w", path, err)
	}
	return v, nil
}

// envSource reads what a container's environment refers to.
type envSource struct {
	client         kubernetes.Interface
	pod            *corev1.Pod
	podIP, hostIP  string
	apiServerHost  string
	apiServerPort  string
	secrets        map[string]*corev1.Secret
	configMaps     map[string]*corev1.ConfigMap
	missingSecrets map[string]bool
	missingCMs     map[string]bool
}

func newEnvSource(client kubernetes.Interface, pod *corev1.Pod, podIP, hostIP, apiServer string) *envSource {
	s := &envSource{client: client, pod: pod, podIP: podIP, hostIP: hostIP,
		secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{},
		missingSecrets: map[string]bool{}, missingCMs: map[string]bool{}}
	if host, port, err := net.SplitHostPort(apiServer); err == nil {
		s.apiServerHost, s.apiServerPort = host, port
	}
	return s
}

// secret is the named Secret of the Pod's namespace, nil when it does not exist.
func (s *envSource) secret(ctx context.Context, name string) (*corev1.Secret, error) {
	if sec, ok := s.secrets[name]; ok || s.missingSecrets[name] {
		return sec, nil
	}
	sec, err := s.client.CoreV1().Secrets(s.pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.missingSecrets[name] = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading secret %q: %w", name, err)
	}
	s.secrets[name] = sec
	return sec, nil
}

// configMap is the named ConfigMap of the Pod's namespace, nil when it does not exist.
func (s *envSource) configMap(ctx context.Context, name string) (*corev1.ConfigMap, error) {
	if cm, ok := s.configMaps[name]; ok || s.missingCMs[name] {
		return cm, nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(s.pod.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		s.missingCMs[name] = true
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading configmap %q: %w", name, err)
	}
	s.configMaps[name] = cm
	return cm, nil
}

// serviceEnv is what the kubelet always gives a container about the API server: the
// `kubernetes` Service's host and port, which in-cluster clients read. There is no kube-proxy
// here for the Service's cluster IP, so they name the API server's real address, where
// kube-proxy would have sent the connections. The other Services' variables
// (enableServiceLinks) are not given.
func (s *envSource) serviceEnv() []envVar {
	if s.apiServerHost == "" {
		return nil
	}
	hostPort := net.JoinHostPort(s.apiServerHost, s.apiServerPort)
	return []envVar{
		{"KUBERNETES_SERVICE_HOST", s.apiServerHost},
		{"KUBERNETES_SERVICE_PORT", s.apiServerPort},
		{"KUBERNETES_SERVICE_PORT_HTTPS", s.apiServerPort},
		{"KUBERNETES_PORT", "tcp://" + hostPort},
		{"KUBERNETES_PORT_" + s.apiServerPort + "_TCP", "tcp://" + hostPort},
		{"KUBERNETES_PORT_" + s.apiServerPort + "_TCP_PROTO", "tcp"},
		{"KUBERNETES_PORT_" + s.apiServerPort + "_TCP_PORT", s.apiServerPort},
		{"KUBERNETES_PORT_" + s.apiServerPort + "_TCP_ADDR", s.apiServerHost},
	}
}

type envVar struct{ name, value string }

// containerEnv is c's environment in the kubelet's order: the image's (base, for a rootfs
// image), the API server's, envFrom, env. A later variable of the same name replaces an
// earlier one in place.
func (s *envSource) containerEnv(ctx context.Context, c corev1.Container, base []string) ([]envVar, error) {
	var out []envVar
	index := map[string]int{}
	set := func(name, value string) {
		if i, ok := index[name]; ok {
			out[i].value = value
			return
		}
		index[name] = len(out)
		out = append(out, envVar{name, value})
	}
	for _, kv := range base {
		name, value, _ := cutEnv(kv)
		set(name, value)
	}
	for _, v := range s.serviceEnv() {
		set(v.name, v.value)
	}
	for i, from := range c.EnvFrom {
		data, err := s.envFromData(ctx, from)
		if err != nil {
			return nil, fmt.Errorf("envFrom[%d]: %w", i, err)
		}
		keys := make([]string, 0, len(data))
		for k := range data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			set(from.Prefix+k, data[k])
		}
	}
	vars := map[string]string{}
	for _, v := range out {
		vars[v.name] = v.value
	}
	for i, e := range c.Env {
		var value string
		switch {
		case e.ValueFrom == nil:
			value = expansion.Expand(e.Value, expansion.MappingFuncFor(vars))
		default:
			v, ok, err := s.envValueFrom(ctx, e.ValueFrom)
			if err != nil {
				return nil, fmt.Errorf("env[%d] (%s): %w", i, e.Name, err)
			}
			if !ok {
				continue // an optional key or object that does not exist: no variable
			}
			value = v
		}
		vars[e.Name] = value
		set(e.Name, value)
	}
	return out, nil
}

func cutEnv(kv string) (string, string, bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}

func (s *envSource) envFromData(ctx context.Context, from corev1.EnvFromSource) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		cm, err := s.configMap(ctx, from.ConfigMapRef.Name)
		if err != nil {
			return nil, err
		}
		if cm == nil {
			if ptrTrue(from.ConfigMapRef.Optional) {
				return nil, nil
			}
			return nil, &configError{fmt.Sprintf("configmap %q not found", from.ConfigMapRef.Name)}
		}
		return cm.Data, nil
	case from.SecretRef != nil:
		sec, err := s.secret(ctx, from.SecretRef.Name)
		if err != nil {
			return nil, err
		}
		if sec == nil {
			if ptrTrue(from.SecretRef.Optional) {
				return nil, nil
			}
			return nil, &configError{fmt.Sprintf("secret %q not found", from.SecretRef.Name)}
		}
		data := map[string]string{}
		for k, v := range sec.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

// envValueFrom is the value of a valueFrom; ok is false for an optional key or object that
// does not exist.
func (s *envSource) envValueFrom(ctx context.Context, from *corev1.EnvVarSource) (value string, ok bool, err error) {
	switch {
	case from.FieldRef != nil:
		v, err := podFieldValue(s.pod, from.FieldRef.FieldPath, s.podIP, s.hostIP)
		return v, err == nil, err
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		sec, err := s.secret(ctx, ref.Name)
		if err != nil {
			return "", false, err
		}
		if sec == nil {
			if ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, &configError{fmt.Sprintf("secret %q not found", ref.Name)}
		}
		v, found := sec.Data[ref.Key]
		if !found {
			if ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, &configError{fmt.Sprintf("couldn't find key %s in Secret %s/%s", ref.Key, s.pod.Namespace, ref.Name)}
		}
		return string(v), true, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := s.configMap(ctx, ref.Name)
		if err != nil {
			return "", false, err
		}
		if cm == nil {
			if ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, &configError{fmt.Sprintf("configmap %q not found", ref.Name)}
		}
		v, found := cm.Data[ref.Key]
		if !found {
			if ptrTrue(ref.Optional) {
				return "", false, nil
			}
			return "", false, &configError{fmt.Sprintf("couldn't find key %s in ConfigMap %s/%s", ref.Key, s.pod.Namespace, ref.Name)}
		}
		return v, true, nil
	}
	// resourceFieldRef and fileKeyRef are refused before a Pod runs (refusals.go).
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// expandArgs is a command line with $(VAR) expanded against env.
func expandArgs(args []string, env []envVar) []string {
	vars := make(map[string]string, len(env))
	for _, v := range env {
		vars[v.name] = v.value
	}
	mapping := expansion.MappingFuncFor(vars)
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expansion.Expand(a, mapping)
	}
	return out
}

func environ(env []envVar) []string {
	out := make([]string, len(env))
	for i, v := range env {
		out[i] = v.name + "=" + v.value
	}
	return out
}

func ptrTrue(b *bool) bool { return b != nil && *b }
