//! Files in the SDK's data directory, written atomically: a temporary file beside the target,
//! synced, then renamed over it, so a crash mid-write leaves the old file or the new one,
//! never half of one.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temporary file, sync, rename).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp_name = path.as_os_str().to_owned();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = std::path::PathBuf::from(tmp_name);
    let mut file = std::fs::File::create(&tmp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("offer-sdk-st-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("f");
        write_atomically(&path, b"one").expect("write");
        write_atomically(&path, b"two").expect("write");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        assert_eq!(std::fs::read_dir(&dir).expect("ls").count(), 1);
        let _ = std::fs::remove_dir_all(dir);
    }
}
