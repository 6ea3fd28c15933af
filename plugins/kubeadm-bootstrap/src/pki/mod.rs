//! The cluster's public-key infrastructure: the three CAs kubeadm expects, the
//! service-account key pair, client certificates, and the CA cert hash joins pin.
//!
//! Everything here is pure Rust (RustCrypto), so it runs inside the wasm32-wasip2 component;
//! randomness comes from `getrandom` (`wasi:random` there), time from the caller.

mod cert;
mod key;

use std::time::SystemTime;

use der::pem::LineEnding;
use der::{DecodePem, Encode, EncodePem};
use sha2::{Digest, Sha256};
use x509_cert::certificate::Certificate;

pub use cert::{BACKDATE, CA_VALIDITY, CLIENT_VALIDITY, CertifiedKey, client_cert, self_signed_ca};
pub use key::KeyPair;

use crate::config::KeyAlgorithm;

/// Common name of the cluster CA (`ca.crt`), as kubeadm names it.
pub const CLUSTER_CA_NAME: &str = "kubernetes";
/// Common name of the etcd CA (`etcd/ca.crt`).
pub const ETCD_CA_NAME: &str = "etcd-ca";
/// Common name of the front-proxy CA (`front-proxy-ca.crt`).
pub const FRONT_PROXY_CA_NAME: &str = "front-proxy-ca";

/// Why key or certificate work failed. Never carries key material.
#[derive(Debug, thiserror::Error)]
pub enum PkiError {
    /// The platform's random source failed.
    #[error("the random source failed")]
    Random(#[source] getrandom::Error),
    /// Generating a key failed (the random source, or the prime search).
    #[error("generating a {} key failed", .algorithm.kubeadm_name())]
    KeyGeneration {
        /// The algorithm asked for.
        algorithm: KeyAlgorithm,
        /// The crate's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The clock is before 1970 or so far ahead that a validity period cannot be encoded.
    #[error("the clock is outside the range a certificate can carry")]
    ClockOutOfRange,
    /// A distinguished name did not parse (a bug in the caller).
    #[error("invalid certificate name `{name}`")]
    Name {
        /// The RFC 4514 text.
        name: String,
        /// The parser's error.
        #[source]
        source: der::Error,
    },
    /// Assembling or signing a certificate failed.
    #[error("building the certificate for `{subject}` failed")]
    Certificate {
        /// Common name of the certificate.
        subject: String,
        /// The builder's error.
        #[source]
        source: x509_cert::builder::Error,
    },
    /// Encoding a key, certificate or serial number failed.
    #[error("encoding the {what} failed")]
    Encode {
        /// What was being encoded.
        what: &'static str,
        /// The encoder's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A private key that is not PKCS#8 PEM of RSA or ECDSA P-256.
    #[error("not a PKCS#8 PEM private key of RSA or ECDSA P-256")]
    UnsupportedKey,
    /// A certificate that is not PEM-encoded X.509.
    #[error("not a PEM X.509 certificate")]
    BadCertificate(#[source] der::Error),
}

/// What `cluster-secrets` creates: three CAs and the service-account key pair, all of one
/// algorithm.
#[derive(Debug)]
pub struct ClusterPki {
    /// The cluster CA: signs the API server's and kubelets' certificates and client
    /// certificates such as the admin's.
    pub ca: CertifiedKey,
    /// The etcd CA: etcd's peer, server and client certificates.
    pub etcd_ca: CertifiedKey,
    /// The front-proxy CA: the aggregation layer's client certificates.
    pub front_proxy_ca: CertifiedKey,
    /// Signs and verifies service-account tokens.
    pub service_account: KeyPair,
}

impl ClusterPki {
    /// Fresh CAs ([`self_signed_ca`], named as kubeadm names them) and a fresh
    /// service-account key pair, all of `algorithm`.
    ///
    /// # Caveats
    ///
    /// Four RSA-2048 keys take a while (the README gives the figure inside the component);
    /// ECDSA is about instant.
    ///
    /// # Errors
    ///
    /// [`PkiError`] when key generation, the random source or signing fails.
    pub fn generate(algorithm: KeyAlgorithm, now: SystemTime) -> Result<Self, PkiError> {
        Ok(Self {
            ca: self_signed_ca(CLUSTER_CA_NAME, algorithm, now)?,
            etcd_ca: self_signed_ca(ETCD_CA_NAME, algorithm, now)?,
            front_proxy_ca: self_signed_ca(FRONT_PROXY_CA_NAME, algorithm, now)?,
            service_account: KeyPair::generate(algorithm)?,
        })
    }
}

/// `cert` as PEM (`BEGIN CERTIFICATE`).
///
/// # Errors
///
/// [`PkiError::Encode`] if it does not encode.
pub fn cert_to_pem(cert: &Certificate) -> Result<String, PkiError> {
    cert.to_pem(LineEnding::LF).map_err(|e| PkiError::Encode {
        what: "certificate",
        source: Box::new(e),
    })
}

/// Reads one PEM certificate.
///
/// # Errors
///
/// [`PkiError::BadCertificate`] when `pem` is not one.
pub fn cert_from_pem(pem: &[u8]) -> Result<Certificate, PkiError> {
    Certificate::from_pem(pem).map_err(PkiError::BadCertificate)
}

/// kubeadm's CA cert hash of `cert`: `sha256:` and the lowercase hex SHA-256 of the DER
/// SubjectPublicKeyInfo, what `discovery.bootstrapToken.caCertHashes` pins.
///
/// # Errors
///
/// [`PkiError::Encode`] if the key info does not encode.
pub fn ca_cert_hash(cert: &Certificate) -> Result<String, PkiError> {
    let spki = cert
        .tbs_certificate()
        .subject_public_key_info()
        .to_der()
        .map_err(|e| PkiError::Encode {
            what: "public key",
            source: Box::new(e),
        })?;
    let digest = Sha256::digest(&spki);
    let mut hash = String::with_capacity(7 + 64);
    hash.push_str("sha256:");
    for byte in digest.iter() {
        hash.push_str(&format!("{byte:02x}"));
    }
    Ok(hash)
}

#[cfg(test)]
mod tests;
