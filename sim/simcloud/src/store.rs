//! The state file: JSON, replaced atomically (write a temporary file beside it, sync, rename,
//! sync the directory), so a crash leaves either the old state or the new one, never a mix.

use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::state::CloudState;

/// The version of the file layout; a file of another version is refused, not misread.
const FORMAT: u32 = 1;

/// A state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading the file failed.
    #[error("read state file {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// The file is not a state file this version understands.
    #[error("state file {path} is not valid")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The file has another format version.
    #[error("state file {path} has format {found}; this sim reads format {FORMAT}")]
    Format {
        /// The file.
        path: PathBuf,
        /// Its format.
        found: u32,
    },
    /// The state could not be serialised.
    #[error("serialise state")]
    Serialise(#[source] serde_json::Error),
    /// Writing or renaming failed.
    #[error("write state file {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

#[derive(Serialize, Deserialize)]
struct FileLayout<S> {
    format: u32,
    state: S,
}

/// Serialises `state` as the state file's bytes.
///
/// # Errors
///
/// [`StoreError::Serialise`], which a [`CloudState`] never causes in practice.
pub fn encode(state: &CloudState) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec_pretty(&FileLayout {
        format: FORMAT,
        state,
    })
    .map_err(StoreError::Serialise)
}

/// The state in `path`; `None` when the file does not exist.
///
/// # Errors
///
/// The file exists but cannot be read, parsed, or has another format.
pub fn load(path: &Path) -> Result<Option<CloudState>, StoreError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StoreError::Read {
                path: path.to_owned(),
                source,
            });
        }
    };
    #[derive(Deserialize)]
    struct Header {
        format: u32,
    }
    let parse = |source| StoreError::Parse {
        path: path.to_owned(),
        source,
    };
    let header: Header = serde_json::from_slice(&bytes).map_err(parse)?;
    if header.format != FORMAT {
        return Err(StoreError::Format {
            path: path.to_owned(),
            found: header.format,
        });
    }
    let mut file: FileLayout<CloudState> = serde_json::from_slice(&bytes).map_err(parse)?;
    file.state.rebuild_index();
    Ok(Some(file.state))
}

/// Replaces `path` with `bytes` atomically.
///
/// # Errors
///
/// [`StoreError::Write`] when any step fails; `path` then still holds its previous content.
pub fn save(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let write_error = |source| StoreError::Write {
        path: path.to_owned(),
        source,
    };
    let mut tmp_name = path.file_name().unwrap_or_default().to_owned();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file = File::create(&tmp).map_err(write_error)?;
    file.write_all(bytes).map_err(write_error)?;
    file.sync_all().map_err(write_error)?;
    drop(file);
    fs::rename(&tmp, path).map_err(write_error)?;
    // The rename is durable once the directory is synced; not every platform can open a
    // directory for that, so a failure here is not an error.
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Ok(dir) = File::open(dir)
    {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_missing_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        assert!(load(&path).unwrap().is_none());
        save(&path, &encode(&CloudState::default()).unwrap()).unwrap();
        assert!(load(&path).unwrap().is_some());
        assert!(!dir.path().join("state.json.tmp").exists());
    }

    #[test]
    fn other_formats_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, br#"{"format": 2, "state": {}}"#).unwrap();
        assert!(matches!(
            load(&path),
            Err(StoreError::Format { found: 2, .. })
        ));
        fs::write(&path, b"not json").unwrap();
        assert!(matches!(load(&path), Err(StoreError::Parse { .. })));
    }
}
