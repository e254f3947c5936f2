//! Counter name → (block, index) tables and product ids.
//!
//! Mali-G31 onwards come from Arm's counter database ([`arm_spec`], generated); Midgard layouts,
//! which that database lacks, are in [`midgard`].

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
