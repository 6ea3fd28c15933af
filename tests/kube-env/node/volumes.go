package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubernetes/pkg/fieldpath"
	"k8s.io/kubernetes/pkg/volume/configmap"
	"k8s.io/kubernetes/pkg/volume/secret"
	volumeutil "k8s.io/kubernetes/pkg/volume/util"
	"k8s.io/utils/ptr"
)

// A Pod's volumes, made as the kubelet makes them, each a directory under
// DIR/pods/<ns>_<name>_<uid>/volumes/<volume> (a claim's is its PersistentVolume's directory,
// DIR/volumes/<pv>, which outlives the Pod). Secret, configMap, downwardAPI and projected
// volumes are written with the kubelet's own atomic writer (the ..data symlink swap), so a
// process that reads them while they are refreshed sees the old files or the new ones. The
// containers get them through bind mounts (container_exec.go).

// defaultTokenExpiration is a serviceAccountToken projection's expiry when it gives none, the
// API's default.
const defaultTokenExpiration = time.Hour

// volumeMaker writes one Pod's volumes.
type volumeMaker struct {
	client        kubernetes.Interface
	pod           *corev1.Pod
	podDir        string
	podIP, hostIP string
	now           func() time.Time
}

// volumeSet is what a Pod's volumes are once made: the directory of each, and when the
// projected service account tokens among them are to be requested again.
type volumeSet struct {
	dirs map[string]string
	// refreshAt is when the earliest token reaches 80% of its lifetime (the kubelet's rule);
	// zero when no volume holds a token.
	refreshAt time.Time
}

func (m *volumeMaker) volumeDir(name string) string {
	return filepath.Join(m.podDir, "volumes", name)
}

// fsGroup is the Pod's securityContext.fsGroup, or nil.
func fsGroup(pod *corev1.Pod) *int64 {
	if pod.Spec.SecurityContext == nil {
		return nil
	}
	return pod.Spec.SecurityContext.FSGroup
}

// make writes every volume of the Pod. A claim is looked up through claimDir. Errors are
// configErrors when the Pod refers to something that does not exist (yet).
func (m *volumeMaker) make(ctx context.Context, claimDir func(ctx context.Context, claim string) (string, error)) (volumeSet, error) {
	set := volumeSet{dirs: map[string]string{}}
	for _, v := range m.pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			dir, err := claimDir(ctx, v.PersistentVolumeClaim.ClaimName)
			if err != nil {
				return set, fmt.Errorf("volume %s: %w", v.Name, err)
			}
			set.dirs[v.Name] = dir
			continue
		}
		dir := m.volumeDir(v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return set, err
		}
		refreshAt, err := m.write(ctx, v, dir)
		if err != nil {
			return set, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if !refreshAt.IsZero() && (set.refreshAt.IsZero() || refreshAt.Before(set.refreshAt)) {
			set.refreshAt = refreshAt
		}
		set.dirs[v.Name] = dir
	}
	return set, nil
}

