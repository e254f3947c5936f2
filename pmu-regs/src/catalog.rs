//! Arm's per-core PMU event lists (the `ARM-software/data` JSON files `pmu/*.json` and `cpus.json`)
//! loaded into lookup tables, and checked against what PMCEID0/1_EL0 report.
//!
//! Only with the `json` feature.

use std::collections::BTreeMap;
use std::string::String;
use std::vec::Vec;

use serde::Deserialize;
use thiserror::Error;

use crate::event::CommonEvent;
use crate::regs::pmceid::CommonEventSet;

/// A JSON event or CPU list that could not be loaded.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The text is not JSON of the expected shape (a missing `events` array, a wrong type, ...).
    #[error("malformed event list JSON")]
    Json(#[from] serde_json::Error),
    /// The document's `_type` is not the expected one (`"Events"` or `"CPUs"`).
    #[error("expected a document of _type {expected:?}, found {found:?}")]
    WrongType {
        /// The `_type` that was expected.
        expected: &'static str,
        /// The `_type` found.
        found: String,
    },
    /// An event code does not fit the 16-bit evtCount field.
    #[error("event code {0:#x} does not fit 16 bits")]
    CodeOutOfRange(u64),
    /// Two events share a code.
    #[error("event code {0:#06x} is listed twice")]
    DuplicateCode(u16),
    /// A `cpuid` string is not a hexadecimal number such as `"0x41d81"`.
    #[error("cpuid {0:?} is not a hexadecimal number")]
    BadCpuid(String),
    /// A CPU implementer code does not fit in 8 bits.
    #[error("implementer code {0} does not fit 8 bits")]
    BadImplementer(u64),
}

#[derive(Deserialize)]
struct RawEventList {
    #[serde(rename = "_type")]
    kind: String,
    cpu: String,
    #[serde(default)]
    cpuid: Option<String>,
    architecture: String,
    #[serde(default)]
    pmu_architecture: Option<String>,
    #[serde(default)]
    counters: Option<u8>,
    events: Vec<RawEvent>,
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(default)]
    code: Option<u64>,
    #[serde(default)]
    name: Option<String>,
    description: String,
    #[serde(default)]
    architectural: bool,
    #[serde(default)]
    impdef: bool,
    #[serde(rename = "type", default)]
    kind: Option<String>,
}

/// One event of a core's list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CatalogEvent {
    /// The event number programmed into evtCount.
    pub code: u16,
    /// The mnemonic, when Arm gives one (older cores list some IMPLEMENTATION DEFINED events without).
    pub name: Option<String>,
    /// Arm's description.
    pub description: String,
    /// Architectural (defined by retired instructions) rather than microarchitectural.
    pub architectural: bool,
    /// IMPLEMENTATION DEFINED event.
    pub impdef: bool,
    /// Arm's classification (`INS`, `CYCLE`, `EXC`, `UEVT`, `ETM`), when given.
    pub kind: Option<String>,
}

impl CatalogEvent {
    /// The common event with this code, if it is one.
    pub fn common_event(&self) -> Option<CommonEvent> {
        CommonEvent::from_code(self.code)
    }
}

/// What a PMCEID pair says compared with a core's event list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PmceidReport {
    /// Listed common events the PMCEID pair reports as implemented.
    pub implemented: Vec<u16>,
    /// Listed common events the PMCEID pair reports as not implemented.
    pub listed_but_absent: Vec<u16>,
    /// Events the PMCEID pair reports that the list does not have.
    pub present_but_unlisted: Vec<u16>,
}

/// A core's PMU event list: code → name, description, architectural or not.
///
/// ```
/// # #[cfg(feature = "json")] {
/// use pmu_regs::catalog::EventCatalog;
/// let text = r#"{"_type": "Events", "cpu": "Example", "architecture": "armv8-a",
///     "events": [{"code": 17, "name": "CPU_CYCLES", "description": "Cycle"}]}"#;
/// let catalog = EventCatalog::from_json(text).unwrap();
/// assert_eq!(catalog.by_name("CPU_CYCLES").map(|e| e.code), Some(0x11));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventCatalog {
    cpu: String,
    cpuid: Option<u32>,
    architecture: String,
    pmu_architecture: Option<String>,
    counters: Option<u8>,
    events: BTreeMap<u16, CatalogEvent>,
    unnumbered: usize,
}

fn parse_cpuid(text: &str) -> Result<u32, CatalogError> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    u32::from_str_radix(digits, 16).map_err(|_| CatalogError::BadCpuid(text.into()))
}

