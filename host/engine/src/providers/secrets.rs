//! Secrets granted to providers, in local mode: files under `<state-dir>/secrets/`.
//!
//! A `WasmProvider` grant `{name: G, secretRef: {name: S, key: K}}` reads the file
//! `<state-dir>/secrets/S/K`; without `key`, the file `<state-dir>/secrets/S`. The
//! `secretRef.namespace` is ignored: the local mode has one secret directory. A missing file
//! means "granted, but not found" (the provider is told `not-found` and may retry). Files are
//! read through a cap-std directory, so a `secretRef` cannot name a file outside it.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::path::Path;

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use capw_api::SecretGrant;
use capw_runtime::Secret;

/// The local secret directory.
#[derive(Debug)]
pub struct FileSecrets {
    dir: Option<Dir>,
}

/// A secret grant that cannot be read for another reason than absence.
#[derive(Debug, thiserror::Error)]
#[error("secret {secret:?} (grant {grant:?})")]
pub struct SecretReadError {
    /// The grant name.
    pub grant: String,
    /// The file under the secrets directory.
    pub secret: String,
    #[source]
    pub source: std::io::Error,
}

impl FileSecrets {
    /// The secrets under `dir`; a missing directory holds no secret.
    ///
    /// # Errors
    ///
    /// When `dir` exists but cannot be opened.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        match Dir::open_ambient_dir(dir, ambient_authority()) {
            Ok(dir) => Ok(FileSecrets { dir: Some(dir) }),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(FileSecrets { dir: None }),
            Err(e) => Err(e),
        }
    }

    /// The value of each grant, `None` when its file does not exist.
    ///
    /// # Errors
    ///
    /// [`SecretReadError`] when a file exists but cannot be read, or the reference tries to
    /// leave the secrets directory.
    pub fn resolve(
        &self,
        grants: &[SecretGrant],
    ) -> Result<BTreeMap<String, Option<Secret>>, SecretReadError> {
        let mut out = BTreeMap::new();
        for grant in grants {
            let r = &grant.secret_ref;
            let file = match &r.key {
                Some(key) => format!("{}/{key}", r.name),
                None => r.name.clone(),
            };
            let value = match &self.dir {
                None => None,
                Some(dir) => match dir.read(&file) {
                    Ok(bytes) => Some(Secret::new(trim_newline(bytes))),
                    Err(e) if e.kind() == ErrorKind::NotFound => None,
                    Err(source) => {
                        return Err(SecretReadError {
                            grant: grant.name.clone(),
                            secret: file,
                            source,
                        });
                    }
                },
            };
            out.insert(grant.name.clone(), value);
        }
        Ok(out)
    }
}

impl FileSecrets {
    /// The files `<name>/<key>` of the secret `name` that exist, by key: a whole secret with
    /// several keys (registry credentials, for one).
    ///
    /// # Errors
    ///
    /// When a file exists but cannot be read, or `name` tries to leave the directory.
    pub fn read_keys(
        &self,
        name: &str,
        keys: &[&str],
    ) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
        let mut out = BTreeMap::new();
        let Some(dir) = &self.dir else {
            return Ok(out);
        };
        for key in keys {
            match dir.read(format!("{name}/{key}")) {
                Ok(bytes) => {
                    out.insert((*key).to_owned(), bytes);
                }
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}

/// `echo token > file` leaves a newline no token means.
fn trim_newline(mut bytes: Vec<u8>) -> Vec<u8> {
    while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
        bytes.pop();
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use capw_api::SecretRef;

    fn grant(name: &str, secret: &str, key: Option<&str>) -> SecretGrant {
        SecretGrant {
            name: name.into(),
            secret_ref: SecretRef {
                namespace: None,
                name: secret.into(),
                key: key.map(Into::into),
            },
        }
    }

    #[test]
    fn reads_keyed_and_plain_files_and_reports_missing_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sim")).unwrap();
        std::fs::write(dir.path().join("sim/token"), "t0k\n").unwrap();
        std::fs::write(dir.path().join("plain"), "p").unwrap();
        let secrets = FileSecrets::open(dir.path()).unwrap();
        let got = secrets
            .resolve(&[
                grant("a", "sim", Some("token")),
                grant("b", "plain", None),
                grant("c", "absent", None),
            ])
            .unwrap();
        assert_eq!(got["a"].as_ref().unwrap().expose(), b"t0k");
        assert_eq!(got["b"].as_ref().unwrap().expose(), b"p");
        assert!(got["c"].is_none());
    }

    #[test]
    fn refuses_to_leave_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("s")).unwrap();
        std::fs::write(dir.path().join("outside"), "x").unwrap();
        let secrets = FileSecrets::open(&dir.path().join("s")).unwrap();
        assert!(secrets.resolve(&[grant("a", "../outside", None)]).is_err());
    }
}
