//! The cloud's images: one directory of Kubernetes binaries per version, and the version a
//! machine's bootstrap data asks for.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Where bootstrap data names the Kubernetes version a machine runs.
pub const KUBERNETES_VERSION_PATH: &str = "etc/kubernetes/capw/kubernetes-version";

/// The machine's version cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ImageError {
    /// The bootstrap data writes no version file.
    #[error("the bootstrap data writes no /{KUBERNETES_VERSION_PATH}")]
    NoVersionFile(#[source] io::Error),
    /// The version file does not hold a version.
    #[error("/{KUBERNETES_VERSION_PATH} holds `{found}`, not a version such as v1.35.4")]
    BadVersion {
        /// Its first line, escaped.
        found: String,
    },
    /// No binaries for the version.
    #[error("no image for Kubernetes {version}; this cloud has {}", list(.available))]
    NoImage {
        /// The version asked for.
        version: String,
        /// The versions the cloud has.
        available: Vec<String>,
    },
}

fn list(versions: &[String]) -> String {
    if versions.is_empty() {
        "none".into()
    } else {
        versions.join(", ")
    }
}

/// The versions under a binaries root: the root holds `<version>/bin/`.
#[derive(Clone, Debug)]
pub struct KubeBinaries {
    root: PathBuf,
}

impl KubeBinaries {
    /// The binaries under `root`.
    pub fn new(root: PathBuf) -> Self {
        KubeBinaries { root }
    }

    /// The versions that have a `bin/` directory, oldest first.
    pub fn versions(&self) -> Vec<String> {
        let mut versions: Vec<String> = fs::read_dir(&self.root)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|v| parse(v).is_some() && self.root.join(v).join("bin").is_dir())
                    .collect()
            })
            .unwrap_or_default();
        versions.sort_by_key(|v| parse(v));
        versions
    }

    /// The `bin/` directory of `version`.
    ///
    /// # Errors
    ///
    /// [`ImageError::NoImage`], listing the versions there are.
    pub fn bin_dir(&self, version: &str) -> Result<PathBuf, ImageError> {
        let dir = self.root.join(version).join("bin");
        if parse(version).is_some() && dir.is_dir() {
            return Ok(dir);
        }
        Err(ImageError::NoImage {
            version: version.to_owned(),
            available: self.versions(),
        })
    }

    /// The `bin/` directory of the newest version that has `program`.
    pub fn newest_with(&self, program: &str) -> Option<PathBuf> {
        self.versions()
            .into_iter()
            .rev()
            .map(|v| self.root.join(v).join("bin"))
            .find(|bin| bin.join(program).is_file())
    }
}

/// `vX.Y.Z` (the `v` optional) as numbers.
fn parse(version: &str) -> Option<(u32, u32, u32)> {
    let mut parts = version.strip_prefix('v').unwrap_or(version).split('.');
    let numbers = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    parts.next().is_none().then_some(numbers)
}

/// The version the machine with root file system `rootfs` asks for, as `vX.Y.Z`.
///
/// # Errors
///
/// The version file is missing or holds no version.
pub fn machine_version(rootfs: &Path) -> Result<String, ImageError> {
    let text = fs::read_to_string(rootfs.join(KUBERNETES_VERSION_PATH))
        .map_err(ImageError::NoVersionFile)?;
    let found = text.lines().next().unwrap_or_default().trim();
    match parse(found) {
        Some((major, minor, patch)) => Ok(format!("v{major}.{minor}.{patch}")),
        None => Err(ImageError::BadVersion {
            found: found
                .chars()
                .take(64)
                .collect::<String>()
                .escape_debug()
                .to_string(),
        }),
    }
}
