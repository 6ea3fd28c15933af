//! The on-disk cache of compiled components, keyed by the component's sha256 and the engine's
//! compatibility hash, so a restart (or a second provider with the same bytes) compiles
//! nothing.
//!
//! Every file access goes through a cap-std [`Dir`]: names are hex digests made here, never
//! taken from a manifest. Each artefact `<key>.cwasm` has a sidecar `<key>.sha256` with the
//! digest of its bytes; an artefact whose digest does not match (a torn write, a flipped bit)
//! is deleted and rebuilt, never loaded. Writes go to a temporary name and are renamed into
//! place, so readers never see half a file.

use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::error::CacheError;

/// How a load used the cache.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome", content = "reason")]
pub enum CacheOutcome {
    /// Compiled code was found, verified and loaded: nothing was compiled.
    Hit,
    /// Nothing cached: compiled and stored.
    Miss,
    /// A cached file was unusable (named reason): deleted, compiled and stored again.
    Rebuilt(String),
    /// No cache configured: compiled in memory.
    Disabled,
}

/// A directory of compiled components.
pub struct CompileCache {
    dir: Dir,
    /// Where `dir` is, for `Component::deserialize_file`, which maps the file directly.
    root: PathBuf,
}

impl CompileCache {
    /// Open (creating it if needed) the cache directory.
    ///
    /// # Errors
    /// When the directory cannot be created or opened.
    pub fn open(path: &Path) -> Result<Self, CacheError> {
        let io = |op| {
            move |source| CacheError::Io {
                name: path.display().to_string(),
                op,
                source,
            }
        };
        std::fs::create_dir_all(path).map_err(io("create"))?;
        let dir = Dir::open_ambient_dir(path, ambient_authority()).map_err(io("open"))?;
        let root = path.canonicalize().map_err(io("canonicalize"))?;
        Ok(CompileCache { dir, root })
    }

    /// The cache key of `component_sha256` compiled by `engine`.
    pub(crate) fn key(engine: &Engine, component_sha256: &str) -> String {
        let mut h = ShaHasher(Sha256::new());
        h.0.update(component_sha256.as_bytes());
        h.0.update(env!("CARGO_PKG_VERSION").as_bytes());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut h);
        hex::encode(h.0.finalize())
    }

    /// Load the compiled component stored under `key`, if there is a sound one.
    ///
    /// Returns `Ok(None)` on a miss, and `Err(reason)` when a file was there but unusable (it
    /// has been deleted).
    #[allow(unsafe_code)] // `deserialize_file`; the SAFETY comment below says why it holds.
    pub(crate) fn load(&self, engine: &Engine, key: &str) -> Result<Option<Component>, String> {
        let artefact = format!("{key}.cwasm");
        let sidecar = format!("{key}.sha256");
        let expected = match self.dir.read_to_string(&sidecar) {
            Ok(s) => s.trim().to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if self.dir.exists(&artefact) {
                    self.discard(key);
                    return Err("compiled code without its checksum".into());
                }
                return Ok(None);
            }
            Err(e) => {
                self.discard(key);
                return Err(format!("reading {sidecar}: {e}"));
            }
        };
        let actual = match self.digest_of(&artefact) {
            Ok(d) => d,
            Err(e) => {
                self.discard(key);
                return Err(format!("reading {artefact}: {e}"));
            }
        };
        if actual != expected {
            self.discard(key);
            return Err(format!(
                "checksum mismatch in {artefact} (expected {expected}, found {actual})"
            ));
        }
        // SAFETY: `deserialize_file` trusts its input to be compiled code from a compatible
        // engine. The key includes the engine's compatibility hash, the file's digest was just
        // verified against the sidecar written with it, and the name is a hex digest inside a
        // directory only this host writes.
        match unsafe { Component::deserialize_file(engine, self.root.join(&artefact)) } {
            Ok(c) => Ok(Some(c)),
            Err(e) => {
                self.discard(key);
                Err(format!("deserialising {artefact}: {e}"))
            }
        }
    }

    /// Store a compiled component under `key`.
    pub(crate) fn store(&self, key: &str, component: &Component) -> Result<(), CacheError> {
        let bytes = component.serialize().map_err(CacheError::Serialize)?;
        let digest = hex::encode(Sha256::digest(&bytes));
        self.write_atomic(&format!("{key}.cwasm"), &bytes)?;
        self.write_atomic(&format!("{key}.sha256"), digest.as_bytes())
    }

    fn digest_of(&self, name: &str) -> std::io::Result<String> {
        let mut file = self.dir.open(name)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        Ok(hex::encode(hasher.finalize()))
    }

    fn write_atomic(&self, name: &str, bytes: &[u8]) -> Result<(), CacheError> {
        let tmp = format!("{name}.tmp-{}", std::process::id());
        let io = |op| {
            move |source| CacheError::Io {
                name: name.to_string(),
                op,
                source,
            }
        };
        let mut f = self.dir.create(&tmp).map_err(io("create"))?;
        f.write_all(bytes).map_err(io("write"))?;
        f.sync_all().map_err(io("sync"))?;
        self.dir.rename(&tmp, &self.dir, name).map_err(io("rename"))
    }

    fn discard(&self, key: &str) {
        for name in [format!("{key}.cwasm"), format!("{key}.sha256")] {
            if let Err(e) = self.dir.remove_file(&name)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(file = %name, error = %e, "could not remove a bad cache file");
            }
        }
    }
}

/// Feeds `Hash` input into sha256, so the key is stable across builds of the host (unlike
/// `DefaultHasher`).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        // Only `write` is used; the digest is taken from the inner hasher.
        0
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}
