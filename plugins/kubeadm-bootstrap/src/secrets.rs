//! The secret items `cluster-secrets` returns, by name, and reading them back in `generate`
//! and `kubeconfig`.
//!
//! The names are the contract with the host and with whoever reads the cluster's Secret: the
//! PKI files are named by their path under kubeadm's `/etc/kubernetes/pki`.

use capw_sdk::bootstrap::SecretItem;
use x509_cert::certificate::Certificate;

use crate::pki::{self, CertifiedKey, ClusterPki, KeyPair, PkiError};
use crate::token::BootstrapToken;

/// Cluster CA certificate (PEM).
pub const CA_CRT: &str = "ca.crt";
/// Cluster CA private key (PKCS#8 PEM).
pub const CA_KEY: &str = "ca.key";
/// etcd CA certificate.
pub const ETCD_CA_CRT: &str = "etcd/ca.crt";
/// etcd CA private key.
pub const ETCD_CA_KEY: &str = "etcd/ca.key";
/// Front-proxy CA certificate.
pub const FRONT_PROXY_CA_CRT: &str = "front-proxy-ca.crt";
/// Front-proxy CA private key.
pub const FRONT_PROXY_CA_KEY: &str = "front-proxy-ca.key";
/// Service-account public key (SubjectPublicKeyInfo PEM).
pub const SA_PUB: &str = "sa.pub";
/// Service-account private key.
pub const SA_KEY: &str = "sa.key";
/// Bootstrap token, `[a-z0-9]{6}.[a-z0-9]{16}`.
pub const BOOTSTRAP_TOKEN: &str = "bootstrap-token";
/// `sha256:<hex>` of `ca.crt`'s SubjectPublicKeyInfo, as joins pin it.
pub const CA_CERT_HASH: &str = "ca-cert-hash";

/// The PEM files a control-plane node needs before `kubeadm init` or a control-plane join,
/// with their PEM label. Each is written to `/etc/kubernetes/pki/<name>`.
pub const CONTROL_PLANE_FILES: [(&str, PemKind); 8] = [
    (CA_CRT, PemKind::Certificate),
    (CA_KEY, PemKind::PrivateKey),
    (ETCD_CA_CRT, PemKind::Certificate),
    (ETCD_CA_KEY, PemKind::PrivateKey),
    (FRONT_PROXY_CA_CRT, PemKind::Certificate),
    (FRONT_PROXY_CA_KEY, PemKind::PrivateKey),
    (SA_PUB, PemKind::PublicKey),
    (SA_KEY, PemKind::PrivateKey),
];

/// What a PEM item holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PemKind {
    /// `BEGIN CERTIFICATE`: public, world-readable on the node.
    Certificate,
    /// `BEGIN PRIVATE KEY`: secret, readable by root only.
    PrivateKey,
    /// `BEGIN PUBLIC KEY`: public.
    PublicKey,
}

impl PemKind {
    /// The PEM type label.
    pub fn label(self) -> &'static str {
        match self {
            PemKind::Certificate => "CERTIFICATE",
            PemKind::PrivateKey => "PRIVATE KEY",
            PemKind::PublicKey => "PUBLIC KEY",
        }
    }

    /// Whether the file must be readable by root only.
    pub fn is_secret(self) -> bool {
        self == PemKind::PrivateKey
    }
}

/// Secret items that are missing or not what their name says. Names the item, never its
/// content.
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    /// An item `cluster-secrets` returns is not in the list.
    #[error("secret item `{name}` is missing: pass every item cluster-secrets returned")]
    Missing {
        /// The item's name.
        name: &'static str,
    },
    /// An item that does not parse as what its name says.
    #[error("secret item `{name}` is not {expected}")]
    Garbled {
        /// The item's name.
        name: &'static str,
        /// What it should be, e.g. `a PEM certificate`.
        expected: &'static str,
    },
    /// `ca-cert-hash` is not the hash of `ca.crt`: items of two clusters were mixed.
    #[error(
        "secret item `{CA_CERT_HASH}` does not match `{CA_CRT}`: are the items of two clusters mixed?"
    )]
    HashMismatch,
    /// Turning fresh material into items failed.
    #[error(transparent)]
    Pki(#[from] PkiError),
}

