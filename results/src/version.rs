//! Which schema versions this timerbench reads, and the one place a document's version is
//! checked before its fields are.
//!
//! Every record and `environment.json` carries `schema`. A reader looks at that field
//! first, alone, because a newer version may have changed anything else: a record of a
//! version this build does not know is refused with one message naming the file, the line
//! and the versions it reads, never misread as a malformed record of the current one.
//! A document without `schema` is refused too: every timerbench that wrote results wrote
//! the field, so such a line is not a timerbench record.
//!
//! When the written form changes: bump [`SCHEMA_VERSION`], keep the previous version's
//! types in a module of their own, and convert them in [`decode`]; `FORMAT.md` says what
//! changed.

use crate::schema::SCHEMA_VERSION;
use anyhow::{Context, bail};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The oldest schema version this timerbench reads.
pub const OLDEST_READABLE: u32 = 1;

/// The versions this timerbench reads, for messages: `1`, or `1 to 2`.
pub fn readable() -> String {
    if OLDEST_READABLE == SCHEMA_VERSION {
        SCHEMA_VERSION.to_string()
    } else {
        format!("{OLDEST_READABLE} to {SCHEMA_VERSION}")
    }
}

/// Only the version of a document; serde skips the other fields.
#[derive(Deserialize)]
struct VersionField {
    schema: Option<u64>,
}

/// Decodes `text`, one document of kind `what` (e.g. "a cell record") at `location` (e.g.
/// `results/X/results.jsonl:3`), as the current type, after checking its version.
pub(crate) fn decode<T: DeserializeOwned>(
    text: &str,
    location: &str,
    what: &str,
) -> anyhow::Result<T> {
    let version = serde_json::from_str::<VersionField>(text)
        .with_context(|| format!("{location}: not {what}"))?
        .schema;
    match version {
        None => bail!(
            "{location}: not {what}: it has no `schema` field (every timerbench writes one; \
             this one reads schema {})",
            readable()
        ),
        Some(version) if version > u64::from(SCHEMA_VERSION) => bail!(
            "{location}: schema version {version} is newer than this timerbench reads ({}); \
             use a newer timerbench",
            readable()
        ),
        Some(version) if version < u64::from(OLDEST_READABLE) => bail!(
            "{location}: schema version {version} is not one this timerbench reads ({})",
            readable()
        ),
        // Versions 2 to 4 only added fields and a status, each field with a default that
        // reads an older record as it was meant (`schema.rs`), so all decode as the
        // current form.
        Some(_) => {}
    }
    serde_json::from_str(text).with_context(|| format!("{location}: not {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Environment;

    fn error(text: &str) -> String {
        format!(
            "{:#}",
            decode::<Environment>(text, "run/environment.json", "an environment record")
                .unwrap_err()
        )
    }

    #[test]
    fn the_version_is_checked_before_the_fields() {
        let newer = error(r#"{"schema": 7, "whatever": "changed"}"#);
        assert_eq!(
            newer,
            format!(
                "run/environment.json: schema version 7 is newer than this timerbench reads ({}); use a newer timerbench",
                readable()
            )
        );
        let missing = error(r#"{"cpu": "x"}"#);
        assert!(
            missing.starts_with(
                "run/environment.json: not an environment record: it has no `schema` field"
            ),
            "{missing}"
        );
        assert!(
            error(r#"{"schema": 0}"#).contains("schema version 0 is not one this timerbench reads")
        );
        let current = error(&format!(r#"{{"schema": {SCHEMA_VERSION}}}"#));
        assert!(
            current.starts_with("run/environment.json: not an environment record: missing field"),
            "{current}"
        );
        assert!(error("[1, 2]").starts_with("run/environment.json: not an environment record"));
    }

    #[test]
    fn the_readable_versions_are_named() {
        assert_eq!(readable(), "1 to 5");
    }
}
