//! Every read of a file the repository provides is bounded: a regular file only (never a
//! device, a FIFO or a symbolic link: `/dev/zero` or a pipe would never end), of at most
//! [`MAX_FILE_BYTES`], checked on the open file so that nothing swapped in between the
//! listing and the read gets past.

use std::io::{self, Read};
use std::path::Path;

/// The largest file fluxsim reads from a source: far above the largest manifest of real
/// repositories (CRD bundles of tens of MB), far below what would exhaust memory.
pub const MAX_FILE_BYTES: u64 = 128 << 20;

/// The bytes of the regular file at `path`, refusing anything else and anything larger than
/// [`MAX_FILE_BYTES`] with an error that names the file and the bound.
pub fn read_bounded(path: &Path) -> io::Result<Vec<u8>> {
    read_bounded_to(path, MAX_FILE_BYTES)
}

/// [`read_bounded`] with another bound.
pub fn read_bounded_to(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Not through a symbolic link; and a FIFO opened for reading must not wait for a
        // writer before the type check below refuses it.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| {
        if e.raw_os_error() == Some(libc::ELOOP) {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: a symbolic link, not read", path.display()),
            )
        } else {
            e
        }
    })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: not a regular file (a device, FIFO or socket is never read)",
                path.display()
            ),
        ));
    }
    let too_large = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{}: larger than fluxsim's bound of {} MiB per file",
                path.display(),
                max >> 20
            ),
        )
    };
    if meta.len() > max {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow after the check: read one byte past the bound at most.
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_device_is_never_read() {
        let err = read_bounded(Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_bounded(&fifo).unwrap_err();
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("target.yaml"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("target.yaml"), dir.path().join("l.yaml"))
            .unwrap();
        let err = read_bounded(&dir.path().join("l.yaml")).unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
    }

    #[test]
    fn a_file_over_the_bound_is_refused_naming_it_and_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("big.yaml");
        std::fs::write(&f, vec![b'a'; 3 << 20]).unwrap();
        let err = read_bounded_to(&f, 2 << 20).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("big.yaml") && text.contains("2 MiB"),
            "{text}"
        );
        assert_eq!(read_bounded_to(&f, 3 << 20).unwrap().len(), 3 << 20);
    }
}