impl EventCatalog {
    /// Loads one `pmu/<core>.json` document.
    ///
    /// Events without a `code` (signals that exist only on an event bus) are counted in
    /// [`EventCatalog::unnumbered`] and otherwise skipped.
    pub fn from_json(text: &str) -> Result<Self, CatalogError> {
        let raw: RawEventList = serde_json::from_str(text)?;
        if raw.kind != "Events" {
            return Err(CatalogError::WrongType {
                expected: "Events",
                found: raw.kind,
            });
        }
        let cpuid = raw.cpuid.as_deref().map(parse_cpuid).transpose()?;
        let mut events = BTreeMap::new();
        let mut unnumbered = 0;
        for e in raw.events {
            let Some(code) = e.code else {
                unnumbered += 1;
                continue;
            };
            let code = u16::try_from(code).map_err(|_| CatalogError::CodeOutOfRange(code))?;
            let event = CatalogEvent {
                code,
                name: e.name,
                description: e.description,
                architectural: e.architectural,
                impdef: e.impdef,
                kind: e.kind,
            };
            if events.insert(code, event).is_some() {
                return Err(CatalogError::DuplicateCode(code));
            }
        }
        Ok(Self {
            cpu: raw.cpu,
            cpuid,
            architecture: raw.architecture,
            pmu_architecture: raw.pmu_architecture,
            counters: raw.counters,
            events,
            unnumbered,
        })
    }

    /// The core's name, e.g. `"Cortex-A720"` (or `"common ARMv8.0"`).
    pub fn cpu(&self) -> &str {
        &self.cpu
    }

    /// The `cpuid` (implementer << 12 | MIDR part number), e.g. 0x41d81.
    pub fn cpuid(&self) -> Option<u32> {
        self.cpuid
    }

    /// The architecture, e.g. `"armv9.2-a"`.
    pub fn architecture(&self) -> &str {
        &self.architecture
    }

    /// The PMU architecture, e.g. `"pmuv3"`.
    pub fn pmu_architecture(&self) -> Option<&str> {
        self.pmu_architecture.as_deref()
    }

    /// Number of event counters, when the list gives it.
    pub fn counters(&self) -> Option<u8> {
        self.counters
    }

    /// Number of numbered events.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether the list has no numbered events.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Number of listed events that have no event number.
    pub fn unnumbered(&self) -> usize {
        self.unnumbered
    }

    /// The event with `code`.
    pub fn get(&self, code: u16) -> Option<&CatalogEvent> {
        self.events.get(&code)
    }

    /// The event named `name`.
    pub fn by_name(&self, name: &str) -> Option<&CatalogEvent> {
        self.events
            .values()
            .find(|e| e.name.as_deref() == Some(name))
    }

    /// Every numbered event, by code.
    pub fn iter(&self) -> impl Iterator<Item = &CatalogEvent> {
        self.events.values()
    }

    /// The PMCEID pair this list predicts: every listed event PMCEID can describe.
    pub fn expected_common_events(&self) -> CommonEventSet {
        let mut set = CommonEventSet::default();
        for &code in self.events.keys() {
            // Codes PMCEID cannot describe are simply not part of the prediction.
            let _ = set.insert(code);
        }
        set
    }

    /// Listed events that `pmceid` reports as implemented.
    pub fn implemented(&self, pmceid: CommonEventSet) -> impl Iterator<Item = &CatalogEvent> {
        self.events
            .values()
            .filter(move |e| pmceid.contains(e.code))
    }

    /// Compares a PMCEID pair with this list.
    pub fn compare_pmceid(&self, pmceid: CommonEventSet) -> PmceidReport {
        let expected = self.expected_common_events();
        let mut report = PmceidReport::default();
        for code in expected.iter() {
            if pmceid.contains(code) {
                report.implemented.push(code);
            } else {
                report.listed_but_absent.push(code);
            }
        }
        report.present_but_unlisted = pmceid.iter().filter(|&c| !expected.contains(c)).collect();
        report
    }
}

#[derive(Deserialize)]
struct RawCpuList {
    #[serde(rename = "_type")]
    kind: String,
    cpus: Vec<RawCpu>,
}

#[derive(Deserialize)]
struct RawCpu {
    implementer: u64,
    name: String,
    arch: String,
    cpuid: String,
}

/// One entry of `cpus.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuInfo {
    /// MIDR_EL1.Implementer (0x41 = Arm).
    pub implementer: u8,
    /// Product name, e.g. `"Cortex-A720"`.
    pub name: String,
    /// Architecture, e.g. `"armv9.2-a"`.
    pub arch: String,
    /// implementer << 12 | MIDR_EL1.PartNum.
    pub cpuid: u32,
}

/// The `cpus.json` table: which core a MIDR names.
///
/// ```
/// # #[cfg(feature = "json")] {
/// use pmu_regs::catalog::CpuList;
/// let list = CpuList::from_json(r#"{"_type": "CPUs", "cpus": [
///     {"implementer": 65, "name": "Cortex-A720", "arch": "armv9.2-a", "cpuid": "0x41d81"}]}"#).unwrap();
/// assert_eq!(list.by_midr(0x410F_D810).map(|c| c.name.as_str()), Some("Cortex-A720"));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList {
    cpus: Vec<CpuInfo>,
}

