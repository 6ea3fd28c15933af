use std::time::{Duration, SystemTime};

use der::{Decode, Encode};
use rsa::signature::Verifier;
use spki::ObjectIdentifier;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};

use super::*;

fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    }
}

fn extension<'a, T: Decode<'a> + der::oid::AssociatedOid>(cert: &'a Certificate) -> (bool, T) {
    match cert.tbs_certificate().get_extension::<T>() {
        Ok(Some(found)) => found,
        Ok(None) => panic!("no extension {}", T::OID),
        Err(e) => panic!("extension {}: {e}", T::OID),
    }
}

/// Whether `cert`'s signature verifies with `issuer`'s public key.
fn signed_by(cert: &Certificate, issuer: &KeyPair) -> bool {
    let tbs = ok(cert.tbs_certificate().to_der());
    let sig = cert.signature().raw_bytes();
    match issuer {
        KeyPair::Rsa(key) => {
            let verifier = rsa::pkcs1v15::VerifyingKey::<sha2::Sha256>::new(key.to_public_key());
            let sig = ok(rsa::pkcs1v15::Signature::try_from(sig));
            verifier.verify(&tbs, &sig).is_ok()
        }
        KeyPair::EcdsaP256(key) => {
            let sig = ok(p256::ecdsa::DerSignature::from_bytes(sig));
            key.verifying_key().verify(&tbs, &sig).is_ok()
        }
    }
}

#[test]
fn ca_has_the_kubeadm_profile() {
    let now = SystemTime::now();
    let ca = ok(self_signed_ca("etcd-ca", KeyAlgorithm::EcdsaP256, now));
    let tbs = ca.cert.tbs_certificate();
    assert_eq!(tbs.subject().to_string(), "CN=etcd-ca");
    assert_eq!(tbs.issuer(), tbs.subject());

    let (critical, bc) = extension::<BasicConstraints>(&ca.cert);
    assert!(critical && bc.ca);
    let (critical, ku) = extension::<KeyUsage>(&ca.cert);
    assert!(critical);
    assert_eq!(
        ku.0,
        KeyUsages::KeyCertSign | KeyUsages::CRLSign | KeyUsages::DigitalSignature
    );
    let (critical, _ski) = extension::<SubjectKeyIdentifier>(&ca.cert);
    assert!(!critical);

    let validity = tbs.validity();
    let start = validity.not_before.to_system_time();
    let end = validity.not_after.to_system_time();
    assert!(start < now && start + BACKDATE + Duration::from_secs(1) >= now);
    let years = ok(end.duration_since(start)).as_secs() / (365 * 24 * 3600);
    assert_eq!(years, 10);

    assert!(tbs.serial_number().as_bytes().len() <= 20);
    assert!(signed_by(&ca.cert, &ca.key));
}

#[test]
fn rsa_ca_signs_with_its_2048_bit_key() {
    let ca = ok(self_signed_ca(
        CLUSTER_CA_NAME,
        KeyAlgorithm::Rsa2048,
        SystemTime::now(),
    ));
    let KeyPair::Rsa(key) = &ca.key else {
        panic!("{:?}", ca.key);
    };
    assert_eq!(rsa::traits::PublicKeyParts::size(key.as_ref()), 256);
    assert!(signed_by(&ca.cert, &ca.key));
    let pem = ok(ca.key.to_pkcs8_pem());
    assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
    let back = ok(KeyPair::from_pkcs8_pem(&pem));
    assert_eq!(back.algorithm(), KeyAlgorithm::Rsa2048);
    assert_eq!(ok(back.public_key_pem()), ok(ca.key.public_key_pem()));
}

