//! The two certificate profiles the provider issues: self-signed cluster CAs and client
//! certificates signed by one of them.

use std::str::FromStr;
use std::time::{Duration, SystemTime};

use der::asn1::OctetString;
use der::oid::AssociatedOid;
use spki::{ObjectIdentifier, SubjectPublicKeyInfoRef};
use x509_cert::builder::profile::BuilderProfile;
use x509_cert::builder::{CertificateBuilder, Result as BuildResult};
use x509_cert::certificate::{Certificate, TbsCertificate};
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};
use x509_cert::ext::{Criticality, Extension, ToExtension};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};

use super::{KeyPair, PkiError};

/// How far before "now" certificates start: a node whose clock lags the provider's a little
/// still accepts them.
pub const BACKDATE: Duration = Duration::from_secs(5 * 60);

/// Lifetime of a CA, as kubeadm's: ten years.
pub const CA_VALIDITY: Duration = Duration::from_secs(10 * 365 * 24 * 60 * 60);

/// Lifetime of a client certificate, as kubeadm's `admin.conf`: one year.
pub const CLIENT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// `id-kp-clientAuth` (RFC 5280, 4.2.1.12).
const CLIENT_AUTH: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.2");

/// A certificate and the key it certifies.
#[derive(Debug)]
pub struct CertifiedKey {
    /// The certificate.
    pub cert: Certificate,
    /// Its private key. Secret.
    pub key: KeyPair,
}

/// A self-signed CA certificate for a fresh key of `algorithm`, subject `CN=<common_name>`.
///
/// # Guarantees
///
/// basicConstraints `CA:TRUE` and keyUsage `keyCertSign, cRLSign, digitalSignature`, both
/// critical; a subjectKeyIdentifier (SHA-1 of the public key); valid from [`BACKDATE`] before
/// `now` for [`CA_VALIDITY`]; a random 127-bit serial number.
///
/// # Errors
///
/// [`PkiError`] when key generation, the random source or signing fails.
pub fn self_signed_ca(
    common_name: &str,
    algorithm: crate::config::KeyAlgorithm,
    now: SystemTime,
) -> Result<CertifiedKey, PkiError> {
    let key = KeyPair::generate(algorithm)?;
    let subject = name(&format!("CN={common_name}"))?;
    let builder = CertificateBuilder::new(
        CaProfile { subject },
        random_serial()?,
        validity(now, CA_VALIDITY)?,
        key.public_key_info()?,
    )
    .map_err(|source| PkiError::Certificate {
        subject: common_name.to_owned(),
        source,
    })?;
    let cert = key.sign(builder, common_name)?;
    Ok(CertifiedKey { cert, key })
}

/// A client certificate signed by `ca` for a fresh key of `algorithm`, subject
/// `O=<organization>, CN=<common_name>` (Kubernetes reads the user from CN, groups from O).
///
/// # Guarantees
///
/// basicConstraints `CA:FALSE` and keyUsage `digitalSignature` (plus `keyEncipherment` for
/// RSA), both critical; extendedKeyUsage `clientAuth`; authorityKeyIdentifier matching the
/// CA's subjectKeyIdentifier; valid from [`BACKDATE`] before `now` for `lifetime`, but never
/// past the CA's own end.
///
/// # Errors
///
/// [`PkiError`] when key generation, the random source or signing fails.
pub fn client_cert(
    ca: &CertifiedKey,
    common_name: &str,
    organization: &str,
    algorithm: crate::config::KeyAlgorithm,
    now: SystemTime,
    lifetime: Duration,
) -> Result<CertifiedKey, PkiError> {
    let key = KeyPair::generate(algorithm)?;
    // RFC 4514 order: most specific first, so CN ends up last in the certificate.
    let subject = name(&format!("CN={common_name},O={organization}"))?;
    let mut validity = validity(now, lifetime)?;
    let ca_end = ca.cert.tbs_certificate().validity().not_after;
    if ca_end.to_unix_duration() < validity.not_after.to_unix_duration() {
        validity.not_after = ca_end;
    }
    let builder = CertificateBuilder::new(
        ClientProfile {
            subject,
            issuer: ca.cert.tbs_certificate().subject().clone(),
            key_encipherment: key.algorithm() == crate::config::KeyAlgorithm::Rsa2048,
        },
        random_serial()?,
        validity,
        key.public_key_info()?,
    )
    .map_err(|source| PkiError::Certificate {
        subject: common_name.to_owned(),
        source,
    })?;
    let cert = ca.key.sign(builder, common_name)?;
    Ok(CertifiedKey { cert, key })
}