impl CpuList {
    /// Loads `cpus.json`.
    pub fn from_json(text: &str) -> Result<Self, CatalogError> {
        let raw: RawCpuList = serde_json::from_str(text)?;
        if raw.kind != "CPUs" {
            return Err(CatalogError::WrongType {
                expected: "CPUs",
                found: raw.kind,
            });
        }
        let cpus = raw
            .cpus
            .into_iter()
            .map(|c| {
                Ok(CpuInfo {
                    implementer: u8::try_from(c.implementer)
                        .map_err(|_| CatalogError::BadImplementer(c.implementer))?,
                    cpuid: parse_cpuid(&c.cpuid)?,
                    name: c.name,
                    arch: c.arch,
                })
            })
            .collect::<Result<Vec<_>, CatalogError>>()?;
        Ok(Self { cpus })
    }

    /// Every CPU, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &CpuInfo> {
        self.cpus.iter()
    }

    /// The CPU a MIDR_EL1 value names (implementer bits `[31:24]`, part number bits `[15:4]`).
    pub fn by_midr(&self, midr: u64) -> Option<&CpuInfo> {
        let implementer = ((midr >> 24) & 0xFF) as u32;
        let part = ((midr >> 4) & 0xFFF) as u32;
        self.by_cpuid(implementer << 12 | part)
    }

    /// The CPU with this `cpuid` (implementer << 12 | part number).
    pub fn by_cpuid(&self, cpuid: u32) -> Option<&CpuInfo> {
        self.cpus.iter().find(|c| c.cpuid == cpuid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(events: &str) -> std::string::String {
        std::format!(
            r#"{{"_type": "Events", "cpu": "T", "cpuid": "0x41d81", "architecture": "armv9.2-a", "events": [{events}]}}"#
        )
    }

    #[test]
    fn malformed_inputs_are_typed_errors() {
        assert!(matches!(
            EventCatalog::from_json("{"),
            Err(CatalogError::Json(_))
        ));
        assert!(matches!(
            EventCatalog::from_json(r#"{"_type": "Events", "cpu": "x", "architecture": "a"}"#),
            Err(CatalogError::Json(_))
        ));
        let wrong = r#"{"_type": "CPUs", "cpu": "x", "architecture": "a", "events": []}"#;
        assert!(matches!(
            EventCatalog::from_json(wrong),
            Err(CatalogError::WrongType {
                expected: "Events",
                ..
            })
        ));
        assert!(matches!(
            EventCatalog::from_json(&list(r#"{"code": 65536, "description": "d"}"#)),
            Err(CatalogError::CodeOutOfRange(65536))
        ));
        assert!(matches!(
            EventCatalog::from_json(&list(
                r#"{"code": 1, "description": "a"}, {"code": 1, "description": "b"}"#
            )),
            Err(CatalogError::DuplicateCode(1))
        ));
        let bad_id =
            r#"{"_type": "Events", "cpu": "x", "cpuid": "zz", "architecture": "a", "events": []}"#;
        assert!(matches!(
            EventCatalog::from_json(bad_id),
            Err(CatalogError::BadCpuid(_))
        ));
        let bad_imp = r#"{"_type": "CPUs", "cpus": [{"implementer": 300, "name": "n", "arch": "a", "cpuid": "0x1"}]}"#;
        assert!(matches!(
            CpuList::from_json(bad_imp),
            Err(CatalogError::BadImplementer(300))
        ));
        let bad_kind = r#"{"_type": "Events", "cpus": []}"#;
        assert!(matches!(
            CpuList::from_json(bad_kind),
            Err(CatalogError::WrongType { .. })
        ));
    }

    #[test]
    fn unnumbered_events_are_counted() {
        let c = EventCatalog::from_json(&list(
            r#"{"description": "bus only"}, {"code": 3, "name": "L1D_CACHE_REFILL", "description": "r"}"#,
        ))
        .unwrap();
        assert_eq!((c.len(), c.unnumbered(), c.cpuid()), (1, 1, Some(0x41d81)));
        assert_eq!(
            c.get(3).and_then(CatalogEvent::common_event),
            Some(CommonEvent::L1dCacheRefill)
        );
    }

    #[test]
    fn pmceid_comparison() {
        let c = EventCatalog::from_json(&list(
            r#"{"code": 3, "description": "a"}, {"code": 16389, "description": "b"}, {"code": 200, "description": "c"}"#,
        ))
        .unwrap();
        let set = CommonEventSet::from_registers(1 << 3 | 1 << 4, 0);
        let report = c.compare_pmceid(set);
        assert_eq!(report.implemented, [3]);
        assert_eq!(report.listed_but_absent, [0x4005]);
        assert_eq!(report.present_but_unlisted, [4]);
        assert_eq!(c.implemented(set).count(), 1);
    }
}
