//! A streaming reader of the v1 format: the header, the metadata, then one operation at a
//! time, with every syntactic error of the spec reported as `PATH:LINE: what is wrong`.
//!
//! The reader checks each line on its own. What needs the clock (`s` of a pending timer, a
//! deadline that passes 2^63) is checked by running the reference model, which
//! [`load`](crate::load) does.
//!
//! Lines may end in `\n` or `\r\n`; fields are separated by spaces or tabs; blank lines and
//! lines whose first non-blank character is `#` are skipped.

use crate::metadata::Metadata;
use crate::op::Op;
use std::fmt;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// The header line of a v1 workload.
pub const HEADER: &str = "timer-workload v1";

/// Delays and tick counts must be below this (and so must every sum with the clock).
const VALUE_LIMIT: u64 = 1 << 63;

/// Longest excerpt of an offending line quoted in an error.
const EXCERPT: usize = 60;

/// A workload that cannot be read: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// The file.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one.
    pub line: Option<u64>,
    /// What is wrong, including the offending text where there is one.
    pub message: String,
}

impl WorkloadError {
    /// An error on `line` of `path`.
    pub fn at(path: &Path, line: u64, message: impl Into<String>) -> Self {
        WorkloadError {
            path: path.to_path_buf(),
            line: Some(line),
            message: message.into(),
        }
    }

