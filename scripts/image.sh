#!/usr/bin/env bash
# The controller's container image, assembled without a container daemon.
#
#   scripts/image.sh build
#       Builds capw (release profile, without the simulated cloud; the same build as `make build`
#       but for capw's own crate) and makes an OCI image layout of it with umoci, in
#       $TARGET_DIR/image/ ($CAPW_IMAGE_DIR when set). With $CAPW_IMAGE_BINARY the image is made
#       of that binary instead (`make test` gives the test build's capw without the simulated
#       cloud, so that the suite compiles the host twice, not three times):
#         oci/                 the layout; its one image is tagged v<workspace version>
#         digest               the image's manifest digest (sha256:...)
#         kustomization.yaml   deploy/ as a base, its image pinned to that digest under the
#                              name $IMAGE_REPOSITORY (default ghcr.io/capw-dev/capw)
#   scripts/image.sh push REGISTRY/REPOSITORY[:TAG] [OVERLAY_DIR]
#       Pushes the layout's image there with skopeo (TAG defaults to the layout's), digests
#       kept; writes the pushed digest and the kustomization with REGISTRY/REPOSITORY and that
#       digest into OVERLAY_DIR (default the image's directory), and prints
#       REGISTRY/REPOSITORY@digest. Credentials are skopeo's (`skopeo login REGISTRY`). A
#       registry on loopback (localhost, 127.0.0.0/8, [::1]) is spoken to over plain HTTP, any
#       other over verified HTTPS.
#
# The image holds /usr/local/bin/capw (its entrypoint; symbols kept, debug info dropped), the
# shared libraries it loads with their dynamic loader, copied from the building machine at the
# paths the binary finds them (glibc's, from Debian; nothing else), and the CA certificates of
# the building machine (/etc/ssl/certs/ca-certificates.crt, for registries that serve providers over TLS);
# it runs as 65532:65532 and carries the org.opencontainers.image.* labels.
#
# Needs umoci, skopeo, binutils and ca-certificates (`make test-deps-image`).
set -euo pipefail

# Where the binary lives in the image: a fixed path the entrypoint and the tests name.
BINARY_PATH=/usr/local/bin/capw
CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt
# The numeric user and group of deploy/deployment.yaml's securityContext.
IMAGE_USER=65532:65532
# The image deploy/kustomization.yaml names; the written kustomization replaces it.
BASE_IMAGE=ghcr.io/capw-dev/capw
DESCRIPTION="capw controller: cluster lifecycle with sandboxed WebAssembly providers"

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target_dir=${TARGET_DIR:-${CARGO_TARGET_DIR:-$root/target}}
image_dir=${CAPW_IMAGE_DIR:-$target_dir/image}
layout=$image_dir/oci
cargo=${CARGO:-cargo}
log() { echo "image: $*" >&2; }
fail() {
    echo "image: $*" >&2
    exit 1
}

# A field of Cargo.toml's [workspace.package].
workspace_field() {
    sed -n '/^\[workspace\.package\]/,/^\[/s/^'"$1"' = "\(.*\)"$/\1/p' "$root/Cargo.toml"
}
version=$(workspace_field version)
tag=v$version

# The manifest digest the layout's index gives for the image's tag.
layout_digest() {
    python3 -c '
import json, sys
index = json.load(open(sys.argv[1] + "/index.json"))
for m in index["manifests"]:
    if m.get("annotations", {}).get("org.opencontainers.image.ref.name") == sys.argv[2]:
        print(m["digest"])
' "$layout" "$tag"
}

# Writes kustomization.yaml into $1: deploy/ with its image replaced by $2@$3.
write_overlay() {
    local dir=$1 repository=$2 digest=$3
    mkdir -p "$dir"
    local base
    base=$(realpath -m --relative-to="$dir" "$root/deploy")
    cat >"$dir/kustomization.yaml" <<EOF
# Written by scripts/image.sh: deploy/ with the controller image pinned to its digest.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - $base
images:
  - name: $BASE_IMAGE
    newName: $repository
    digest: $digest
EOF
    log "wrote $dir/kustomization.yaml ($repository@$digest)"
}

revision() { git -C "$root" rev-parse HEAD 2>/dev/null || true; }

