//! The on-disk content cache: manifests and components by digest, and the digest each
//! reference last resolved to, so a cached component needs no registry.
//!
//! Layout under `<cache-dir>/oci/`: `blobs/sha256/<hex>` (content-addressed; every read is
//! hashed and a blob that does not match its name is deleted, never served) and
//! `refs/<sha256 of the reference>` (the manifest digest, as text). Every file access goes
//! through a cap-std [`Dir`] and every name is made here from a checked digest, never taken
//! from a manifest. Writes go to a temporary name and are renamed into place.

use std::io::ErrorKind;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};

use crate::error::OciError;

/// `sha256:<hex>` of `bytes`.
pub(crate) fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The hex part of a `sha256:<64 hex>` digest.
///
/// # Errors
///
/// [`OciError::InvalidDigest`] for any other form.
pub(crate) fn digest_hex(digest: &str) -> Result<&str, OciError> {
    digest
        .strip_prefix("sha256:")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .ok_or_else(|| OciError::InvalidDigest {
            digest: digest.to_owned(),
        })
}

/// Checks that `digest` is `sha256:<64 lowercase hex digits>`, the only form capw pins.
///
/// # Errors
///
/// [`OciError::InvalidDigest`] for any other form.
pub fn check_digest(digest: &str) -> Result<(), OciError> {
    digest_hex(digest).map(|_| ())
}

/// A directory of pulled manifests and components.
#[derive(Debug)]
pub struct ContentCache {
    dir: Dir,
    root: String,
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

impl ContentCache {
    /// Opens (creating it if needed) the cache under `<cache_dir>/oci`.
    ///
    /// # Errors
    ///
    /// [`OciError::Cache`] when the directory cannot be created or opened.
    pub fn open(cache_dir: &Path) -> Result<Self, OciError> {
        let root = cache_dir.join("oci");
        let name = root.display().to_string();
        let io = |op| {
            let name = name.clone();
            move |source| OciError::Cache { op, name, source }
        };
        std::fs::create_dir_all(root.join("blobs/sha256")).map_err(io("create"))?;
        std::fs::create_dir_all(root.join("refs")).map_err(io("create"))?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority()).map_err(io("open"))?;
        Ok(ContentCache { dir, root: name })
    }

    /// The blob named `digest`, if cached and sound.
    ///
    /// # Errors
    ///
    /// [`OciError::InvalidDigest`], or [`OciError::Cache`] when the file cannot be read.
    pub fn blob(&self, digest: &str) -> Result<Option<Vec<u8>>, OciError> {
        let name = format!("blobs/sha256/{}", digest_hex(digest)?);
        let bytes = match self.dir.read(&name) {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(self.error("read", &name, source)),
        };
        if sha256_digest(&bytes) != digest {
            tracing::warn!(%digest, "cached blob does not match its digest: deleted");
            let _ = self.dir.remove_file(&name);
            return Ok(None);
        }
        Ok(Some(bytes))
    }

    /// Whether a blob named `digest` is present (not checked).
    pub fn has_blob(&self, digest: &str) -> bool {
        digest_hex(digest)
            .map(|hex| self.dir.exists(format!("blobs/sha256/{hex}")))
            .unwrap_or(false)
    }

    /// Stores `bytes` under their digest, which is returned.
    ///
    /// # Errors
    ///
    /// [`OciError::Cache`] when the file cannot be written.
    pub fn put_blob(&self, bytes: &[u8]) -> Result<String, OciError> {
        let digest = sha256_digest(bytes);
        let name = format!("blobs/sha256/{}", digest_hex(&digest)?);
        self.write(&name, bytes)?;
        Ok(digest)
    }

    /// The manifest digest `reference` last resolved to.
    ///
    /// # Errors
    ///
    /// [`OciError::Cache`] when the record exists but cannot be read.
    pub fn resolved(&self, reference: &str) -> Result<Option<String>, OciError> {
        let name = ref_name(reference);
        match self.dir.read_to_string(&name) {
            Ok(s) => Ok(digest_hex(s.trim()).is_ok().then(|| s.trim().to_owned())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(source) => Err(self.error("read", &name, source)),
        }
    }

    /// Records that `reference` resolved to `digest`.
    ///
    /// # Errors
    ///
    /// [`OciError::Cache`] when the record cannot be written.
    pub fn record(&self, reference: &str, digest: &str) -> Result<(), OciError> {
        digest_hex(digest)?;
        self.write(&ref_name(reference), digest.as_bytes())
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), OciError> {
        let temp = format!(
            "{name}.tmp-{}-{}",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        );
        self.dir
            .write(&temp, bytes)
            .map_err(|e| self.error("write", &temp, e))?;
        self.dir
            .rename(&temp, &self.dir, name)
            .map_err(|e| self.error("rename", name, e))
    }

    fn error(&self, op: &'static str, name: &str, source: std::io::Error) -> OciError {
        OciError::Cache {
            op,
            name: format!("{}/{name}", self.root),
            source,
        }
    }
}

fn ref_name(reference: &str) -> String {
    format!("refs/{}", hex::encode(Sha256::digest(reference.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_served_only_when_sound() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ContentCache::open(dir.path()).unwrap();
        let digest = cache.put_blob(b"component").unwrap();
        assert_eq!(cache.blob(&digest).unwrap().unwrap(), b"component");
        let path = dir
            .path()
            .join("oci/blobs/sha256")
            .join(digest_hex(&digest).unwrap());
        std::fs::write(&path, b"flipped").unwrap();
        assert!(cache.blob(&digest).unwrap().is_none());
        assert!(!path.exists(), "a corrupt blob is deleted");
    }

    #[test]
    fn records_references_and_refuses_bad_digests() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ContentCache::open(dir.path()).unwrap();
        let digest = sha256_digest(b"m");
        assert!(cache.resolved("r/x:1").unwrap().is_none());
        cache.record("r/x:1", &digest).unwrap();
        assert_eq!(cache.resolved("r/x:1").unwrap(), Some(digest));
        assert!(matches!(
            cache.blob("sha256:../../etc/passwd"),
            Err(OciError::InvalidDigest { .. })
        ));
    }
}