fn name(rfc4514: &str) -> Result<Name, PkiError> {
    Name::from_str(rfc4514).map_err(|source| PkiError::Name {
        name: rfc4514.to_owned(),
        source,
    })
}

/// 16 random bytes with the top bit cleared (a positive INTEGER) and the next one set (so it
/// keeps all 16 bytes): unique per certificate, as RFC 5280 asks, without a counter.
fn random_serial() -> Result<SerialNumber, PkiError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(PkiError::Random)?;
    bytes[0] = (bytes[0] & 0x7f) | 0x40;
    SerialNumber::new(&bytes).map_err(|e| PkiError::Encode {
        what: "serial number",
        source: Box::new(e),
    })
}

fn validity(now: SystemTime, lifetime: Duration) -> Result<Validity, PkiError> {
    let not_before = now.checked_sub(BACKDATE).unwrap_or(now);
    let not_after = now.checked_add(lifetime).ok_or(PkiError::ClockOutOfRange)?;
    let time = |t: SystemTime| Time::try_from(t).map_err(|_| PkiError::ClockOutOfRange);
    Ok(Validity::new(time(not_before)?, time(not_after)?))
}

/// The SHA-1 key identifier of a public key, as both SKI and AKI use it.
fn key_identifier(spk: SubjectPublicKeyInfoRef<'_>) -> BuildResult<OctetString> {
    Ok(SubjectKeyIdentifier::try_from(spk)?.0)
}

/// Appends `extension` to `extensions`; its default criticality may depend on those before
/// it, which is why they are built one after the other.
fn append<E>(extensions: &mut Vec<Extension>, subject: &Name, extension: E) -> BuildResult<()>
where
    E: Criticality + AssociatedOid + der::Encode,
{
    let extension = extension.to_extension(subject, extensions)?;
    extensions.push(extension);
    Ok(())
}

/// A self-signed CA.
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
        append(
            &mut extensions,
            subject,
            BasicConstraints {
                ca: true,
                path_len_constraint: None,
            },
        )?;
        append(
            &mut extensions,
            subject,
            KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign | KeyUsages::DigitalSignature),
        )?;
        append(
            &mut extensions,
            subject,
            SubjectKeyIdentifier(key_identifier(spk)?),
        )?;
        Ok(extensions)
    }
}

/// A TLS client certificate issued by a CA.
struct ClientProfile {
    subject: Name,
    issuer: Name,
    key_encipherment: bool,
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
        let mut usages = KeyUsages::DigitalSignature.into();
        if self.key_encipherment {
            usages |= KeyUsages::KeyEncipherment;
        }
        let subject = tbs.subject();
        let mut extensions = Vec::new();
        append(
            &mut extensions,
            subject,
            BasicConstraints {
                ca: false,
                path_len_constraint: None,
            },
        )?;
        append(&mut extensions, subject, KeyUsage(usages))?;
        append(
            &mut extensions,
            subject,
            ExtendedKeyUsage(vec![CLIENT_AUTH]),
        )?;
        append(
            &mut extensions,
            subject,
            AuthorityKeyIdentifier {
                key_identifier: Some(key_identifier(issuer_spk)?),
                ..Default::default()
            },
        )?;
        Ok(extensions)
    }
}
