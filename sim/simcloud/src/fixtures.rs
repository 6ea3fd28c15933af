//! Bootstrap data builders for tests: cloud-config that passes the boot check, and the pieces
//! to build data that fails it.
//!
//! Public so that the integration tests here and the tests of providers that talk to the sim
//! can make valid data without a bootstrap provider.

/// A bootstrap token of the right form, for fixtures.
pub const TOKEN: &str = "abcdef.0123456789abcdef";

/// A CA cert hash of the right form, for fixtures.
pub const CA_HASH: &str = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

/// A self-signed CA certificate (ECDSA P-256, CN `kubernetes`), for init data that makes a
/// cluster's registration.
pub const CA_CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBgDCCASegAwIBAgIUNzf4aC94ymX/jLaCYb0HBwhylDAwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKa3ViZXJuZXRlczAgFw0yNjExMjkxODAxMzhaGA8yMTI2MTEw
NTE4MDEzOFowFTETMBEGA1UEAwwKa3ViZXJuZXRlczBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABImMTBWkNZ/w37NyYtp2RZjS4SaY80CauuGYKOQGRRbBWeror95/
U/YbMvJ2iuPxYdJdT5JlnQOCsWj87nAedO6jUzBRMB0GA1UdDgQWBBTefhEK4BY5
+2fm9mzipxIQTr2qXTAfBgNVHSMEGDAWgBTefhEK4BY5+2fm9mzipxIQTr2qXTAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0cAMEQCIEazmSShJVQlDlqRd+Dx
s/hOPq/Jga/rt5wlyDJsO7pNAiBh7fZrQM48k+XRMeii/vVTNoy1s+Y6v9ysGBj+
O6iRQA==
-----END CERTIFICATE-----
";

/// kubeadm's hash of [`CA_CERT`], as `openssl x509 -pubkey | openssl pkey -pubin -outform der
/// | sha256sum` computes it.
pub const CA_CERT_HASH: &str =
    "sha256:524b617569bf60ada9a5b9cc2fe283d1b6583b37d1809a3b1e5775a7c82f73d3";

/// Where [`init_cloud_config`] writes its kubeadm configuration.
pub const INIT_CONFIG_PATH: &str = "/run/kubeadm/kubeadm.yaml";

/// Where [`join_cloud_config`] writes its kubeadm configuration.
pub const JOIN_CONFIG_PATH: &str = "/run/kubeadm/kubeadm-join-config.yaml";

/// `ClusterConfiguration` and `InitConfiguration` documents (kubeadm.k8s.io/v1beta4) for a
/// first control-plane node at `endpoint` (`host:port`) with bootstrap token `token`.
pub fn kubeadm_init_docs(endpoint: &str, token: &str) -> String {
    format!(
        "apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
controlPlaneEndpoint: \"{endpoint}\"
kubernetesVersion: v1.31.0
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
bootstrapTokens:
- token: \"{token}\"
  ttl: 24h0m0s
"
    )
}

/// A `JoinConfiguration` document (kubeadm.k8s.io/v1beta4) joining `endpoint` with `token`,
/// pinning `ca_hash`; with a `controlPlane` section when `control_plane`.
pub fn kubeadm_join_docs(
    endpoint: &str,
    token: &str,
    ca_hash: &str,
    control_plane: bool,
) -> String {
    let mut docs = format!(
        "apiVersion: kubeadm.k8s.io/v1beta4
kind: JoinConfiguration
discovery:
  bootstrapToken:
    apiServerEndpoint: \"{endpoint}\"
    token: \"{token}\"
    caCertHashes:
      - {ca_hash}
"
    );
    if control_plane {
        docs.push_str("controlPlane:\n  localAPIEndpoint:\n    bindPort: 6443\n");
    }
    docs
}

/// Cloud-config writing each `(path, content)` of `files` and running `runcmd`.
pub fn cloud_config_with_files(files: &[(&str, &str)], runcmd: &str) -> String {
    let mut data = String::from("#cloud-config\nwrite_files:\n");
    for (path, content) in files {
        data.push_str(&format!(
            "- path: {path}\n  owner: root:root\n  permissions: '0640'\n  content: |\n"
        ));
        for line in content.lines() {
            data.push_str("    ");
            data.push_str(line);
            data.push('\n');
        }
    }
    data.push_str(&format!("runcmd:\n- '{}'\n", runcmd.replace('\'', "''")));
    data
}

/// Cloud-config that runs `kubeadm init` against `endpoint` with `token`, as the Cluster API
/// kubeadm bootstrap provider lays it out.
pub fn init_cloud_config(endpoint: &str, token: &str) -> String {
    cloud_config_with_files(
        &[(INIT_CONFIG_PATH, &kubeadm_init_docs(endpoint, token))],
        &format!(
            "kubeadm init --config {INIT_CONFIG_PATH} && echo success > /run/cluster-api/bootstrap-success.complete"
        ),
    )
}

/// Like [`init_cloud_config`], also writing [`CA_CERT`] where kubeadm reads the cluster CA,
/// so that a cluster without a registration learns its token and [`CA_CERT_HASH`] from it.
pub fn init_cloud_config_with_ca(endpoint: &str, token: &str) -> String {
    cloud_config_with_files(
        &[
            (INIT_CONFIG_PATH, &kubeadm_init_docs(endpoint, token)),
            (crate::boot_check::CA_CERT_PATH, CA_CERT),
        ],
        &format!("kubeadm init --config {INIT_CONFIG_PATH}"),
    )
}

/// Cloud-config that runs `kubeadm join` against `endpoint` with `token`, pinning `ca_hash`; as
/// a control-plane node when `control_plane`.
pub fn join_cloud_config(
    endpoint: &str,
    token: &str,
    ca_hash: &str,
    control_plane: bool,
) -> String {
    cloud_config_with_files(
        &[(
            JOIN_CONFIG_PATH,
            &kubeadm_join_docs(endpoint, token, ca_hash, control_plane),
        )],
        &format!(
            "kubeadm join --config {JOIN_CONFIG_PATH} && echo success > /run/cluster-api/bootstrap-success.complete"
        ),
    )
}