    /// An error about the file as a whole (it cannot be opened, say).
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        WorkloadError {
            path: path.to_path_buf(),
            line: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for WorkloadError {}

/// Reads a workload one operation at a time. See the module documentation.
pub struct Reader<R> {
    input: R,
    path: PathBuf,
    /// The line last read, 1-based.
    line: u64,
    buffer: Vec<u8>,
    metadata: Metadata,
    /// The first operation, read while looking for the end of the metadata.
    first_op: Option<(u64, Op)>,
}

/// What a line holds, once comments and blanks are set aside.
enum Line<'a> {
    Skip,
    Metadata(&'a str),
    Other(&'a str),
}

impl<R: BufRead> Reader<R> {
    /// Reads the header and the metadata of `input`; `path` names it in errors.
    pub fn new(input: R, path: &Path) -> Result<Self, WorkloadError> {
        let mut reader = Reader {
            input,
            path: path.to_path_buf(),
            line: 0,
            buffer: Vec::with_capacity(128),
            metadata: Metadata::new(),
            first_op: None,
        };
        reader.read_header()?;
        reader.read_metadata()?;
        Ok(reader)
    }

    /// The metadata lines.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The file name used in errors.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next operation and its line number, or `None` at the end of the file.
    pub fn next_op(&mut self) -> Result<Option<(u64, Op)>, WorkloadError> {
        if let Some(first) = self.first_op.take() {
            return Ok(Some(first));
        }
        loop {
            if !self.read_line()? {
                return Ok(None);
            }
            let line = self.line;
            match classify(self.text(line)?) {
                Line::Skip => continue,
                Line::Metadata(text) => {
                    return Err(self.error(
                        line,
                        format!("metadata after the first operation: `{}`", excerpt(text)),
                    ));
                }
                Line::Other(text) => {
                    let op = parse_op(text).map_err(|message| self.error(line, message))?;
                    return Ok(Some((line, op)));
                }
            }
        }
    }

    fn error(&self, line: u64, message: impl Into<String>) -> WorkloadError {
        WorkloadError::at(&self.path, line, message)
    }

    /// Reads the next line into the buffer, without its line ending; false at the end.
    fn read_line(&mut self) -> Result<bool, WorkloadError> {
        self.buffer.clear();
        let read = self
            .input
            .read_until(b'\n', &mut self.buffer)
            .map_err(|e| {
                WorkloadError::file(
                    &self.path,
                    format!("cannot read after line {}: {e}", self.line),
                )
            })?;
        if read == 0 {
            return Ok(false);
        }
        self.line += 1;
        if self.buffer.last() == Some(&b'\n') {
            self.buffer.pop();
            if self.buffer.last() == Some(&b'\r') {
                self.buffer.pop();
            }
        }
        Ok(true)
    }

    /// The buffered line as text.
    fn text(&self, line: u64) -> Result<&str, WorkloadError> {
        std::str::from_utf8(&self.buffer).map_err(|e| {
            let lossy = String::from_utf8_lossy(&self.buffer);
            self.error(
                line,
                format!(
                    "bytes that are not UTF-8 (at byte {} of the line): `{}`",
                    e.valid_up_to() + 1,
                    excerpt(&lossy)
                ),
            )
        })
    }

    fn read_header(&mut self) -> Result<(), WorkloadError> {
        loop {
            if !self.read_line()? {
                let line = self.line.max(1);
                return Err(self.error(
                    line,
                    format!("no header: the file must start with `{HEADER}`"),
                ));
            }
            let line = self.line;
            let text = match classify(self.text(line)?) {
                Line::Skip => continue,
                Line::Metadata(text) | Line::Other(text) => text.trim(),
            };
            if text == HEADER {
                return Ok(());
            }
            let mut words = text.split_ascii_whitespace();
            let message = match (words.next(), words.next(), words.next()) {
                (Some("timer-workload"), Some(version), None) => {
                    format!("unsupported version `{version}`: this reader reads `{HEADER}`")
                }
                _ => format!("no header: expected `{HEADER}`, found `{}`", excerpt(text)),
            };
            return Err(self.error(line, message));
        }
    }

    /// Reads metadata lines up to the first operation, which it keeps for `next_op`.
    fn read_metadata(&mut self) -> Result<(), WorkloadError> {
        loop {
            if !self.read_line()? {
                return Ok(());
            }
            let line = self.line;
            match classify(self.text(line)?) {
                Line::Skip => {}
                Line::Metadata(text) => {
                    let (key, value) = split_metadata(text).map_err(|m| self.error(line, m))?;
                    let (key, value) = (key.to_string(), value.to_string());
                    self.metadata.push(key, value);
                }
                Line::Other(text) => {
                    let op = parse_op(text).map_err(|message| self.error(line, message))?;
                    self.first_op = Some((line, op));
                    return Ok(());
                }
            }
        }
    }
}

fn classify(text: &str) -> Line<'_> {
    let trimmed = text.trim_start_matches([' ', '\t']);
    match trimmed.as_bytes().first() {
        None | Some(b'#') => Line::Skip,
        Some(b'@') => Line::Metadata(trimmed),
        Some(_) => Line::Other(trimmed),
    }
}

/// `@KEY VALUE...` into the key and the (trimmed, possibly empty) value.
fn split_metadata(text: &str) -> Result<(&str, &str), String> {
    let body = &text[1..];
    let end = body.find([' ', '\t']).unwrap_or(body.len());
    let (key, value) = body.split_at(end);
    if key.is_empty() {
        return Err(format!("metadata line without a key: `{}`", excerpt(text)));
    }
    // Fields part at spaces and tabs only; a key holding other whitespace (a form feed, a
    // no-break space) could not be told apart from its value by a reader that splits on
    // any whitespace, and the writer refuses it, so it is refused here too.
    if key.contains(char::is_whitespace) {
        return Err(format!(
            "metadata key {key:?} holds whitespace: `{}`",
            excerpt(text)
        ));
    }
    Ok((key, value.trim_matches([' ', '\t'])))
}

/// The first `EXCERPT` characters of `text`, with an ellipsis when cut.
fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// Parses an operation line (already known not to be blank, a comment or metadata).
fn parse_op(text: &str) -> Result<Op, String> {
    let mut fields = text.split([' ', '\t']).filter(|f| !f.is_empty());
    let letter = fields.next().unwrap_or_default();
    let op = match letter {
        "s" | "r" => {
            let id = field(&mut fields, letter, "ID", text).and_then(|f| id(f, text))?;
            let delay = field(&mut fields, letter, "DELAY", text)
                .and_then(|f| bounded(f, "DELAY", text))?;
            if letter == "s" {
                Op::Start { id, delay }
            } else {
                Op::Restart { id, delay }
            }
        }
        "x" => Op::Stop {
            id: field(&mut fields, letter, "ID", text).and_then(|f| id(f, text))?,
        },
        "a" | "t" => {
            let ticks =
                field(&mut fields, letter, "N", text).and_then(|f| bounded(f, "N", text))?;
            if ticks == 0 {
                return Err(format!(
                    "`{letter}` needs N >= 1, got 0: `{}`",
                    excerpt(text)
                ));
            }
            if letter == "a" {
                Op::Advance { ticks }
            } else {
                Op::Tick { ticks }
            }
        }
        "n" => Op::Next,
        _ => {
            return Err(format!(
                "unknown operation `{}` (operations are s, x, r, a, t, n): `{}`",
                excerpt(letter),
                excerpt(text)
            ));
        }
    };
    if let Some(extra) = fields.next() {
        return Err(format!(
            "extra field `{}` after `{op}`: `{}`",
            excerpt(extra),
            excerpt(text)
        ));
    }
    Ok(op)
}

fn field<'a>(
    fields: &mut impl Iterator<Item = &'a str>,
    letter: &str,
    name: &str,
    text: &str,
) -> Result<&'a str, String> {
    fields.next().ok_or_else(|| {
        let usage = match letter {
            "s" | "r" => "ID DELAY",
            "x" => "ID",
            _ => "N",
        };
        format!(
            "missing field {name}: `{letter}` takes `{letter} {usage}`: `{}`",
            excerpt(text)
        )
    })
}

