//! [`Pmus`]: gatord's `pmus.xml`, which maps a CPU's MIDR (implementer and part number) to its counter set.

use crate::error::XmlError;
use crate::raw::RawElement;
use crate::reader::{self, Element};
use crate::Attributes;

/// `<pmu …>`: a CPU PMU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pmu {
    /// `id`: the perf PMU name where known.
    pub id: String,
    /// `counter_set`: the events counter-set name without the `_cnt` suffix; absent means [`Pmu::id`].
    pub counter_set: Option<String>,
    /// `cpuid` attribute and nested `<cpuid id/>` elements: `(implementer << 12) | part number`.
    pub cpuids: Vec<u32>,
    /// `core_name`: the name shown to users.
    pub core_name: String,
    /// `dt_name`: the device-tree compatible string.
    pub dt_name: Option<String>,
    /// `pmnc_counters`: how many events can be counted at once.
    pub pmnc_counters: Option<u32>,
    /// `profile` (`8a`, `9a`, `7r`, ...).
    pub profile: Option<String>,
    /// `spe`: the SPE description id.
    pub spe: Option<String>,
    /// `spe_version`.
    pub spe_version: Option<String>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

impl Pmu {
    /// The counter-set stem this PMU uses (`counter_set`, or `id` when absent).
    pub fn counter_set_stem(&self) -> &str {
        self.counter_set.as_deref().unwrap_or(&self.id)
    }

    /// The counter-set name in the events document (`<stem>_cnt`).
    pub fn counter_set_name(&self) -> String {
        format!("{}_cnt", self.counter_set_stem())
    }
}

/// `<uncore_pmu …/>` or `<smmuv3 …/>`: a PMU outside the CPU cores.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UncorePmu {
    /// `id`.
    pub id: String,
    /// `counter_set`: absent means [`UncorePmu::core_name`].
    pub counter_set: Option<String>,
    /// `core_name`.
    pub core_name: String,
    /// `pmnc_counters`.
    pub pmnc_counters: Option<u32>,
    /// `has_cycles_counter` (default yes).
    pub has_cycles_counter: Option<bool>,
    /// Attributes not modelled above.
    pub extra: Attributes,
}

/// The `<pmus version>` document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pmus {
    /// `version`.
    pub version: Option<u32>,
    /// `<pmu>` elements in document order.
    pub pmus: Vec<Pmu>,
    /// `<uncore_pmu>` elements in document order.
    pub uncore_pmus: Vec<UncorePmu>,
    /// `<smmuv3>` elements in document order.
    pub smmuv3: Vec<UncorePmu>,
    /// Other elements, kept verbatim.
    pub other: Vec<RawElement>,
}

impl Pmus {
    /// Reads a pmus document.
    pub fn parse(text: &str) -> Result<Self, XmlError> {
        let doc = reader::parse_document(text, 0)?;
        let root = reader::root(&doc, "pmus", 0)?;
        let mut out = Pmus {
            version: root.int("version")?,
            ..Pmus::default()
        };
        for child in root.children() {
            match child.tag_name().name() {
                "pmu" => out.pmus.push(read_pmu(root.child(child, "pmu"))?),
                "uncore_pmu" => out
                    .uncore_pmus
                    .push(read_uncore(root.child(child, "uncore_pmu"))?),
                "smmuv3" => out.smmuv3.push(read_uncore(root.child(child, "smmuv3"))?),
                _ => out.other.push(root.child(child, "element").raw()?),
            }
        }
        Ok(out)
    }

    /// Reads UTF-8 bytes; invalid UTF-8 is [`XmlError::Utf8`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, XmlError> {
        Self::parse(reader::text_from_bytes(bytes)?)
    }

    /// The CPU PMU with `cpuid` (`(implementer << 12) | part`, as in `captured` `<target cpuid>`).
    pub fn by_cpuid(&self, cpuid: u32) -> Option<&Pmu> {
        self.pmus.iter().find(|p| p.cpuids.contains(&cpuid))
    }

    /// The CPU PMU with `id`.
    pub fn by_id(&self, id: &str) -> Option<&Pmu> {
        self.pmus.iter().find(|p| p.id == id)
    }
}

fn read_pmu(el: Element<'_, '_>) -> Result<Pmu, XmlError> {
    let mut cpuids: Vec<u32> = el.hex("cpuid")?.into_iter().collect();
    for child in el.children().filter(|n| n.tag_name().name() == "cpuid") {
        let c = el.child(child, "cpuid");
        let id = c.required("id")?;
        cpuids.push(c.hex_value("id", id)?);
    }
    Ok(Pmu {
        id: el.required("id")?.to_owned(),
        counter_set: el.string("counter_set"),
        cpuids,
        core_name: el.required("core_name")?.to_owned(),
        dt_name: el.string("dt_name"),
        pmnc_counters: el.int("pmnc_counters")?,
        profile: el.string("profile"),
        spe: el.string("spe"),
        spe_version: el.string("spe_version"),
        extra: el.extra(&[
            "id",
            "counter_set",
            "cpuid",
            "core_name",
            "dt_name",
            "pmnc_counters",
            "profile",
            "spe",
            "spe_version",
        ]),
    })
}

fn read_uncore(el: Element<'_, '_>) -> Result<UncorePmu, XmlError> {
    Ok(UncorePmu {
        id: el.required("id")?.to_owned(),
        counter_set: el.string("counter_set"),
        core_name: el.required("core_name")?.to_owned(),
        pmnc_counters: el.int("pmnc_counters")?,
        has_cycles_counter: el.boolean("has_cycles_counter")?,
        extra: el.extra(&[
            "id",
            "counter_set",
            "core_name",
            "pmnc_counters",
            "has_cycles_counter",
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_cpuids_and_defaults() {
        let doc = Pmus::parse(
            "<pmus version=\"2\"><pmu id=\"N2\" core_name=\"Neoverse-N2\"><cpuid id=\"0x41d49\"/><cpuid id=\"0x6dd49\"/></pmu>\
             <pmu counter_set=\"DWT\" id=\"M3\" cpuid=\"0x41c23\" core_name=\"Cortex-M3\" pmnc_counters=\"6\"/>\
             <uncore_pmu id=\"CCI_500\" core_name=\"CCI_500\" has_cycles_counter=\"no\"/></pmus>",
        )
        .unwrap();
        assert_eq!(doc.by_cpuid(0x6dd49).unwrap().id, "N2");
        assert_eq!(doc.by_cpuid(0x41d49).unwrap().counter_set_name(), "N2_cnt");
        assert_eq!(doc.by_id("M3").unwrap().counter_set_name(), "DWT_cnt");
        assert_eq!(doc.uncore_pmus[0].has_cycles_counter, Some(false));
        assert!(doc.by_cpuid(1).is_none());
    }

    #[test]
    fn bad_pmus_are_refused() {
        for text in [
            "<pmus><pmu core_name=\"x\"/></pmus>",
            "<pmus><pmu id=\"x\"/></pmus>",
            "<pmus><pmu id=\"x\" core_name=\"y\" cpuid=\"0xq\"/></pmus>",
            "<pmus><pmu id=\"x\" core_name=\"y\"><cpuid/></pmu></pmus>",
            "<pmus><uncore_pmu id=\"x\" core_name=\"y\" pmnc_counters=\"many\"/></pmus>",
            "<events/>",
        ] {
            assert!(Pmus::parse(text).is_err(), "{text}");
        }
    }
}