# Copies the shared libraries $1 loads (ldd's answer: its dynamic loader and each library at the
# path it was found at) into the root file system $2, so that the binary runs there alone.
copy_libraries() {
    local binary=$1 rootfs=$2 line path
    local listed
    listed=$(ldd "$binary") || fail "ldd $binary failed: $listed"
    while read -r line; do
        case $line in
        *"not found"*) fail "$binary needs a library this machine lacks: $line" ;;
        *"=> /"*) path=${line#*=> }; path=${path%% (*} ;;
        /*) path=${line%% (*} ;;
        *) continue ;; # the vDSO: the kernel's, not a file
        esac
        install -D -m 0755 "$(readlink -f "$path")" "$rootfs$path"
    done <<<"$listed"
}

build() {
    local binary=${CAPW_IMAGE_BINARY:-}
    if [ -z "$binary" ]; then
        log "building capw (release, without the simulated cloud)"
        CARGO_TARGET_DIR=$target_dir "$cargo" build --release -p capw
        binary=$target_dir/release/capw
    fi
    [ -x "$binary" ] || fail "$binary: no such binary"

    rm -rf "$layout" "$image_dir/bundle"
    mkdir -p "$image_dir"
    umoci init --layout "$layout"
    umoci new --image "$layout:$tag"
    umoci unpack --rootless --image "$layout:$tag" "$image_dir/bundle"
    local rootfs=$image_dir/bundle/rootfs
    # Without the release profile's line tables (67 MB instead of 321 MB); the symbols stay,
    # so that a panic's backtrace still names its functions.
    mkdir -p "$(dirname "$rootfs$BINARY_PATH")"
    strip --strip-debug -o "$rootfs$BINARY_PATH" "$binary"
    chmod 0755 "$rootfs$BINARY_PATH"
    copy_libraries "$rootfs$BINARY_PATH" "$rootfs"
    install -D -m 0644 "$CA_BUNDLE" "$rootfs$CA_BUNDLE"
    # Every file of the layer gets the same time, so that only content changes the digest.
    local created
    created=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%dT%H:%M:%SZ)
    find "$rootfs" -exec touch -h -d "$created" {} +
    umoci repack --image "$layout:$tag" --history.created "$created" \
        --history.created_by "scripts/image.sh: $BINARY_PATH, its libraries, $CA_BUNDLE" "$image_dir/bundle"
    rm -rf "$image_dir/bundle"

    local labels=(
        "org.opencontainers.image.title=capw"
        "org.opencontainers.image.version=$version"
        "org.opencontainers.image.source=$(workspace_field repository)"
        "org.opencontainers.image.licenses=$(workspace_field license)"
        "org.opencontainers.image.description=$DESCRIPTION"
        "org.opencontainers.image.created=$created"
    )
    local rev
    rev=$(revision)
    [ -z "$rev" ] || labels+=("org.opencontainers.image.revision=$rev")
    local args=()
    for label in "${labels[@]}"; do
        args+=(--config.label "$label" --manifest.annotation "$label")
    done
    umoci config --image "$layout:$tag" --no-history --created "$created" \
        --os linux --architecture amd64 --config.user "$IMAGE_USER" \
        --config.entrypoint "$BINARY_PATH" "${args[@]}"
    umoci gc --layout "$layout"

    local digest
    digest=$(layout_digest)
    [ -n "$digest" ] || fail "no manifest tagged $tag in $layout/index.json"
    echo "$digest" >"$image_dir/digest"
    write_overlay "$image_dir" "${IMAGE_REPOSITORY:-$BASE_IMAGE}" "$digest"
    log "$layout:$tag is $digest ($(du -sb "$layout" | cut -f1) bytes in the layout)"
}

push() {
    local reference=${1:?usage: scripts/image.sh push REGISTRY/REPOSITORY[:TAG] [OVERLAY_DIR]}
    local overlay_dir=${2:-$image_dir}
    [ -f "$layout/index.json" ] || fail "no image layout in $layout: run \`make image\` first"
    # REPOSITORY without :TAG (a registry's port is before the first slash, a tag after it).
    local repository=$reference
    case ${reference##*/} in *:*) repository=${reference%:*} ;; esac
    [ "$repository" != "$reference" ] || reference=$reference:$tag
    local tls=--dest-tls-verify=true
    case ${reference%%/*} in
    localhost | localhost:* | 127.* | "[::1]" | "[::1]:"*) tls=--dest-tls-verify=false ;;
    esac
    mkdir -p "$overlay_dir"
    log "pushing $layout:$tag to $reference"
    skopeo copy --quiet --preserve-digests "$tls" --digestfile "$overlay_dir/digest" \
        "oci:$layout:$tag" "docker://$reference"
    local digest
    digest=$(cat "$overlay_dir/digest")
    echo "$digest" >"$overlay_dir/digest"
    [ "$digest" = "$(layout_digest)" ] ||
        fail "the registry holds $reference as $digest, the layout as $(layout_digest)"
    write_overlay "$overlay_dir" "$repository" "$digest"
    echo "$repository@$digest"
}

case ${1:-} in
build) build ;;
push) push "${@:2}" ;;
*) fail "usage: scripts/image.sh build | push REGISTRY/REPOSITORY[:TAG] [OVERLAY_DIR]" ;;
esac