/// A decimal `u64`, or why not.
fn decimal(field: &str, name: &str, text: &str) -> Result<u64, String> {
    let bytes = field.as_bytes();
    if bytes.first() == Some(&b'-') && bytes.len() > 1 && bytes[1..].iter().all(u8::is_ascii_digit)
    {
        return Err(format!(
            "{name} is negative: `{field}` in `{}`",
            excerpt(text)
        ));
    }
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "{name} is not a decimal integer: `{}` in `{}`",
            excerpt(field),
            excerpt(text)
        ));
    }
    let mut value: u64 = 0;
    for &digit in bytes {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit - b'0')))
            .ok_or_else(|| {
                format!(
                    "{name} is out of range (at most 2^64 - 1): `{}` in `{}`",
                    excerpt(field),
                    excerpt(text)
                )
            })?;
    }
    Ok(value)
}

fn id(field: &str, text: &str) -> Result<u64, String> {
    decimal(field, "ID", text)
}

/// A delay or tick count: a decimal below 2^63.
fn bounded(field: &str, name: &str, text: &str) -> Result<u64, String> {
    let value = decimal(field, name, text)?;
    if value >= VALUE_LIMIT {
        return Err(format!(
            "{name} is out of range (must be below 2^63): `{}` in `{}`",
            excerpt(field),
            excerpt(text)
        ));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(Metadata, Vec<(u64, Op)>), WorkloadError> {
        let mut reader = Reader::new(text.as_bytes(), Path::new("w.tw"))?;
        let mut ops = Vec::new();
        while let Some(op) = reader.next_op()? {
            ops.push(op);
        }
        Ok((reader.metadata().clone(), ops))
    }

    fn error(text: &str) -> String {
        read(text).expect_err("malformed").to_string()
    }

    #[test]
    fn reads_every_operation_with_its_line() {
        let (metadata, ops) = read(
            "# a comment\n\ntimer-workload v1\n@name demo\n@tick 1ms\n@owner me and you\n\
             s 1 10\n  # indented comment\nx 1\r\nr 2\t5\na 3\nt 2\nn\n",
        )
        .unwrap();
        assert_eq!(metadata.get("name"), Some("demo"));
        assert_eq!(metadata.get("owner"), Some("me and you"));
        assert_eq!(
            ops,
            [
                (7, Op::Start { id: 1, delay: 10 }),
                (9, Op::Stop { id: 1 }),
                (10, Op::Restart { id: 2, delay: 5 }),
                (11, Op::Advance { ticks: 3 }),
                (12, Op::Tick { ticks: 2 }),
                (13, Op::Next),
            ]
        );
    }

    #[test]
    fn the_limits_of_values() {
        let (_, ops) = read(&format!(
            "timer-workload v1\ns {} {}\nx 0\n",
            u64::MAX,
            (1u64 << 63) - 1
        ))
        .unwrap();
        assert_eq!(
            ops[0].1,
            Op::Start {
                id: u64::MAX,
                delay: (1 << 63) - 1
            }
        );
    }

    #[test]
    fn each_malformed_line_names_file_line_and_problem() {
        let cases: &[(&str, &str)] = &[
            ("", "w.tw:1: no header"),
            ("# only a comment\n", "w.tw:1: no header"),
            (
                "s 1 2\n",
                "w.tw:1: no header: expected `timer-workload v1`, found `s 1 2`",
            ),
            ("timer-workload v2\n", "w.tw:1: unsupported version `v2`"),
            ("timer-workload v1\nq 1\n", "w.tw:2: unknown operation `q`"),
            ("timer-workload v1\ns 1\n", "w.tw:2: missing field DELAY"),
            ("timer-workload v1\nx\n", "w.tw:2: missing field ID"),
            ("timer-workload v1\na\n", "w.tw:2: missing field N"),
            ("timer-workload v1\nn 5\n", "w.tw:2: extra field `5`"),
            ("timer-workload v1\nx 1 2\n", "w.tw:2: extra field `2`"),
            (
                "timer-workload v1\ns 1 2 # late\n",
                "w.tw:2: extra field `#`",
            ),
            (
                "timer-workload v1\ns one 2\n",
                "w.tw:2: ID is not a decimal integer: `one`",
            ),
            (
                "timer-workload v1\ns 1 0x10\n",
                "w.tw:2: DELAY is not a decimal integer",
            ),
            (
                "timer-workload v1\ns 1 +3\n",
                "w.tw:2: DELAY is not a decimal integer",
            ),
            (
                "timer-workload v1\ns 1 -3\n",
                "w.tw:2: DELAY is negative: `-3`",
            ),
            ("timer-workload v1\na -1\n", "w.tw:2: N is negative"),
            (
                "timer-workload v1\na 0\n",
                "w.tw:2: `a` needs N >= 1, got 0",
            ),
            (
                "timer-workload v1\nt 0\n",
                "w.tw:2: `t` needs N >= 1, got 0",
            ),
            (
                "timer-workload v1\nx 18446744073709551616\n",
                "w.tw:2: ID is out of range",
            ),
            (
                "timer-workload v1\ns 1 9223372036854775808\n",
                "w.tw:2: DELAY is out of range (must be below 2^63)",
            ),
            (
                "timer-workload v1\na 9223372036854775808\n",
                "w.tw:2: N is out of range",
            ),
            (
                "timer-workload v1\ns 1 2\n@name late\n",
                "w.tw:3: metadata after the first operation",
            ),
            (
                "timer-workload v1\n@ value\n",
                "w.tw:2: metadata line without a key",
            ),
            (
                "timer-workload v1\ns 1 \u{ff}2\n",
                "w.tw:2: DELAY is not a decimal integer",
            ),
        ];
        for (text, expected) in cases {
            let got = error(text);
            assert!(
                got.starts_with(expected),
                "for {text:?}:\n got {got}\nwant {expected}..."
            );
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_are_an_error_on_their_line() {
        let mut bytes = b"timer-workload v1\ns 1 2\nx 1".to_vec();
        bytes.push(0xff);
        bytes.push(b'\n');
        let mut reader = Reader::new(&bytes[..], Path::new("w.tw")).unwrap();
        assert!(reader.next_op().unwrap().is_some());
        let error = reader.next_op().unwrap_err().to_string();
        assert!(
            error.starts_with("w.tw:3: bytes that are not UTF-8 (at byte 4"),
            "{error}"
        );
    }

    #[test]
    fn long_offending_lines_are_cut() {
        let long = format!("timer-workload v1\nzz{}\n", "9".repeat(500));
        let error = error(&long);
        assert!(error.len() < 250, "{error}");
        assert!(error.contains("..."), "{error}");
    }
}
