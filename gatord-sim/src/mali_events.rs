//! Built-in gatord events descriptions for Mali GPUs, written from hwcpipe-rs's counter tables (Arm's
//! MIT-licensed counter database for Mali-G31 onwards, the Midgard tables for T7xx/T8xx).
//!
//! Counter names follow gatord's `ARM_<GPU>_<HARDWARE NAME>` convention (e.g.
//! `ARM_Mali-G71_GPU_ACTIVE`), one category per counter block, so `lizard gatord-sim --gpu G71` offers the
//! hardware counters a gatord on such a device would.

use hwcpipe::gpu::product::{Family, Product, MIDGARD_PRODUCTS};
use hwcpipe::gpu::tables::arm_spec::SPEC_PRODUCTS;
use hwcpipe::gpu::tables::{spec_layout, BlockKind, HardwareLayout};

use gator_xml::write::escape_attr;
use thiserror::Error;

/// A GPU name that no built-in counter layout matches.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown GPU '{name}'; built-in GPUs: {}", known.join(", "))]
#[non_exhaustive]
pub struct UnknownGpu {
    /// The name asked for.
    pub name: String,
    /// The marketing names of every GPU with a built-in layout.
    pub known: Vec<&'static str>,
}

/// Every GPU with a counter layout: (marketing name, layout).
fn known() -> Vec<(&'static str, &'static HardwareLayout)> {
    let midgard = MIDGARD_PRODUCTS
        .iter()
        .filter_map(|p: &Product| Some((p.name, p.layout?)));
    let spec = SPEC_PRODUCTS
        .iter()
        .filter_map(|p| Some((p.name, spec_layout(p.layout)?)));
    let mut all: Vec<_> = midgard.chain(spec).collect();
    all.dedup_by_key(|(name, _)| *name);
    all
}

/// The marketing name of every GPU whose hardware counters [`events_xml`] can describe, in the order of
/// hwcpipe-rs's tables (Midgard first).
pub fn gpus() -> Vec<&'static str> {
    known().into_iter().map(|(name, _)| name).collect()
}

/// `G71`, `mali-g71`, `Mali-G71` and `Mali G1-Pro` all name the same GPU.
fn normalise(name: &str) -> String {
    let lower = name.trim().to_ascii_lowercase().replace(' ', "-");
    lower.strip_prefix("mali-").unwrap_or(&lower).to_owned()
}

fn block_title(kind: BlockKind, midgard: bool) -> &'static str {
    match kind {
        BlockKind::FrontEnd if midgard => "Mali Job Manager",
        BlockKind::FrontEnd => "Mali Front End",
        BlockKind::Tiler => "Mali Tiler",
        BlockKind::Memory => "Mali L2 Cache",
        BlockKind::ShaderCore => "Mali Shader Core",
    }
}

/// The events XML a gatord on a device with the Mali GPU `name` (e.g. `G71`, `Mali-G78`, `T860`) would
/// serve for its hardware counters.
pub fn events_xml(name: &str) -> Result<String, UnknownGpu> {
    let wanted = normalise(name);
    let all = known();
    let Some((gpu, layout)) = all.iter().find(|(n, _)| normalise(n) == wanted) else {
        return Err(UnknownGpu {
            name: name.to_owned(),
            known: gpus(),
        });
    };
    let midgard = MIDGARD_PRODUCTS
        .iter()
        .any(|p| p.name == *gpu && p.family == Family::Midgard);
    let prefix = format!("ARM_{}", gpu.replace(' ', "_"));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<events>\n");
    for kind in BlockKind::ALL {
        let counters = layout.blocks[kind.index()];
        if counters.is_empty() {
            continue;
        }
        let title = block_title(kind, midgard);
        xml.push_str(&format!(
            "  <category name=\"{}\" per_cpu=\"no\">\n",
            escape_attr(title)
        ));
        for (counter, index) in counters {
            xml.push_str(&format!(
                "    <event counter=\"{}_{}\" title=\"{}\" name=\"{}\" class=\"delta\" description=\"{} hardware counter {} (block index {})\"/>\n",
                escape_attr(&prefix),
                escape_attr(counter),
                escape_attr(title),
                escape_attr(counter),
                escape_attr(gpu),
                escape_attr(counter),
                index
            ));
        }
        xml.push_str("  </category>\n");
    }
    xml.push_str("</events>\n");
    Ok(xml)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_loosely() {
        assert_eq!(normalise("Mali-G71"), "g71");
        assert_eq!(normalise("g71"), "g71");
        assert_eq!(normalise("Mali G1-Pro"), "g1-pro");
    }

    #[test]
    fn every_known_gpu_gives_a_parsable_document_with_gatord_names() {
        for (gpu, layout) in known() {
            let xml = events_xml(gpu).expect("known GPU");
            let events = gator_xml::Events::parse(&xml).expect("valid events XML");
            let expected: usize = layout.blocks.iter().map(|b| b.len()).sum();
            assert_eq!(events.events().count(), expected, "{gpu}");
        }
        let g71 = events_xml("G71").expect("G71");
        assert!(g71.contains("counter=\"ARM_Mali-G71_GPU_ACTIVE\""));
    }

    #[test]
    fn unknown_gpus_list_the_known_ones() {
        let error = events_xml("G9999").expect_err("unknown").to_string();
        assert!(
            error.contains("Mali-G71") && error.contains("Mali-T860"),
            "{error}"
        );
    }
}
