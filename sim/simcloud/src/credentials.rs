//! A managed control plane's own credentials, as a managed Kubernetes service issues them: a
//! self-signed cluster CA, an admin client certificate it signs, and bootstrap tokens for the
//! nodes that join.
//!
//! The cloud mints them when the control plane is created ([`ServiceCredentials::mint`]),
//! outside the state lock (key generation reads the random source); the state keeps them,
//! and derives each bootstrap token from a secret seed and a generation number
//! ([`ServiceCredentials::join_token`]), so that renewing a token stays a pure state change.
//!
//! # Caveats
//!
//! Everything here but the CA certificate is secret: `Debug` shows the CA's hash only, and
//! errors carry no key material.

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use der::EncodePem as _;
use der::asn1::OctetString;
use der::oid::AssociatedOid;
use der::pem::LineEnding;
use p256::ecdsa::{DerSignature, SigningKey};
use p256::pkcs8::EncodePrivateKey as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use spki::{ObjectIdentifier, SubjectPublicKeyInfoOwned, SubjectPublicKeyInfoRef};
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{Builder as _, CertificateBuilder, Result as BuildResult};
use x509_cert::certificate::TbsCertificate;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};
use x509_cert::ext::{Criticality, Extension, ToExtension};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};

use crate::boot_check;
use crate::model::Endpoint;

/// The groups a managed control plane's bootstrap tokens authenticate as (besides
/// `system:bootstrappers`), as `kubeadm token create` gives them.
pub const JOIN_TOKEN_GROUP: &str = "system:bootstrappers:kubeadm:default-node-token";

/// The user and group of the admin kubeconfig, as kubeadm's `admin.conf` (the group is bound
/// to `cluster-admin` in the service's cluster).
const ADMIN_USER: &str = "kubernetes-admin";
const ADMIN_GROUP: &str = "kubeadm:cluster-admins";

/// How far before "now" certificates start, so that a clock a little behind accepts them.
const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// The CA's lifetime, as kubeadm's: ten years.
const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);

/// The admin certificate's lifetime, as kubeadm's `admin.conf`: one year.
const ADMIN_VALIDITY: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// `id-kp-clientAuth` (RFC 5280, 4.2.1.12).
const CLIENT_AUTH: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.2");

/// The characters of bootstrap tokens.
const TOKEN_ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Credentials could not be minted.
#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    /// The random source failed.
    #[error("read the random source")]
    Random(#[source] getrandom::Error),
    /// A key could not be generated.
    #[error("generate a P-256 key")]
    KeyGeneration,
    /// A name, serial number, validity or key did not encode.
    #[error("encode {what}")]
    Encode {
        /// What.
        what: &'static str,
    },
    /// A certificate could not be built or signed.
    #[error("build the {subject} certificate")]
    Certificate {
        /// Its subject.
        subject: &'static str,
        /// The cause.
        #[source]
        source: x509_cert::builder::Error,
    },
}

/// A managed control plane's CA, admin certificate and token seed, as stored in the state.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceCredentials {
    /// The cluster CA certificate (PEM). Public.
    pub ca_cert_pem: String,
    /// kubeadm's hash of the CA, `sha256:<hex>` of its SubjectPublicKeyInfo. Public.
    pub ca_cert_hash: String,
    /// The CA's private key, PKCS#8 PEM. Secret.
    pub ca_key_pem: String,
    /// The admin client certificate (PEM), signed by the CA.
    pub admin_cert_pem: String,
    /// Its private key, PKCS#8 PEM. Secret.
    pub admin_key_pem: String,
    /// 32 random bytes (hex) the bootstrap tokens derive from. Secret.
    pub token_seed: String,
}

impl std::fmt::Debug for ServiceCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceCredentials")
            .field("ca_cert_hash", &self.ca_cert_hash)
            .finish_non_exhaustive()
    }
}

