//! The development secret: when no `auth.jwt_secret` is configured, the server signs
//! dashboard tokens with a secret it keeps in a file (`auth.dev_secret_file`, by default
//! `./data/dev-jwt-secret`, mode 0600), so `offer-engine token` run in the same folder mints
//! tokens the running server accepts, and a restart keeps earlier tokens valid.
//!
//! This departs from a secret made for one run only, on purpose: a newcomer's first session
//! needs the CLI and the server to agree without configuring anything. A production
//! deployment sets `auth.jwt_secret` and never touches the file.

use std::io::Write;
use std::path::Path;

/// Random bytes of a new development secret (written as 96 hexadecimal characters).
const SECRET_BYTES: usize = 48;

/// Why the development secret could not be read or made.
#[derive(Debug, thiserror::Error)]
pub enum DevSecretError {
    /// No file yet: no development server has run in this folder.
    #[error(
        "no auth.jwt_secret configured and no development secret at {0}: start the server once in this folder (`cargo run --release`) or set OFFER__AUTH__JWT_SECRET"
    )]
    Missing(String),
    /// The file exists but is not a secret this engine wrote.
    #[error(
        "the development secret at {0} is unreadable or too short; delete it to make a new one"
    )]
    Invalid(String),
    /// The file could not be written.
    #[error("cannot write the development secret at {path}: {source}")]
    Write {
        /// Where.
        path: String,
        /// The I/O failure.
        source: std::io::Error,
    },
}

/// Reads the development secret.
pub fn load(path: &Path) -> Result<Vec<u8>, DevSecretError> {
    let shown = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let secret = text.trim();
            if secret.len() < 32 {
                return Err(DevSecretError::Invalid(shown));
            }
            Ok(secret.as_bytes().to_vec())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(DevSecretError::Missing(shown)),
        Err(_) => Err(DevSecretError::Invalid(shown)),
    }
}

/// Reads the development secret, or makes one (readable by its owner only) when there is
/// none yet.
pub fn load_or_create(path: &Path) -> Result<Vec<u8>, DevSecretError> {
    match load(path) {
        Err(DevSecretError::Missing(_)) => create(path),
        other => other,
    }
}

fn create(path: &Path) -> Result<Vec<u8>, DevSecretError> {
    let failed = |source| DevSecretError::Write {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(failed)?;
    }
    let mut bytes = [0u8; SECRET_BYTES];
    rand::fill(&mut bytes);
    let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(secret.as_bytes()).map_err(failed)?;
            Ok(secret.into_bytes())
        }
        // Another process made it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load(path),
        Err(e) => Err(failed(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_read_back_by_its_owner_only() {
        let dir = std::env::temp_dir().join(format!("dev-secret-{}", uuid::Uuid::new_v4()));
        let path = dir.join("nested").join("dev-jwt-secret");
        assert!(matches!(load(&path), Err(DevSecretError::Missing(_))));
        let made = load_or_create(&path).expect("made");
        assert_eq!(made.len(), 2 * SECRET_BYTES);
        assert_eq!(load_or_create(&path).expect("read"), made);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "short").expect("overwrite");
        assert!(matches!(load(&path), Err(DevSecretError::Invalid(_))));
        let _ = std::fs::remove_dir_all(dir);
    }
}
