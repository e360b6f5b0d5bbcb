//! The `@KEY VALUE...` lines of a workload's preamble.

/// Keys the format names; others are kept and shown, never errors.
pub const KNOWN_KEYS: &[&str] = &["name", "description", "tick", "seed", "generator"];

/// A workload's metadata, in file order. Keys may repeat; [`Metadata::get`] reads the last.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metadata {
    entries: Vec<(String, String)>,
}

impl Metadata {
    /// No metadata.
    pub fn new() -> Self {
        Self::default()
    }

    /// The value of the last `@key` line, if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Appends a `@key value` line.
    pub fn push(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.entries.push((key.into(), value.into()));
    }

    /// Replaces every `@key` line by one with `value`, or appends it.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        self.entries.retain(|(k, _)| k != key);
        self.push(key, value);
    }

    /// All lines, in order.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The lines whose keys the format does not name, in order.
    pub fn unknown(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries().filter(|(k, _)| !KNOWN_KEYS.contains(k))
    }
}