impl ServiceCredentials {
    /// Fresh credentials for cluster `cluster` at `now`: a self-signed ECDSA P-256 CA
    /// (`CN=<cluster>-ca`, kubeadm's CA profile), an admin certificate it signs
    /// (`CN=kubernetes-admin, O=kubeadm:cluster-admins`) and a token seed.
    ///
    /// # Errors
    ///
    /// [`CredentialsError`] when the random source, key generation or signing fails.
    pub fn mint(cluster: &str, now: SystemTime) -> Result<Self, CredentialsError> {
        let ca_key = generate_key()?;
        let ca_subject = name(&format!("CN={}", cn_safe(&format!("{cluster}-ca"))))?;
        let ca_builder = CertificateBuilder::new(
            CaProfile {
                subject: ca_subject.clone(),
            },
            random_serial()?,
            validity(now, CA_VALIDITY)?,
            public_key_info(&ca_key)?,
        )
        .map_err(|source| CredentialsError::Certificate {
            subject: "CA",
            source,
        })?;
        let ca_cert = ca_builder
            .build::<_, DerSignature>(&ca_key)
            .map_err(|source| CredentialsError::Certificate {
                subject: "CA",
                source,
            })?;
        let admin_key = generate_key()?;
        let admin_builder = CertificateBuilder::new(
            ClientProfile {
                subject: name(&format!("CN={ADMIN_USER},O={ADMIN_GROUP}"))?,
                issuer: ca_subject,
            },
            random_serial()?,
            validity(now, ADMIN_VALIDITY)?,
            public_key_info(&admin_key)?,
        )
        .map_err(|source| CredentialsError::Certificate {
            subject: "admin",
            source,
        })?;
        let admin_cert = admin_builder
            .build::<_, DerSignature>(&ca_key)
            .map_err(|source| CredentialsError::Certificate {
                subject: "admin",
                source,
            })?;
        let ca_cert_pem = cert_pem(&ca_cert)?;
        let ca_cert_hash = boot_check::ca_cert_hash(&ca_cert_pem)
            .map_err(|_| CredentialsError::Encode { what: "CA hash" })?;
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(CredentialsError::Random)?;
        Ok(ServiceCredentials {
            ca_cert_pem,
            ca_cert_hash,
            ca_key_pem: key_pem(&ca_key)?,
            admin_cert_pem: cert_pem(&admin_cert)?,
            admin_key_pem: key_pem(&admin_key)?,
            token_seed: hex::encode(seed),
        })
    }

    /// Bootstrap token number `generation`, `[a-z0-9]{6}.[a-z0-9]{16}`: SHA-256 of the seed
    /// and the generation, mapped onto the token alphabet without bias. Each generation has
    /// another id. Secret.
    pub fn join_token(&self, generation: u32) -> String {
        let mut chars = Vec::with_capacity(22);
        let mut block = 0u32;
        while chars.len() < 22 {
            let digest = Sha256::new()
                .chain_update(self.token_seed.as_bytes())
                .chain_update(generation.to_be_bytes())
                .chain_update(block.to_be_bytes())
                .finalize();
            // 252 = 7 * 36: bytes above it would favour the first characters.
            chars.extend(
                digest
                    .iter()
                    .filter(|b| **b < 252)
                    .map(|b| TOKEN_ALPHABET[usize::from(*b) % TOKEN_ALPHABET.len()])
                    .take(22 - chars.len()),
            );
            block += 1;
        }
        let (id, secret) = chars.split_at(6);
        format!(
            "{}.{}",
            String::from_utf8_lossy(id),
            String::from_utf8_lossy(secret)
        )
    }