// refreshTokens writes again the projected volumes that hold a service account token; it is
// make without the volumes that do not change.
func (m *volumeMaker) refreshTokens(ctx context.Context) (time.Time, error) {
	var next time.Time
	for _, v := range m.pod.Spec.Volumes {
		if v.Projected == nil {
			continue
		}
		refreshAt, err := m.write(ctx, v, m.volumeDir(v.Name))
		if err != nil {
			return time.Time{}, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if !refreshAt.IsZero() && (next.IsZero() || refreshAt.Before(next)) {
			next = refreshAt
		}
	}
	return next, nil
}

// write makes volume v in dir; refreshAt is when a token it holds needs renewing.
func (m *volumeMaker) write(ctx context.Context, v corev1.Volume, dir string) (refreshAt time.Time, err error) {
	switch {
	case v.EmptyDir != nil:
		// World-writable, as the kubelet makes it (whatever the umask): a container that runs
		// as a user of its own, with no fsGroup, writes there all the same.
		if err := os.Chmod(dir, 0o777); err != nil {
			return time.Time{}, err
		}
		if g := fsGroup(m.pod); g != nil {
			return time.Time{}, shareWithGroup(dir, *g, true)
		}
		return time.Time{}, nil
	case v.Secret != nil:
		payload, err := m.secretPayload(ctx, v.Secret.SecretName, v.Secret.Items, v.Secret.DefaultMode, ptrTrue(v.Secret.Optional))
		if err != nil {
			return time.Time{}, err
		}
		return time.Time{}, m.writeAtomically(dir, payload)
	case v.ConfigMap != nil:
		payload, err := m.configMapPayload(ctx, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.DefaultMode, ptrTrue(v.ConfigMap.Optional))
		if err != nil {
			return time.Time{}, err
		}
		return time.Time{}, m.writeAtomically(dir, payload)
	case v.DownwardAPI != nil:
		payload, err := m.downwardPayload(v.DownwardAPI.Items, v.DownwardAPI.DefaultMode)
		if err != nil {
			return time.Time{}, err
		}
		return time.Time{}, m.writeAtomically(dir, payload)
	case v.Projected != nil:
		payload, refreshAt, err := m.projectedPayload(ctx, v.Projected)
		if err != nil {
			return time.Time{}, err
		}
		return refreshAt, m.writeAtomically(dir, payload)
	}
	return time.Time{}, fmt.Errorf("not a volume the kubelet stand-in makes")
}

func (m *volumeMaker) writeAtomically(dir string, payload map[string]volumeutil.FileProjection) error {
	w, err := volumeutil.NewAtomicWriter(dir, m.pod.Namespace+"/"+m.pod.Name)
	if err != nil {
		return err
	}
	var setPerms func(string) error
	if g := fsGroup(m.pod); g != nil {
		setPerms = func(sub string) error { return shareWithGroup(filepath.Join(dir, sub), *g, false) }
	}
	return w.Write(payload, setPerms)
}

func (m *volumeMaker) secretPayload(ctx context.Context, name string, items []corev1.KeyToPath, mode *int32, optional bool) (map[string]volumeutil.FileProjection, error) {
	sec := &corev1.Secret{}
	got, err := newEnvSource(m.client, m.pod, "", "", "").secret(ctx, name)
	if err != nil {
		return nil, err
	}
	if got == nil {
		if !optional {
			return nil, &configError{fmt.Sprintf("secret %q not found", name)}
		}
	} else {
		sec = got
	}
	if mode == nil {
		mode = ptr.To(corev1.SecretVolumeSourceDefaultMode)
	}
	payload, err := secret.MakePayload(items, sec, mode, optional)
	if err != nil {
		return nil, &configError{fmt.Sprintf("secret %q: %v", name, err)}
	}
	return payload, nil
}

func (m *volumeMaker) configMapPayload(ctx context.Context, name string, items []corev1.KeyToPath, mode *int32, optional bool) (map[string]volumeutil.FileProjection, error) {
	cm := &corev1.ConfigMap{}
	got, err := newEnvSource(m.client, m.pod, "", "", "").configMap(ctx, name)
	if err != nil {
		return nil, err
	}
	if got == nil {
		if !optional {
			return nil, &configError{fmt.Sprintf("configmap %q not found", name)}
		}
	} else {
		cm = got
	}
	if mode == nil {
		mode = ptr.To(corev1.ConfigMapVolumeSourceDefaultMode)
	}
	payload, err := configmap.MakePayload(items, cm, mode, optional)
	if err != nil {
		return nil, &configError{fmt.Sprintf("configmap %q: %v", name, err)}
	}
	return payload, nil
}

// downwardPayload is a downwardAPI volume's files: fieldRef items only (resourceFieldRef is
// refused before the Pod runs).
func (m *volumeMaker) downwardPayload(items []corev1.DownwardAPIVolumeFile, mode *int32) (map[string]volumeutil.FileProjection, error) {
	if mode == nil {
		mode = ptr.To(corev1.DownwardAPIVolumeSourceDefaultMode)
	}
	payload := map[string]volumeutil.FileProjection{}
	for _, item := range items {
		if item.FieldRef == nil {
			return nil, fmt.Errorf("item %s: only fieldRef items are written by the kubelet stand-in", item.Path)
		}
		var value string
		switch item.FieldRef.FieldPath {
		case "metadata.labels":
			value = fieldpath.FormatMap(m.pod.Labels)
		case "metadata.annotations":
			value = fieldpath.FormatMap(m.pod.Annotations)
		default:
			v, err := podFieldValue(m.pod, item.FieldRef.FieldPath, m.podIP, m.hostIP)
			if err != nil {
				return nil, fmt.Errorf("item %s: %w", item.Path, err)
			}
			value = v
		}
		fileMode := *mode
		if item.Mode != nil {
			fileMode = *item.Mode
		}
		payload[item.Path] = volumeutil.FileProjection{Data: []byte(value), Mode: fileMode}
	}
	return payload, nil
}

// projectedPayload is a projected volume's files; a serviceAccountToken source is requested
// from the TokenRequest API for the Pod's service account, bound to the Pod, with the
// source's audience (the API server's when empty) and expiry.
func (m *volumeMaker) projectedPayload(ctx context.Context, p *corev1.ProjectedVolumeSource) (map[string]volumeutil.FileProjection, time.Time, error) {
	mode := p.DefaultMode
	if mode == nil {
		mode = ptr.To(corev1.ProjectedVolumeSourceDefaultMode)
	}
	var refreshAt time.Time
	payload := map[string]volumeutil.FileProjection{}
	merge := func(part map[string]volumeutil.FileProjection) {
		for k, v := range part {
			payload[k] = v
		}
	}
	for i, s := range p.Sources {
		switch {
		case s.Secret != nil:
			part, err := m.secretPayload(ctx, s.Secret.Name, s.Secret.Items, mode, ptrTrue(s.Secret.Optional))
			if err != nil {
				return nil, time.Time{}, err
			}
			merge(part)
		case s.ConfigMap != nil:
			part, err := m.configMapPayload(ctx, s.ConfigMap.Name, s.ConfigMap.Items, mode, ptrTrue(s.ConfigMap.Optional))
			if err != nil {
				return nil, time.Time{}, err
			}
			merge(part)
		case s.DownwardAPI != nil:
			part, err := m.downwardPayload(s.DownwardAPI.Items, mode)
			if err != nil {
				return nil, time.Time{}, err
			}
			merge(part)
		case s.ServiceAccountToken != nil:
			token, expires, err := m.requestToken(ctx, s.ServiceAccountToken)
			if err != nil {
				return nil, time.Time{}, err
			}
			payload[s.ServiceAccountToken.Path] = volumeutil.FileProjection{Data: []byte(token), Mode: *mode}
			if at := tokenRefreshTime(m.now(), expires); refreshAt.IsZero() || at.Before(refreshAt) {
				refreshAt = at
			}
		default:
			return nil, time.Time{}, fmt.Errorf("projected source %d is not one the kubelet stand-in writes", i)
		}
	}
	return payload, refreshAt, nil
}

// tokenRefreshTime is when a token issued at issued and expiring at expires is requested
// again: at 80% of its lifetime, as the kubelet's token manager does.
func tokenRefreshTime(issued, expires time.Time) time.Time {
	return issued.Add(expires.Sub(issued) * 8 / 10)
}

func (m *volumeMaker) requestToken(ctx context.Context, p *corev1.ServiceAccountTokenProjection) (string, time.Time, error) {
	sa := m.pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	expiration := int64(defaultTokenExpiration / time.Second)
	if p.ExpirationSeconds != nil {
		expiration = *p.ExpirationSeconds
	}
	var audiences []string
	if p.Audience != "" {
		audiences = []string{p.Audience}
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: &expiration,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: m.pod.Name, UID: m.pod.UID},
	}}
	got, err := m.client.CoreV1().ServiceAccounts(m.pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("requesting a token of service account %s/%s: %w", m.pod.Namespace, sa, err)
	}
	expires := got.Status.ExpirationTimestamp.Time
	if expires.IsZero() {
		expires = m.now().Add(time.Duration(expiration) * time.Second)
	}
	return got.Status.Token, expires, nil
}

// shareWithGroup gives the files under dir to group gid, readable by it (and writable when
// writable), with the set-group-ID bit on directories: what the kubelet does with a Pod's
// fsGroup.
func shareWithGroup(dir string, gid int64, writable bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := os.Lchown(path, -1, int(gid)); err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		mode := info.Mode()
		add := fs.FileMode(0o040)
		if writable {
			add |= 0o020
		}
		if d.IsDir() {
			add |= 0o010 | fs.ModeSetgid
		}
		return os.Chmod(path, mode|add)
	})
}

// safeSubPath reports whether sub stays inside its volume.
func safeSubPath(sub string) bool {
	if filepath.IsAbs(sub) {
		return false
	}
	for _, part := range strings.Split(filepath.ToSlash(sub), "/") {
		if part == ".." {
			return false
		}
	}
	return true
}
