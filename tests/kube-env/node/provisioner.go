package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The process kubelet stand-in's local-path provisioner: PersistentVolumeClaims of the
// StorageClass capw-local (by name, or with no class while capw-local is the default) get a
// PersistentVolume of a directory DIR/volumes/<pv> on this Node, as Rancher's local-path
// provisioner makes them. The claim is provisioned once it is bound to a volume it may
// use here: at once under volumeBindingMode Immediate, once the scheduler picked this Node
// (the claim's selected-node annotation) under WaitForFirstConsumer, or once a Pod using it
// is bound here (a Pod placed without the scheduler). The PV is made bound to the claim, and
// the claim to it, as the PV controller would finish it; when the claim is gone the PV and
// its directory are deleted (reclaim policy Delete).

const (
	localStorageClass = "capw-local"
	localProvisioner  = "capw.dev/local"
	// selectedNodeAnnotation is where the scheduler names the Node it picked for a claim of a
	// WaitForFirstConsumer class.
	selectedNodeAnnotation  = "volume.kubernetes.io/selected-node"
	provisionedByAnnotation = "pv.kubernetes.io/provisioned-by"
	defaultClassAnnotation  = "storageclass.kubernetes.io/is-default-class"
)

// localVolumes provisions and deletes the capw-local volumes of one Node.
type localVolumes struct {
	client kubernetes.Interface
	node   string
	// dir is DIR/volumes.
	dir string
}

func (p *localVolumes) pvDir(pv string) string { return filepath.Join(p.dir, pv) }

// sync provisions the claims that wait for a volume here and deletes the volumes whose claim
// is gone. Errors are logged; the next sync tries again.
func (p *localVolumes) sync(ctx context.Context) {
	class, err := p.client.StorageV1().StorageClasses().Get(ctx, localStorageClass, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) && ctx.Err() == nil {
			log.Printf("provisioner: reading StorageClass %s: %v", localStorageClass, err)
		}
		class = nil
	}
	claims, err := p.client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{})
	if err != nil {
		if ctx.Err() == nil {
			log.Printf("provisioner: listing claims: %v", err)
		}
		return
	}
	used := p.claimsUsedHere(ctx)
	live := map[types.UID]bool{}
	for i := range claims.Items {
		claim := &claims.Items[i]
		live[claim.UID] = true
		if !p.wants(claim, class, used) {
			continue
		}
		if err := p.provision(ctx, claim); err != nil && ctx.Err() == nil {
			log.Printf("provisioner: claim %s/%s: %v", claim.Namespace, claim.Name, err)
		}
	}
	p.deleteReleased(ctx, live)
}

