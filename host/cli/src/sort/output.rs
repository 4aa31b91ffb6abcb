//! Writing the result of `warpsort sort`: into a temporary file in the
//! destination's folder, flushed to disk, then renamed over the destination,
//! so that the destination is either as it was or the whole result.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::progress::{CHUNK, Progress};

/// Where the result goes: the destination itself, or the file a symbolic
/// link at it points to (so that sorting in place through a link sorts the
/// linked file, and the link stays).
fn resolve(dest: &Path) -> PathBuf {
    match std::fs::symlink_metadata(dest) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(dest).unwrap_or_else(|_| dest.to_path_buf()),
        _ => dest.to_path_buf(),
    }
}

/// A temporary file beside `dest`, with `dest`'s permissions when it exists
/// (else those of a new file).
fn temp_beside(dest: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".warpsort-tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666)); // less the umask
    }
    let tmp = builder.tempfile_in(dir)?;
    if let Ok(m) = std::fs::metadata(dest) {
        tmp.as_file().set_permissions(m.permissions())?;
    }
    Ok(tmp)
}

/// Writes `len` elements held in `bytes` to `dest`: as a 1-D `.npy` array of
/// type string `npy` (`<f4`, ...) when given, else raw. Atomic: on any error
/// `dest` is untouched and the temporary file removed.
pub fn write_atomic(
    dest: &Path,
    npy: Option<&str>,
    len: usize,
    bytes: &[u8],
    progress: &Progress,
) -> Result<(), String> {
    let target = resolve(dest);
    let fail = |e: std::io::Error| format!("cannot write {}: {e}", dest.display());
    let mut tmp = temp_beside(&target).map_err(fail)?;
    if let Some(descr) = npy {
        use npyz::WriterBuilder;
        let ty: npyz::TypeStr = descr.parse().map_err(|e| format!("type string {descr}: {e}"))?;
        npyz::WriteOptions::new_header_only()
            .dtype(npyz::DType::new_scalar(ty))
            .shape(&[len as u64])
            .writer(&mut tmp)
            .write_header_only()
            .map_err(fail)?;
    }
    progress.phase("writing", Some(bytes.len() as u64));
    for chunk in bytes.chunks(CHUNK) {
        tmp.write_all(chunk).map_err(fail)?;
        progress.inc(chunk.len());
    }
    tmp.flush().map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(&target).map_err(|e| fail(e.error))?;
    Ok(())
}
