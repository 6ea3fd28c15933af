//! kubeadm bootstrap tokens: `[a-z0-9]{6}.[a-z0-9]{16}`, the id public, the secret not.

use std::fmt;

/// The characters a token is made of.
const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Length of the public id.
const ID_LEN: usize = 6;
/// Length of the secret part.
const SECRET_LEN: usize = 16;

/// A bootstrap token. Secret: its `Debug` shows the id only.
#[derive(Clone, PartialEq, Eq)]
pub struct BootstrapToken(String);

impl BootstrapToken {
    /// A fresh token, each character uniform over `[a-z0-9]`.
    ///
    /// # Errors
    ///
    /// The random source's error.
    pub fn generate() -> Result<Self, getrandom::Error> {
        let mut chars = Vec::with_capacity(ID_LEN + SECRET_LEN);
        let mut pool = [0u8; 64];
        while chars.len() < ID_LEN + SECRET_LEN {
            getrandom::fill(&mut pool)?;
            // 252 = 7 * 36: bytes above it would favour the first letters.
            chars.extend(
                pool.iter()
                    .filter(|b| **b < 252)
                    .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()])
                    .take(ID_LEN + SECRET_LEN - chars.len()),
            );
        }
        let (id, secret) = chars.split_at(ID_LEN);
        Ok(Self(format!(
            "{}.{}",
            String::from_utf8_lossy(id),
            String::from_utf8_lossy(secret)
        )))
    }

    /// `text` as a token, if it has the form `[a-z0-9]{6}.[a-z0-9]{16}`.
    pub fn parse(text: &str) -> Option<Self> {
        let valid =
            |s: &str, len: usize| s.len() == len && s.bytes().all(|b| ALPHABET.contains(&b));
        let (id, secret) = text.split_once('.')?;
        (valid(id, ID_LEN) && valid(secret, SECRET_LEN)).then(|| Self(text.to_owned()))
    }

    /// The whole token. Secret.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The public id, the part before the dot.
    pub fn id(&self) -> &str {
        &self.0[..ID_LEN]
    }

    /// The secret part, after the dot. Secret.
    pub fn secret(&self) -> &str {
        &self.0[ID_LEN + 1..]
    }
}

impl fmt::Debug for BootstrapToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BootstrapToken({}.<redacted>)", self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_have_the_form_and_differ() {
        let a = match BootstrapToken::generate() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        let b = match BootstrapToken::generate() {
            Ok(t) => t,
            Err(e) => panic!("{e}"),
        };
        assert!(capw_simcloud::boot_check::is_bootstrap_token(a.as_str()));
        assert_eq!(BootstrapToken::parse(a.as_str()), Some(a.clone()));
        assert_ne!(a, b);
        assert_eq!(a.id().len(), 6);
        assert_eq!(format!("{}.{}", a.id(), a.secret()), a.as_str());
    }

    #[test]
    fn parse_refuses_other_forms() {
        assert!(BootstrapToken::parse("abcdef.0123456789abcdef").is_some());
        for bad in [
            "",
            "abcdef0123456789abcdef",
            "ABCDEF.0123456789abcdef",
            "abcde.0123456789abcdefg",
            "abcdef.0123456789abcde_",
        ] {
            assert!(BootstrapToken::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn debug_hides_the_secret() {
        let t = BootstrapToken("abcdef.0123456789abcdef".into());
        let shown = format!("{t:?}");
        assert!(shown.contains("abcdef"), "{shown}");
        assert!(!shown.contains("0123456789abcdef"), "{shown}");
    }
}
