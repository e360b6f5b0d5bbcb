//! This build's registries as the report describes them ([`catalog`]), and the report of
//! results folders written with them ([`write_report`]): `report`, `rank`, `run` and
//! `reproduce` all describe implementations and workloads the same way.

use std::path::{Path, PathBuf};
use timerbench_impls::{IMPLEMENTATIONS, PEERS, registry};
use timerbench_report::{Catalog, Described, FamilyInfo, ParamInfo, Written};
use timerbench_workloads::families::FAMILIES;
use timerbench_workloads::suite::SuiteFile;

/// Writes the report of `folders` to `output` (see [`timerbench_report::write_report`]),
/// described by this build's registries.
pub fn write_report(
    folders: &[PathBuf],
    output: &Path,
    png: Option<&Path>,
) -> anyhow::Result<Written> {
    timerbench_report::write_report(folders, output, png, &catalog())
}

/// This build's registries, as the report describes implementations (with the parameters
/// a variant may set) and workloads.
pub fn catalog() -> Catalog {
    let described = |list: &[timerbench_impls::registry::Implementation]| {
        list.iter()
            .map(|i| Described {
                name: i.name.to_string(),
                summary: i.summary.to_string(),
                parameters: i
                    .parameters
                    .iter()
                    .map(|p| ParamInfo {
                        name: p.name.to_string(),
                        default: p.default.to_string(),
                        help: format!("{} ({})", p.about, p.accepts),
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let families = FAMILIES
        .iter()
        .map(|family| {
            let info = family.info();
            FamilyInfo {
                name: info.name.to_string(),
                models: info.models.to_string(),
                shape: info.shape.to_string(),
                tick: info.tick.to_string(),
                params: info
                    .params
                    .iter()
                    .map(|p| ParamInfo {
                        name: p.name.to_string(),
                        default: p.default.to_string(),
                        help: p.help.to_string(),
                    })
                    .collect(),
            }
        })
        .collect();
    Catalog {
        // The floor last: a yardstick a run may hold (`--floor`), described like the rest.
        implementations: described(IMPLEMENTATIONS)
            .into_iter()
            .chain(described(std::slice::from_ref(&registry::FLOOR)))
            .collect(),
        peers: described(PEERS),
        families,
        suite_order: SuiteFile::standard()
            .workloads
            .into_iter()
            .map(|w| w.name)
            .collect(),
    }
}