    /// An admin kubeconfig (YAML) for cluster `cluster` served at `endpoint`, with the CA and
    /// the admin certificate embedded. Secret.
    pub fn admin_kubeconfig(&self, cluster: &str, endpoint: &Endpoint) -> String {
        let user = format!("{cluster}-admin");
        let context = format!("{user}@{cluster}");
        let server = format!("https://{endpoint}");
        let config = serde_json::json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{
                "name": cluster,
                "cluster": {
                    "server": server,
                    "certificate-authority-data": BASE64.encode(&self.ca_cert_pem),
                },
            }],
            "users": [{
                "name": user,
                "user": {
                    "client-certificate-data": BASE64.encode(&self.admin_cert_pem),
                    "client-key-data": BASE64.encode(&self.admin_key_pem),
                },
            }],
            "contexts": [{
                "name": context,
                "context": {"cluster": cluster, "user": user},
            }],
            "current-context": context,
            "preferences": {},
        });
        // A JSON value of strings, lists and maps always serialises.
        serde_yaml_ng::to_string(&config).unwrap_or_default()
    }
}

/// `text` with the characters RFC 4514 would need escaped replaced, for a CN.
fn cn_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
                c
            } else {
                '-'
            }
        })
        .collect()
}

fn generate_key() -> Result<SigningKey, CredentialsError> {
    use p256::elliptic_curve::Generate as _;
    SigningKey::try_generate_from_rng(&mut getrandom::SysRng)
        .map_err(|_| CredentialsError::KeyGeneration)
}

fn public_key_info(key: &SigningKey) -> Result<SubjectPublicKeyInfoOwned, CredentialsError> {
    SubjectPublicKeyInfoOwned::from_key(key.verifying_key())
        .map_err(|_| CredentialsError::Encode { what: "public key" })
}

fn key_pem(key: &SigningKey) -> Result<String, CredentialsError> {
    key.to_pkcs8_pem(LineEnding::LF)
        .map(|pem| pem.as_str().to_owned())
        .map_err(|_| CredentialsError::Encode {
            what: "private key",
        })
}

fn cert_pem(cert: &x509_cert::Certificate) -> Result<String, CredentialsError> {
    cert.to_pem(LineEnding::LF)
        .map_err(|_| CredentialsError::Encode {
            what: "certificate",
        })
}

fn name(rfc4514: &str) -> Result<Name, CredentialsError> {
    Name::from_str(rfc4514).map_err(|_| CredentialsError::Encode { what: "name" })
}

/// 16 random bytes with the top bit cleared (a positive INTEGER) and the next one set (so it
/// keeps all 16 bytes).
fn random_serial() -> Result<SerialNumber, CredentialsError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(CredentialsError::Random)?;
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    SerialNumber::new(&bytes).map_err(|_| CredentialsError::Encode {
        what: "serial number",
    })
}

fn validity(now: SystemTime, lifetime: Duration) -> Result<Validity, CredentialsError> {
    let out_of_range = || CredentialsError::Encode { what: "validity" };
    let not_before = now.checked_sub(BACKDATE).unwrap_or(now);
    let not_after = now.checked_add(lifetime).ok_or_else(out_of_range)?;
    let time = |t: SystemTime| Time::try_from(t).map_err(|_| out_of_range());
    Ok(Validity::new(time(not_before)?, time(not_after)?))
}

fn key_identifier(spk: SubjectPublicKeyInfoRef<'_>) -> BuildResult<OctetString> {
    Ok(SubjectKeyIdentifier::try_from(spk)?.0)
}

/// Appends `extension`; its default criticality may depend on those before it.
fn append<E>(extensions: &mut Vec<Extension>, subject: &Name, extension: E) -> BuildResult<()>
where
    E: Criticality + AssociatedOid + der::Encode,
{
    let extension = extension.to_extension(subject, extensions)?;
    extensions.push(extension);
    Ok(())
}

/// kubeadm's CA profile: `CA:TRUE`, keyCertSign, cRLSign, digitalSignature, an SKI.
struct CaProfile {
    subject: Name,
}

impl BuilderProfile for CaProfile {
    fn get_issuer(&self, subject: &Name) -> Name {
        subject.clone()
    }

    fn get_subject(&self) -> Name {
        self.subject.clone()
    }

