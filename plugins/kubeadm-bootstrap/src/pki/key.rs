//! Key pairs of either algorithm, their PEM forms, and signing certificates with them.

use der::pem::LineEnding;
use p256::ecdsa::{DerSignature, SigningKey as EcdsaKey};
use rsa::pkcs1v15::{Signature as RsaSignature, SigningKey as RsaSigningKey};
use rsa::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rsa::sha2::Sha256;
use spki::SubjectPublicKeyInfoOwned;
use x509_cert::builder::Builder;

use super::PkiError;
use crate::config::KeyAlgorithm;

/// The RSA modulus size of [`KeyAlgorithm::Rsa2048`].
const RSA_BITS: usize = 2048;

/// A private key and its public half.
///
/// # Caveats
///
/// Secret material: its `Debug` prints the algorithm only.
pub enum KeyPair {
    /// RSA; signs with PKCS#1 v1.5 and SHA-256 (`sha256WithRSAEncryption`).
    Rsa(Box<rsa::PrivateKey>),
    /// ECDSA on P-256; signs with `ecdsa-with-SHA256`.
    EcdsaP256(EcdsaKey),
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyPair({:?})", self.algorithm())
    }
}

impl KeyPair {
    /// A fresh key from the platform's random source (`wasi:random` in the component).
    ///
    /// # Errors
    ///
    /// [`PkiError::KeyGeneration`] when the random source or the prime search fails.
    pub fn generate(algorithm: KeyAlgorithm) -> Result<Self, PkiError> {
        let mut rng = getrandom::SysRng;
        match algorithm {
            KeyAlgorithm::Rsa2048 => rsa::PrivateKey::new(&mut rng, RSA_BITS)
                .map(|key| KeyPair::Rsa(Box::new(key)))
                .map_err(|e| PkiError::KeyGeneration {
                    algorithm,
                    source: Box::new(e),
                }),
            KeyAlgorithm::EcdsaP256 => {
                use p256::elliptic_curve::Generate as _;
                EcdsaKey::try_generate_from_rng(&mut rng)
                    .map(KeyPair::EcdsaP256)
                    .map_err(|e| PkiError::KeyGeneration {
                        algorithm,
                        source: Box::new(e),
                    })
            }
        }
    }

    /// The key's algorithm.
    pub fn algorithm(&self) -> KeyAlgorithm {
        match self {
            KeyPair::Rsa(_) => KeyAlgorithm::Rsa2048,
            KeyPair::EcdsaP256(_) => KeyAlgorithm::EcdsaP256,
        }
    }

    /// Reads a PKCS#8 PEM private key (`BEGIN PRIVATE KEY`) of either algorithm, as
    /// [`KeyPair::to_pkcs8_pem`] writes it.
    ///
    /// # Errors
    ///
    /// [`PkiError::UnsupportedKey`] when it is neither an RSA nor a P-256 PKCS#8 key. The
    /// error carries no part of the input.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, PkiError> {
        if let Ok(key) = rsa::PrivateKey::from_pkcs8_pem(pem) {
            return Ok(KeyPair::Rsa(Box::new(key)));
        }
        EcdsaKey::from_pkcs8_pem(pem)
            .map(KeyPair::EcdsaP256)
            .map_err(|_| PkiError::UnsupportedKey)
    }

    /// The private key as PKCS#8 PEM (`BEGIN PRIVATE KEY`), which kubeadm and every
    /// Kubernetes component read. Secret.
    ///
    /// # Errors
    ///
    /// [`PkiError::Encode`] if the key does not encode (not expected for a valid key).
    pub fn to_pkcs8_pem(&self) -> Result<String, PkiError> {
        let pem = match self {
            KeyPair::Rsa(key) => key.to_pkcs8_pem(LineEnding::LF),
            KeyPair::EcdsaP256(key) => key.to_pkcs8_pem(LineEnding::LF),
        }
        .map_err(|e| PkiError::Encode {
            what: "private key",
            source: Box::new(e),
        })?;
        Ok(pem.as_str().to_owned())
    }

    /// The public key as SubjectPublicKeyInfo PEM (`BEGIN PUBLIC KEY`), as kubeadm writes
    /// `sa.pub`.
    ///
    /// # Errors
    ///
    /// [`PkiError::Encode`] if the key does not encode.
    pub fn public_key_pem(&self) -> Result<String, PkiError> {
        match self {
            KeyPair::Rsa(key) => key.to_public_key().to_public_key_pem(LineEnding::LF),
            KeyPair::EcdsaP256(key) => key.verifying_key().to_public_key_pem(LineEnding::LF),
        }
        .map_err(|e| PkiError::Encode {
            what: "public key",
            source: Box::new(e),
        })
    }

    /// The public key as the SubjectPublicKeyInfo a certificate carries.
    ///
    /// # Errors
    ///
    /// [`PkiError::Encode`] if the key does not encode.
    pub fn public_key_info(&self) -> Result<SubjectPublicKeyInfoOwned, PkiError> {
        let spki = match self {
            KeyPair::Rsa(key) => SubjectPublicKeyInfoOwned::from_key(&key.to_public_key()),
            KeyPair::EcdsaP256(key) => SubjectPublicKeyInfoOwned::from_key(key.verifying_key()),
        };
        spki.map_err(|e| PkiError::Encode {
            what: "public key",
            source: Box::new(e),
        })
    }

    /// Signs what `builder` assembled (a certificate) with this key.
    ///
    /// # Errors
    ///
    /// The builder's error, for `subject` (what is being signed, for the message).
    pub(super) fn sign<B: Builder>(
        &self,
        builder: B,
        subject: &str,
    ) -> Result<B::Output, PkiError> {
        let signed = match self {
            KeyPair::Rsa(key) => {
                let signer = RsaSigningKey::<Sha256>::new(key.as_ref().clone());
                builder.build::<_, RsaSignature>(&signer)
            }
            KeyPair::EcdsaP256(key) => builder.build::<_, DerSignature>(key),
        };
        signed.map_err(|source| PkiError::Certificate {
            subject: subject.to_owned(),
            source,
        })
    }
}
