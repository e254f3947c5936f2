//! The counter tables against their sources: every generated layout and product id against Arm's
//! libGPUCounters database (`../shared/data/libgpucounters-spec/database/`, MIT), and every
//! counter name against gatord 9.7.2's `events-Mali-*_hw.xml` (`../shared/data/gatord-9.7.2/`).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use hwcpipe::gpu::formula::resolve;
use hwcpipe::gpu::product::{spec_product, MIDGARD_PRODUCTS};
use hwcpipe::gpu::tables::arm_spec::{SPEC_LAYOUTS, SPEC_PRODUCTS};
use hwcpipe::gpu::tables::{BlockKind, HardwareLayout};
use hwcpipe::gpu::{GpuCounter, Product};

/// libGPUCounters' database folder, or `None` after a skip message when the data folder is absent.
fn spec() -> Option<PathBuf> {
    test_data::path("libgpucounters-spec/database")
}

/// gatord 9.7.2's events folder, or `None` after a skip message.
fn gatord_events() -> Option<PathBuf> {
    test_data::gatord("events")
}

/// Values of attribute `name` in `tag` elements, in document order (the database is regular XML
/// with one element per line).
fn attr_values<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = line.find(&key)? + key.len();
    let len = line[start..].find('"')?;
    Some(&line[start..start + len])
}

fn block_kind(ty: &str) -> BlockKind {
    match ty {
        "GPU Front-end" => BlockKind::FrontEnd,
        "Tiler" => BlockKind::Tiler,
        "Memory System" => BlockKind::Memory,
        "Shader Core" => BlockKind::ShaderCore,
        other => panic!("unknown block type {other}"),
    }
}

#[test]
fn generated_layouts_equal_the_database() {
    let Some(spec) = spec() else {
        return;
    };
    let mut files: Vec<_> = fs::read_dir(spec.join("hardwarelayout"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), SPEC_LAYOUTS.len());
    for path in files {
        let text = fs::read_to_string(&path).unwrap();
        let mut gpu = None;
        let mut kind = None;
        let mut blocks: [Vec<(String, u32)>; 4] = Default::default();
        let mut size = None;
        for line in text.lines() {
            if line.contains("<HardwareLayout ") {
                gpu = attr_values(line, "gpu").map(str::to_owned);
            } else if line.contains("<CounterBlock ") {
                kind = Some(block_kind(attr_values(line, "type").unwrap()));
                size = attr_values(line, "size").map(|s| s.parse::<u32>().unwrap());
            } else if line.contains("<Counter ") {
                let name = attr_values(line, "name").unwrap().to_owned();
                let index = attr_values(line, "index").unwrap().parse().unwrap();
                blocks[kind.unwrap().index()].push((name, index));
            }
        }
        let gpu = gpu.unwrap();
        let table = SPEC_LAYOUTS
            .iter()
            .find(|l| l.gpu == gpu)
            .unwrap_or_else(|| panic!("{gpu} not generated"));
        assert_eq!(Some(table.values_per_block), size, "{gpu}");
        for kind in BlockKind::ALL {
            let generated: Vec<(String, u32)> = table.blocks[kind.index()]
                .iter()
                .map(|&(n, i)| (n.to_owned(), i))
                .collect();
            assert_eq!(generated, blocks[kind.index()], "{gpu} {kind:?}");
            assert!(
                generated
                    .iter()
                    .all(|&(_, i)| i >= 4 && i < table.values_per_block),
                "{gpu} indices"
            );
        }
    }
}

#[test]
fn generated_products_equal_the_database() {
    let Some(spec) = spec() else {
        return;
    };
    let text = fs::read_to_string(spec.join("Mali-ProductInfo.xml")).unwrap();
    let mut expected = Vec::new();
    let mut ids = Vec::new();
    let mut name = None;
    let inner = |line: &str| {
        line.split('>')
            .nth(1)
            .and_then(|s| s.split('<').next())
            .unwrap()
            .to_owned()
    };
    for line in text.lines() {
        if line.contains("<ProductInfo>") {
            ids.clear();
            name = None;
        } else if line.contains("<Id>") {
            ids.push(u16::from_str_radix(inner(line).trim_start_matches("0x"), 16).unwrap());
        } else if line.contains("<Name>") && name.is_none() {
            name = Some(inner(line));
        } else if line.contains("<DatabaseKey>") {
            for &id in &ids {
                expected.push((id, name.clone().unwrap(), inner(line)));
            }
        }
    }
    let generated: Vec<_> = SPEC_PRODUCTS
        .iter()
        .map(|p| (p.id, p.name.to_owned(), p.layout.to_owned()))
        .collect();
    assert_eq!(generated, expected);
    for p in SPEC_PRODUCTS {
        let product = spec_product(p.id).unwrap();
        assert!(product.layout.is_some(), "{} has a layout", p.name);
    }
}

/// The counter names of `product` in gatord's events file for it in `events`, `None` when gatord has
/// no file for it.
fn gatord_names(events: &Path, product: &str) -> Option<BTreeSet<String>> {
    let text = fs::read_to_string(events.join(format!("events-{product}_hw.xml"))).ok()?;
    let prefix = format!("ARM_{product}_");
    Some(
        text.split("counter=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .filter_map(|c| c.strip_prefix(&prefix))
            .map(str::to_owned)
            .collect(),
    )
}

fn formula_names(product: &Product, layout: &HardwareLayout) -> BTreeSet<&'static str> {
    let mut names = BTreeSet::new();
    for c in GpuCounter::ALL {
        if let Ok(r) = resolve(
            product.family,
            layout,
            16,
            layout.values_per_block as usize,
            c,
        ) {
            for &(kind, index, _) in r.terms() {
                let name = layout.blocks[kind.index()]
                    .iter()
                    .find(|&&(_, i)| i == index)
                    .unwrap()
                    .0;
                names.insert(name);
            }
        }
    }
    names
}

/// Names kbase's hwcnt tables have and gatord does not publish: Midgard's L2 transaction counts
/// (gatord lists only the beat counts), and one G720 tiler counter gatord 9.7.2 predates.
const NOT_IN_GATORD: &[&str] = &["L2_EXT_READ", "L2_EXT_WRITE", "PRIMASSY_POS_SHADER_WAIT"];

#[test]
fn counter_names_agree_with_gatord() {
    let Some(events) = gatord_events() else {
        return;
    };
    let mut checked = 0;
    let products = SPEC_PRODUCTS
        .iter()
        .filter_map(|p| spec_product(p.id))
        .chain(MIDGARD_PRODUCTS.iter().copied());
    for product in products {
        let Some(layout) = product.layout else {
            continue;
        };
        let Some(gatord) = gatord_names(&events, product.name) else {
            continue;
        };
        checked += 1;
        for kind in BlockKind::ALL {
            for &(name, _) in layout.blocks[kind.index()] {
                assert!(
                    gatord.contains(name) || NOT_IN_GATORD.contains(&name),
                    "{}: {name} is not a gatord counter",
                    product.name
                );
            }
        }
        for name in formula_names(&product, layout) {
            assert!(
                gatord.contains(name) || NOT_IN_GATORD.contains(&name),
                "{}: formula uses {name}",
                product.name
            );
        }
    }
    assert!(checked >= 20, "only {checked} products cross-checked");
}