    fn build_extensions(
        &self,
        spk: SubjectPublicKeyInfoRef<'_>,
        _issuer_spk: SubjectPublicKeyInfoRef<'_>,
        tbs: &TbsCertificate,
    ) -> BuildResult<Vec<Extension>> {
        let subject = tbs.subject();
        let mut extensions = Vec::new();
        let constraints = BasicConstraints {
            ca: true,
            path_len_constraint: None,
        };
        append(&mut extensions, subject, constraints)?;
        let usages = KeyUsages::KeyCertSign | KeyUsages::CRLSign | KeyUsages::DigitalSignature;
        append(&mut extensions, subject, KeyUsage(usages))?;
        let ski = SubjectKeyIdentifier(key_identifier(spk)?);
        append(&mut extensions, subject, ski)?;
        Ok(extensions)
    }
}

/// A TLS client certificate: `CA:FALSE`, digitalSignature, clientAuth, an AKI.
struct ClientProfile {
    subject: Name,
    issuer: Name,
}

impl BuilderProfile for ClientProfile {
    fn get_issuer(&self, _subject: &Name) -> Name {
        self.issuer.clone()
    }

    fn get_subject(&self) -> Name {
        self.subject.clone()
    }

    fn build_extensions(
        &self,
        _spk: SubjectPublicKeyInfoRef<'_>,
        issuer_spk: SubjectPublicKeyInfoRef<'_>,
        tbs: &TbsCertificate,
    ) -> BuildResult<Vec<Extension>> {
        let subject = tbs.subject();
        let mut extensions = Vec::new();
        let constraints = BasicConstraints {
            ca: false,
            path_len_constraint: None,
        };
        append(&mut extensions, subject, constraints)?;
        append(
            &mut extensions,
            subject,
            KeyUsage(KeyUsages::DigitalSignature.into()),
        )?;
        append(
            &mut extensions,
            subject,
            ExtendedKeyUsage(vec![CLIENT_AUTH]),
        )?;
        let aki = AuthorityKeyIdentifier {
            key_identifier: Some(key_identifier(issuer_spk)?),
            ..Default::default()
        };
        append(&mut extensions, subject, aki)?;
        Ok(extensions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_credentials_are_a_ca_an_admin_certificate_and_distinct_tokens() {
        let c = ServiceCredentials::mint("m1", SystemTime::now()).unwrap();
        assert!(c.ca_cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(c.ca_key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(boot_check::is_ca_cert_hash(&c.ca_cert_hash));
        assert_eq!(
            boot_check::ca_cert_hash(&c.ca_cert_pem).unwrap(),
            c.ca_cert_hash
        );
        let (t0, t1) = (c.join_token(0), c.join_token(1));
        assert!(boot_check::is_bootstrap_token(&t0));
        assert!(boot_check::is_bootstrap_token(&t1));
        assert_eq!(t0, c.join_token(0), "a generation's token is stable");
        assert_ne!(t0[..6], t1[..6], "a renewed token has a new id");
        let debug = format!("{c:?}");
        assert!(!debug.contains("PRIVATE") && !debug.contains(&c.token_seed));
    }

    #[test]
    fn the_admin_kubeconfig_names_the_endpoint_and_embeds_the_ca() {
        let c = ServiceCredentials::mint("m1", SystemTime::now()).unwrap();
        let endpoint = Endpoint {
            host: "mcp-1.sim".into(),
            port: 443,
        };
        let yaml: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&c.admin_kubeconfig("m1", &endpoint)).unwrap();
        let cluster = &yaml["clusters"][0]["cluster"];
        assert_eq!(cluster["server"].as_str(), Some("https://mcp-1.sim:443"));
        let ca = BASE64
            .decode(cluster["certificate-authority-data"].as_str().unwrap())
            .unwrap();
        assert_eq!(String::from_utf8(ca).unwrap(), c.ca_cert_pem);
        assert_eq!(yaml["current-context"].as_str(), Some("m1-admin@m1"));
    }
}
