package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
)

// The image table of the process kubelet stand-in (`capw-node kubelet --images FILE`): with no
// container runtime and no registry to pull from, an image is run as what the table maps its
// repository to. A JSON list of entries, one of:
//
//	{"image": "registry.k8s.io/kube-apiserver", "binary": "/cache/{tag}/bin/kube-apiserver"}
//	{"image": "example.com/app", "rootfs": "/images/app/{tag}", "entrypoint": ["/app"], "cmd": ["--serve"]}
//	{"image": "registry.k8s.io/pause", "pause": true}
//
// "image" is a repository without tag or digest; "{tag}" in a path is replaced by the tag of
// the container's image ("latest" when it has none). The pause image is always known, table
// or not, so an empty table is the pause-only runner of the workload clusters' machines.

// imageEntry is one line of the image table.
type imageEntry struct {
	Image string `json:"image"`
	// Binary is a program run as the container's process, on the machine's file system.
	Binary string `json:"binary,omitempty"`
	// Rootfs is the directory of an unpacked image root file system the container runs in.
	Rootfs string `json:"rootfs,omitempty"`
	// Entrypoint and Cmd are the image config's, for a rootfs image: what runs when the
	// container gives no command (and no args).
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	// Env is the image config's environment (NAME=value), for a rootfs image; the
	// container's env comes after it.
	Env []string `json:"env,omitempty"`
	// WorkingDir is the image config's, for a rootfs image.
	WorkingDir string `json:"workingDir,omitempty"`
	Pause      bool   `json:"pause,omitempty"`
}

// imageTable maps image repositories to what runs them. The zero table knows only pause.
type imageTable struct {
	entries map[string]imageEntry // by normalized repository
}

// loadImageTable reads the table file at path.
func loadImageTable(path string) (imageTable, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return imageTable{}, fmt.Errorf("reading the image table: %w", err)
	}
	return parseImageTable(data)
}

// parseImageTable checks each entry: a repository, and exactly one of binary, rootfs or pause.
func parseImageTable(data []byte) (imageTable, error) {
	var list []imageEntry
	if err := json.Unmarshal(data, &list); err != nil {
		return imageTable{}, fmt.Errorf("parsing the image table: %w", err)
	}
	t := imageTable{entries: map[string]imageEntry{}}
	for i, e := range list {
		kinds := 0
		for _, set := range []bool{e.Binary != "", e.Rootfs != "", e.Pause} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return imageTable{}, fmt.Errorf("image table entry %d (%q): give exactly one of binary, rootfs, pause", i, e.Image)
		}
		repo, tag, ok := splitImage(e.Image)
		if !ok || tag != "" {
			return imageTable{}, fmt.Errorf("image table entry %d: %q is not a repository without tag or digest", i, e.Image)
		}
		if _, dup := t.entries[repo]; dup {
			return imageTable{}, fmt.Errorf("image table entry %d: %q is listed twice", i, e.Image)
		}
		t.entries[repo] = e
	}
	return t, nil
}

// splitImage is an image reference's normalized repository (docker.io/library/nginx for
// nginx) and its tag; ok is false when image is not a reference.
func splitImage(image string) (repo, tag string, ok bool) {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		return "", "", false
	}
	if tagged, isTagged := named.(reference.Tagged); isTagged {
		tag = tagged.Tag()
	}
	return named.Name(), tag, true
}

// imageKind is how a container's image runs.
type imageKind int

const (
	imageUnknown imageKind = iota
	imagePause
	imageBinary
	imageRootfs
)

// resolvedImage is what runs a container's image: its kind and, for binary and rootfs images,
// the entry with {tag} substituted.
type resolvedImage struct {
	kind  imageKind
	entry imageEntry
}

// resolve finds image in the table. The pause image is pause whatever the table says.
func (t imageTable) resolve(image string) resolvedImage {
	if isPauseImage(image) {
		return resolvedImage{kind: imagePause}
	}
	repo, tag, ok := splitImage(image)
	if !ok {
		return resolvedImage{}
	}
	e, found := t.entries[repo]
	if !found {
		return resolvedImage{}
	}
	if tag == "" {
		tag = "latest"
	}
	e.Binary = strings.ReplaceAll(e.Binary, "{tag}", tag)
	e.Rootfs = strings.ReplaceAll(e.Rootfs, "{tag}", tag)
	switch {
	case e.Pause:
		return resolvedImage{kind: imagePause, entry: e}
	case e.Binary != "":
		return resolvedImage{kind: imageBinary, entry: e}
	default:
		return resolvedImage{kind: imageRootfs, entry: e}
	}
}

// empty reports whether the table has no entry: the runner is then the pause-only one.
func (t imageTable) empty() bool { return len(t.entries) == 0 }

// unknownImageMessage names the image the table has no entry for.
func unknownImageMessage(image string) string {
	return fmt.Sprintf("image %q matches no entry of the kubelet stand-in's image table", image)
}

// argv is the command line a container runs with, by Kubernetes' rules on command and args
// (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/):
// command replaces the image's entrypoint, and args its cmd. For a binary image the program is
// the binary, whose base name command[0] must name. For a rootfs image argv[0] is a path or a
// name looked up in PATH inside the root file system.
func (r resolvedImage) argv(c corev1.Container) ([]string, error) {
	switch r.kind {
	case imageBinary:
		rest := c.Args
		if len(c.Command) > 0 {
			if want, got := filepath.Base(r.entry.Binary), filepath.Base(c.Command[0]); want != got {
				return nil, fmt.Errorf("command[0] %q is not the image's program %q", c.Command[0], want)
			}
			rest = append(append([]string{}, c.Command[1:]...), c.Args...)
		}
		return append([]string{r.entry.Binary}, rest...), nil
	case imageRootfs:
		var argv []string
		switch {
		case len(c.Command) > 0:
			argv = append(append([]string{}, c.Command...), c.Args...)
		case len(c.Args) > 0:
			argv = append(append([]string{}, r.entry.Entrypoint...), c.Args...)
		default:
			argv = append(append([]string{}, r.entry.Entrypoint...), r.entry.Cmd...)
		}
		if len(argv) == 0 {
			return nil, fmt.Errorf("no command: the container gives none and the image table's entry has no entrypoint or cmd")
		}
		return argv, nil
	}
	return nil, fmt.Errorf("image %q runs no program", c.Image)
}
