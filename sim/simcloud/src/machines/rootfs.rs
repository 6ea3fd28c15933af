//! A machine's root file system: the cloud-config's `write_files`, written as cloud-init
//! would, below `DIR/rootfs`.

use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Component, Path, PathBuf};

use crate::boot_check::FileToWrite;

/// A file of the cloud-config could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RootfsError {
    /// The path is relative or climbs out of the root (`..`).
    #[error("write_files path `{path}` is not an absolute path inside the machine")]
    BadPath {
        /// The path as written in the cloud-config.
        path: String,
    },
    /// Creating a directory or writing the file failed.
    #[error("write {path}")]
    Write {
        /// The file on the host.
        path: PathBuf,
        /// The cause.
        #[source]
        source: io::Error,
    },
}

/// Writes every file of `files` below `root` (`/etc/x` becomes `root/etc/x`), with its mode;
/// parent directories are created with mode 0755. An existing file is replaced.
///
/// # Errors
///
/// [`RootfsError::BadPath`] before anything is written when a path is not absolute or holds
/// `..`; [`RootfsError::Write`] when the file system refuses.
pub fn write_rootfs(root: &Path, files: &[FileToWrite]) -> Result<(), RootfsError> {
    let targets = files
        .iter()
        .map(|f| host_path(root, &f.path).map(|p| (p, f)))
        .collect::<Result<Vec<_>, _>>()?;
    for (target, file) in targets {
        let failed = |source| RootfsError::Write {
            path: target.clone(),
            source,
        };
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(failed)?;
        }
        let mut out = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(file.mode)
            .open(&target)
            .map_err(failed)?;
        // The mode of `open` is masked by the umask and ignored for an existing file.
        out.set_permissions(fs::Permissions::from_mode(file.mode))
            .map_err(failed)?;
        out.write_all(file.content.as_bytes()).map_err(failed)?;
    }
    Ok(())
}

/// `root` joined with the absolute machine path `path`.
fn host_path(root: &Path, path: &str) -> Result<PathBuf, RootfsError> {
    let bad = || RootfsError::BadPath {
        path: path.to_owned(),
    };
    let path = Path::new(path);
    if !path.is_absolute() {
        return Err(bad());
    }
    let mut host = root.to_owned();
    for component in path.components() {
        match component {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(part) => host.push(part),
            Component::ParentDir | Component::Prefix(_) => return Err(bad()),
        }
    }
    if host == root {
        return Err(bad());
    }
    Ok(host)
}
