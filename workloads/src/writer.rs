//! Writes workloads in the v1 format, streaming, and to files atomically: a file is written
//! under a temporary name beside its destination and renamed only once complete, so a
//! failure leaves no half-written workload.

use crate::Workload;
use crate::metadata::Metadata;
use crate::op::Op;
use crate::reader::HEADER;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes the header, then metadata, then operations, to any `Write`.
pub struct Writer<W: Write> {
    output: W,
}

impl<W: Write> Writer<W> {
    /// Writes the header and `metadata`.
    ///
    /// # Errors
    ///
    /// An I/O error, or `InvalidInput` for a key that is empty or holds whitespace (it could
    /// not be read back).
    pub fn new(mut output: W, metadata: &Metadata) -> io::Result<Self> {
        writeln!(output, "{HEADER}")?;
        for (key, value) in metadata.entries() {
            if key.is_empty() || key.contains(char::is_whitespace) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("metadata key {key:?} is empty or holds whitespace"),
                ));
            }
            // A value is one line: line breaks inside it become spaces.
            let value = value.replace(['\n', '\r'], " ");
            if value.is_empty() {
                writeln!(output, "@{key}")?;
            } else {
                writeln!(output, "@{key} {value}")?;
            }
        }
        Ok(Writer { output })
    }

    /// Writes one operation line.
    pub fn op(&mut self, op: Op) -> io::Result<()> {
        writeln!(self.output, "{op}")
    }

    /// Flushes and returns the output.
    pub fn finish(mut self) -> io::Result<W> {
        self.output.flush()?;
        Ok(self.output)
    }
}

/// Writes `workload` to `output`.
pub fn write_to<W: Write>(output: W, workload: &Workload) -> io::Result<W> {
    let mut writer = Writer::new(output, &workload.metadata)?;
    for &op in &workload.ops {
        writer.op(op)?;
    }
    writer.finish()
}

/// Writes `workload` to the file `path`, atomically (see the module documentation).
pub fn write_file(path: &Path, workload: &Workload) -> io::Result<()> {
    write_atomically(path, |file| {
        write_to(BufWriter::new(file), workload).map(drop)
    })
}

/// Creates `path` through `fill`, which writes the whole content to the file it is given:
/// the content goes to a temporary file in the same folder, renamed to `path` only if
/// `fill` succeeds.
pub fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&mut std::fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".timerbench-").suffix(".partial");
    // A temporary file is private (0600); the finished one is an ordinary file.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut temporary = builder.tempfile_in(folder)?;
    fill(temporary.as_file_mut())?;
    temporary.as_file().sync_all()?;
    temporary.persist(path).map_err(|e| e.error)?;
    Ok(())
}