/// The items of a fresh cluster PKI and token, in the order of the constants above.
///
/// # Errors
///
/// [`SecretsError::Pki`] if a key or certificate does not encode.
pub fn to_items(pki: &ClusterPki, token: &BootstrapToken) -> Result<Vec<SecretItem>, SecretsError> {
    let item = |name: &str, text: String| SecretItem {
        name: name.to_owned(),
        data: text.into_bytes(),
    };
    Ok(vec![
        item(CA_CRT, pki::cert_to_pem(&pki.ca.cert)?),
        item(CA_KEY, pki.ca.key.to_pkcs8_pem()?),
        item(ETCD_CA_CRT, pki::cert_to_pem(&pki.etcd_ca.cert)?),
        item(ETCD_CA_KEY, pki.etcd_ca.key.to_pkcs8_pem()?),
        item(
            FRONT_PROXY_CA_CRT,
            pki::cert_to_pem(&pki.front_proxy_ca.cert)?,
        ),
        item(FRONT_PROXY_CA_KEY, pki.front_proxy_ca.key.to_pkcs8_pem()?),
        item(SA_PUB, pki.service_account.public_key_pem()?),
        item(SA_KEY, pki.service_account.to_pkcs8_pem()?),
        item(BOOTSTRAP_TOKEN, token.as_str().to_owned()),
        item(CA_CERT_HASH, pki::ca_cert_hash(&pki.ca.cert)?),
    ])
}

/// A read-only view of the items the host passes back, with typed, checked getters.
#[derive(Clone, Copy)]
pub struct SecretSet<'a> {
    items: &'a [SecretItem],
}

impl<'a> SecretSet<'a> {
    /// A view of `items`. When a name repeats, the first item counts.
    pub fn new(items: &'a [SecretItem]) -> Self {
        Self { items }
    }

    /// The bytes of item `name`.
    ///
    /// # Errors
    ///
    /// [`SecretsError::Missing`].
    pub fn bytes(&self, name: &'static str) -> Result<&'a [u8], SecretsError> {
        self.items
            .iter()
            .find(|item| item.name == name)
            .map(|item| item.data.as_slice())
            .ok_or(SecretsError::Missing { name })
    }

    /// Item `name` as PEM text of `kind`: UTF-8, with one block of `kind`'s label.
    ///
    /// # Errors
    ///
    /// [`SecretsError::Missing`], or [`SecretsError::Garbled`] when it is not such PEM.
    pub fn pem(&self, name: &'static str, kind: PemKind) -> Result<&'a str, SecretsError> {
        let expected = match kind {
            PemKind::Certificate => "a PEM certificate",
            PemKind::PrivateKey => "a PEM private key",
            PemKind::PublicKey => "a PEM public key",
        };
        let garbled = || SecretsError::Garbled { name, expected };
        let text = std::str::from_utf8(self.bytes(name)?).map_err(|_| garbled())?;
        match der::pem::decode_label(text.as_bytes()) {
            Ok(label) if label == kind.label() => Ok(text),
            _ => Err(garbled()),
        }
    }

    /// The bootstrap token.
    ///
    /// # Errors
    ///
    /// [`SecretsError::Missing`], or [`SecretsError::Garbled`] when it is not of the form
    /// `[a-z0-9]{6}.[a-z0-9]{16}`.
    pub fn token(&self) -> Result<BootstrapToken, SecretsError> {
        std::str::from_utf8(self.bytes(BOOTSTRAP_TOKEN)?)
            .ok()
            .and_then(BootstrapToken::parse)
            .ok_or(SecretsError::Garbled {
                name: BOOTSTRAP_TOKEN,
                expected: "a bootstrap token of the form [a-z0-9]{6}.[a-z0-9]{16}",
            })
    }

    /// The cluster CA certificate.
    ///
    /// # Errors
    ///
    /// [`SecretsError::Missing`], or [`SecretsError::Garbled`] when it does not parse.
    pub fn ca_cert(&self) -> Result<Certificate, SecretsError> {
        let pem = self.pem(CA_CRT, PemKind::Certificate)?;
        pki::cert_from_pem(pem.as_bytes()).map_err(|_| SecretsError::Garbled {
            name: CA_CRT,
            expected: "a PEM X.509 certificate",
        })
    }

    /// The cluster CA: its certificate and key.
    ///
    /// # Errors
    ///
    /// [`SecretsError::Missing`], or [`SecretsError::Garbled`] when either does not parse.
    pub fn ca(&self) -> Result<CertifiedKey, SecretsError> {
        let cert = self.ca_cert()?;
        let key =
            KeyPair::from_pkcs8_pem(self.pem(CA_KEY, PemKind::PrivateKey)?).map_err(|_| {
                SecretsError::Garbled {
                    name: CA_KEY,
                    expected: "a PKCS#8 RSA or ECDSA P-256 private key",
                }
            })?;
        Ok(CertifiedKey { cert, key })
    }

    /// The hash joins pin, computed from `ca.crt`; checked against `ca-cert-hash` when that
    /// item is present.
    ///
    /// # Errors
    ///
    /// As [`SecretSet::ca_cert`], and [`SecretsError::HashMismatch`].
    pub fn ca_cert_hash(&self) -> Result<String, SecretsError> {
        let hash = pki::ca_cert_hash(&self.ca_cert()?)?;
        match self.bytes(CA_CERT_HASH) {
            Ok(stored) if !stored.eq_ignore_ascii_case(hash.as_bytes()) => {
                Err(SecretsError::HashMismatch)
            }
            _ => Ok(hash),
        }
    }
}