#[test]
fn client_cert_chains_to_its_ca() {
    let now = SystemTime::now();
    let ca = ok(self_signed_ca("kubernetes", KeyAlgorithm::EcdsaP256, now));
    let client = ok(client_cert(
        &ca,
        "kubernetes-admin",
        "kubeadm:cluster-admins",
        KeyAlgorithm::EcdsaP256,
        now,
        CLIENT_VALIDITY,
    ));
    let tbs = client.cert.tbs_certificate();
    assert_eq!(
        tbs.subject().to_string(),
        "CN=kubernetes-admin,O=kubeadm:cluster-admins"
    );
    assert_eq!(tbs.issuer(), ca.cert.tbs_certificate().subject());
    assert!(signed_by(&client.cert, &ca.key));
    assert!(!signed_by(&client.cert, &client.key));

    let (_, bc) = extension::<BasicConstraints>(&client.cert);
    assert!(!bc.ca);
    let (_, ku) = extension::<KeyUsage>(&client.cert);
    assert_eq!(
        ku.0,
        der::flagset::FlagSet::from(KeyUsages::DigitalSignature)
    );
    let (_, eku) = extension::<ExtendedKeyUsage>(&client.cert);
    assert_eq!(eku.0, [ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.2")]);
    let (_, aki) = extension::<AuthorityKeyIdentifier>(&client.cert);
    let (_, ski) = extension::<SubjectKeyIdentifier>(&ca.cert);
    assert_eq!(aki.key_identifier, Some(ski.0));
}

#[test]
fn client_cert_never_outlives_its_ca() {
    let then = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let ca = ok(self_signed_ca("kubernetes", KeyAlgorithm::EcdsaP256, then));
    let late = then + CA_VALIDITY - Duration::from_secs(3600);
    let client = ok(client_cert(
        &ca,
        "u",
        "g",
        KeyAlgorithm::EcdsaP256,
        late,
        CLIENT_VALIDITY,
    ));
    assert_eq!(
        client.cert.tbs_certificate().validity().not_after,
        ca.cert.tbs_certificate().validity().not_after
    );
}

#[test]
fn pem_round_trip_and_hash_format() {
    let ca = ok(self_signed_ca(
        "kubernetes",
        KeyAlgorithm::EcdsaP256,
        SystemTime::now(),
    ));
    let pem = ok(cert_to_pem(&ca.cert));
    assert!(pem.starts_with("-----BEGIN CERTIFICATE-----\n"));
    let back = ok(cert_from_pem(pem.as_bytes()));
    assert_eq!(back, ca.cert);
    let hash = ok(ca_cert_hash(&back));
    assert!(capw_simcloud::boot_check::is_ca_cert_hash(&hash), "{hash}");
    assert_eq!(hash, hash.to_lowercase());
    // The hash covers the public key only: the same key in another certificate hashes alike.
    let spki = ok(ca.cert.tbs_certificate().subject_public_key_info().to_der());
    let expected: String = Sha256::digest(&spki)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hash, format!("sha256:{expected}"));
    assert!(matches!(
        cert_from_pem(b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
        Err(PkiError::BadCertificate(_))
    ));
}

#[test]
fn serials_differ_and_are_positive() {
    let now = SystemTime::now();
    let a = ok(self_signed_ca("a", KeyAlgorithm::EcdsaP256, now));
    let b = ok(self_signed_ca("a", KeyAlgorithm::EcdsaP256, now));
    let (sa, sb) = (
        a.cert.tbs_certificate().serial_number(),
        b.cert.tbs_certificate().serial_number(),
    );
    assert_ne!(sa, sb);
    assert_eq!(sa.as_bytes().len(), 16);
    assert!(sa.as_bytes()[0] & 0x80 == 0);
}

#[test]
fn key_pem_errors_carry_no_input() {
    let secret = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0LXNlY3JldA==\n-----END PRIVATE KEY-----\n";
    let Err(e) = KeyPair::from_pkcs8_pem(secret) else {
        panic!("garbage parsed as a key");
    };
    assert!(!e.to_string().contains("c2VjcmV0"), "{e}");
    let ec = ok(KeyPair::generate(KeyAlgorithm::EcdsaP256));
    let back = ok(KeyPair::from_pkcs8_pem(&ok(ec.to_pkcs8_pem())));
    assert_eq!(back.algorithm(), KeyAlgorithm::EcdsaP256);
    assert_eq!(format!("{ec:?}"), "KeyPair(EcdsaP256)");
}

#[test]
fn cluster_pki_names_its_cas_as_kubeadm() {
    let pki = ok(ClusterPki::generate(
        KeyAlgorithm::EcdsaP256,
        SystemTime::now(),
    ));
    let cn = |c: &CertifiedKey| c.cert.tbs_certificate().subject().to_string();
    assert_eq!(cn(&pki.ca), "CN=kubernetes");
    assert_eq!(cn(&pki.etcd_ca), "CN=etcd-ca");
    assert_eq!(cn(&pki.front_proxy_ca), "CN=front-proxy-ca");
    assert_ne!(
        ok(pki.ca.key.public_key_pem()),
        ok(pki.etcd_ca.key.public_key_pem())
    );
}