// claimsUsedHere are the claims (namespace/name) of the Pods bound to this Node.
func (p *localVolumes) claimsUsedHere(ctx context.Context) map[string]bool {
	used := map[string]bool{}
	pods, err := p.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + p.node})
	if err != nil {
		return used
	}
	for _, pod := range pods.Items {
		for _, v := range pod.Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				used[pod.Namespace+"/"+v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	return used
}

// wants reports whether claim is one to provision here now.
func (p *localVolumes) wants(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, used map[string]bool) bool {
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil {
		return false
	}
	switch {
	case claim.Spec.StorageClassName != nil && *claim.Spec.StorageClassName == localStorageClass:
	case claim.Spec.StorageClassName == nil && class != nil && class.Annotations[defaultClassAnnotation] == "true":
	default:
		return false
	}
	if selected := claim.Annotations[selectedNodeAnnotation]; selected != "" {
		return selected == p.node
	}
	if used[claim.Namespace+"/"+claim.Name] {
		return true
	}
	return class != nil && (class.VolumeBindingMode == nil || *class.VolumeBindingMode == "Immediate")
}

// provision makes claim's PV (or finds the one made before) and binds the claim to it.
func (p *localVolumes) provision(ctx context.Context, claim *corev1.PersistentVolumeClaim) error {
	name := "pvc-" + string(claim.UID)
	if err := os.MkdirAll(p.pvDir(name), 0o777); err != nil {
		return err
	}
	// 0777 as local-path's: the claim's user is not known here.
	if err := os.Chmod(p.pvDir(name), 0o777); err != nil {
		return err
	}
	size := claim.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	modes := claim.Spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{provisionedByAnnotation: localProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   modes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              localStorageClass,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: p.pvDir(name)}},
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{p.node}}},
			}}}},
		},
	}
	created, err := p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = p.client.CoreV1().PersistentVolumes().Get(ctx, name, metav1.GetOptions{})
	}
	if err != nil {
		return fmt.Errorf("creating PV %s: %w", name, err)
	}
	if created.Status.Phase != corev1.VolumeBound {
		created.Status.Phase = corev1.VolumeBound
		if _, err := p.client.CoreV1().PersistentVolumes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
			return fmt.Errorf("marking PV %s bound: %w", name, err)
		}
	}
	bound := claim.DeepCopy()
	bound.Spec.VolumeName = name
	if bound.Annotations == nil {
		bound.Annotations = map[string]string{}
	}
	bound.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
	bound.Annotations["pv.kubernetes.io/bound-by-controller"] = "yes"
	bound, err = p.client.CoreV1().PersistentVolumeClaims(claim.Namespace).Update(ctx, bound, metav1.UpdateOptions{})
	if err != nil {
		return fmt.Errorf("binding to PV %s: %w", name, err)
	}
	bound.Status.Phase = corev1.ClaimBound
	bound.Status.AccessModes = modes
	bound.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: size}
	if _, err := p.client.CoreV1().PersistentVolumeClaims(claim.Namespace).UpdateStatus(ctx, bound, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("marking bound to PV %s: %w", name, err)
	}
	log.Printf("provisioner: claim %s/%s bound to PV %s (%s)", claim.Namespace, claim.Name, name, p.pvDir(name))
	return nil
}

// deleteReleased deletes this Node's PVs (and their directories) whose claim is gone.
func (p *localVolumes) deleteReleased(ctx context.Context, live map[types.UID]bool) {
	pvs, err := p.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pv := range pvs.Items {
		if pv.Annotations[provisionedByAnnotation] != localProvisioner || pv.Spec.Local == nil ||
			!strings.HasPrefix(pv.Spec.Local.Path, p.dir+string(filepath.Separator)) {
			continue
		}
		if pv.DeletionTimestamp != nil || (pv.Spec.ClaimRef != nil && live[pv.Spec.ClaimRef.UID]) {
			continue // deleted already (its pv-protection finalizer waits), or still claimed
		}
		if pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
			continue
		}
		if err := os.RemoveAll(pv.Spec.Local.Path); err != nil {
			log.Printf("provisioner: removing %s: %v", pv.Spec.Local.Path, err)
			continue
		}
		err := p.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pv.UID}})
		if err != nil && !apierrors.IsNotFound(err) {
			log.Printf("provisioner: deleting PV %s: %v", pv.Name, err)
			continue
		}
		log.Printf("provisioner: PV %s deleted with its claim", pv.Name)
	}
}

// claimDir is the directory of the Pod's claim: its PV's local or hostPath path. A claim not
// bound yet is waited for; a PV of another kind is refused.
func (w *podWorker) claimDir(ctx context.Context, claimName string) (string, error) {
	claim, err := w.rt.client.CoreV1().PersistentVolumeClaims(w.pod.Namespace).Get(ctx, claimName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", &configError{fmt.Sprintf("persistentvolumeclaim %q not found", claimName)}
	}
	if err != nil {
		return "", err
	}
	if claim.Spec.VolumeName == "" {
		return "", fmt.Errorf("persistentvolumeclaim %q is not bound", claimName)
	}
	pv, err := w.rt.client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("persistentvolume %q of claim %q: %w", claim.Spec.VolumeName, claimName, err)
	}
	var path string
	switch {
	case pv.Spec.Local != nil:
		path = pv.Spec.Local.Path
	case pv.Spec.HostPath != nil:
		path = pv.Spec.HostPath.Path
	default:
		return "", &configError{fmt.Sprintf("persistentvolume %q is neither local nor hostPath: the kubelet stand-in mounts no other", pv.Name)}
	}
	if err := os.MkdirAll(path, 0o777); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	return path, nil
}
