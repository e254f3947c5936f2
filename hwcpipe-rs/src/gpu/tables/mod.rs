//! Counter name → (block, index) tables and product ids.
//!
//! Mali-G31 onwards come from Arm's counter database ([`arm_spec`] for layouts and products,
//! [`arm_counters`] for every counter's meaning, both generated); Midgard layouts, which that database
//! lacks, are in [`midgard`].

#[rustfmt::skip]
pub mod arm_counters;
pub mod arm_spec;
pub mod midgard;

/// A counter block type, numbered as kinstr_prfcnt numbers them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BlockKind {
    /// Job Manager or CSF front-end.
    FrontEnd = 0,
    /// Tiler.
    Tiler = 1,
    /// Memory system: MMU and one L2 slice.
    Memory = 2,
    /// Shader core.
    ShaderCore = 3,
}

impl BlockKind {
    /// All four kinds, in table order.
    pub const ALL: [BlockKind; 4] = [
        BlockKind::FrontEnd,
        BlockKind::Tiler,
        BlockKind::Memory,
        BlockKind::ShaderCore,
    ];

    /// The kinstr_prfcnt block type number.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Decodes a kinstr_prfcnt block type (4 = firmware and 5 = CSG are not counter blocks here).
    pub const fn from_prfcnt(ty: u8) -> Option<BlockKind> {
        match ty {
            0 => Some(BlockKind::FrontEnd),
            1 => Some(BlockKind::Tiler),
            2 => Some(BlockKind::Memory),
            3 => Some(BlockKind::ShaderCore),
            _ => None,
        }
    }
}

/// One GPU's counter layout: per [`BlockKind`] the names and their indices in the block.
#[derive(Debug)]
pub struct HardwareLayout {
    /// GPU name (the database key, e.g. `"Mali-G78"`).
    pub gpu: &'static str,
    /// Counters per block: 64, or 128 on GPUs that only kinstr_prfcnt can read.
    pub values_per_block: u32,
    /// Indexed by [`BlockKind::index`].
    pub blocks: [&'static [(&'static str, u32)]; 4],
}

impl HardwareLayout {
    /// Index of the counter with exactly this name in a block of this kind.
    pub fn index_of(&self, kind: BlockKind, name: &str) -> Option<u32> {
        self.blocks[kind.index()]
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, i)| i)
    }
}

/// One row of Arm's product table.
#[derive(Debug)]
pub struct SpecProduct {
    /// New-style product id (`arch_major << 12 | arch_minor << 8 | arch_rev << 4 | product_major`,
    /// with arch_minor/arch_rev zero).
    pub id: u16,
    /// Marketing name.
    pub name: &'static str,
    /// Architecture name as in the database ("Bifrost", "Valhall", "5th Generation").
    pub architecture: &'static str,
    /// [`HardwareLayout::gpu`] of its layout.
    pub layout: &'static str,
}

/// The generated layout called `gpu`.
pub fn spec_layout(gpu: &str) -> Option<&'static HardwareLayout> {
    arm_spec::SPEC_LAYOUTS.iter().find(|l| l.gpu == gpu)
}

/// One counter entry of Arm's database: a hardware counter (named by `source`) or a derived one (by
/// `equation`), for the GPUs in `gpus`. A machine name can have several entries, each for other GPUs.
#[derive(Debug)]
pub struct SpecCounter {
    /// Arm's machine name, e.g. `"MaliGPUActiveCy"`.
    pub machine_name: &'static str,
    /// Arm's stable id of the counter.
    pub stable_id: u32,
    /// Name for people, e.g. `"GPU active cycles"`.
    pub human_name: &'static str,
    /// The group it is shown in.
    pub group: &'static str,
    /// Units as the database writes them (`"cycles"`, `"percent"`, `"bytes"`, …).
    pub units: &'static str,
    /// Arm's short description.
    pub description: &'static str,
    /// Hardware counter names: the source name, then its aliases (empty for a derived counter).
    pub source: &'static [&'static str],
    /// The equation of a derived counter or constant.
    pub equation: Option<&'static str>,
    /// The GPUs that have it: bit `i` stands for `arm_counters::SPEC_COUNTER_GPUS[i]`.
    pub gpus: u16,
}

impl SpecCounter {
    /// Whether the GPU of layout `gpu` (a [`HardwareLayout::gpu`]) has this entry.
    pub fn supports(&self, gpu: &str) -> bool {
        arm_counters::SPEC_COUNTER_GPUS
            .iter()
            .position(|g| *g == gpu)
            .is_some_and(|i| self.gpus & (1 << i) != 0)
    }
}
