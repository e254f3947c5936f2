//! Product identification from the raw GPU_ID register.

use super::error::GpuError;
use super::tables::arm_spec::SPEC_PRODUCTS;
use super::tables::midgard::{MIDGARD_T760_T860_T880, MIDGARD_T820_T830};
use super::tables::{spec_layout, HardwareLayout};

/// GPU architecture family; selects the [`GpuCounter`](super::GpuCounter) formulas.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Mali-T600/T700/T800.
    Midgard,
    /// Mali-G71/G72/G51/G76/G52/G31.
    Bifrost,
    /// Valhall with a Job Manager: Mali-G77/G57/G78/G68/G78AE.
    ValhallJm,
    /// Valhall with a Command Stream Frontend: Mali-G710/G610/G510/G310/G715/G615.
    ValhallCsf,
    /// Arm 5th Gen: Mali-G720/G620/G725/G625 and the Mali G1 series.
    FifthGen,
}

/// One known GPU product.
#[derive(Clone, Copy, Debug)]
pub struct Product {
    /// Marketing name, e.g. `"Mali-G78"`.
    pub name: &'static str,
    /// 16-bit product id: legacy (`0x0860`) or new-style (`0x9002`).
    pub id: u16,
    /// Architecture family.
    pub family: Family,
    /// Counter layout, `None` for products identified but not readable (T60x/T62x/T72x).
    pub layout: Option<&'static HardwareLayout>,
}

impl Product {
    /// `true` when the legacy vinstr reader can read this GPU (its blocks have 64 counters): every
    /// product up to the G710 class.
    pub fn vinstr_capable(&self) -> bool {
        self.layout.is_some_and(|l| l.values_per_block == 64)
    }
}

/// Midgard products, identified by the legacy product id (`GPU_ID[31:16]`).
pub static MIDGARD_PRODUCTS: &[Product] = &[
    Product {
        name: "Mali-T600",
        id: 0x6956,
        family: Family::Midgard,
        layout: None,
    },
    Product {
        name: "Mali-T620",
        id: 0x0620,
        family: Family::Midgard,
        layout: None,
    },
    Product {
        name: "Mali-T720",
        id: 0x0720,
        family: Family::Midgard,
        layout: None,
    },
    Product {
        name: "Mali-T760",
        id: 0x0750,
        family: Family::Midgard,
        layout: Some(&MIDGARD_T760_T860_T880),
    },
    Product {
        name: "Mali-T820",
        id: 0x0820,
        family: Family::Midgard,
        layout: Some(&MIDGARD_T820_T830),
    },
    Product {
        name: "Mali-T830",
        id: 0x0830,
        family: Family::Midgard,
        layout: Some(&MIDGARD_T820_T830),
    },
    Product {
        name: "Mali-T860",
        id: 0x0860,
        family: Family::Midgard,
        layout: Some(&MIDGARD_T760_T860_T880),
    },
    Product {
        name: "Mali-T880",
        id: 0x0880,
        family: Family::Midgard,
        layout: Some(&MIDGARD_T760_T860_T880),
    },
];

fn family_of(id: u16, architecture: &str) -> Family {
    match (architecture, id >> 12) {
        ("Bifrost", _) => Family::Bifrost,
        ("Valhall", 9) => Family::ValhallJm,
        ("Valhall", _) => Family::ValhallCsf,
        _ => Family::FifthGen,
    }
}

/// Every Bifrost-and-later product of Arm's table, with its layout.
pub fn spec_product(id: u16) -> Option<Product> {
    let row = SPEC_PRODUCTS.iter().find(|p| p.id == id)?;
    Some(Product {
        name: row.name,
        id: row.id,
        family: family_of(row.id, row.architecture),
        layout: spec_layout(row.layout),
    })
}

/// Arm's internal code names of the GPUs, by new-style product id: the names kbase's dummy GPU model
/// (`no_mali_gpu=`) and Arm's driver sources use. Only for messages: a GPU without a counter layout
/// is reported as, say, "tDUx (GPU_ID 0xa2010000)".
pub static CODENAMES: &[(u16, &str)] = &[
    (0x6000, "tMIx"),
    (0x6001, "tHEx"),
    (0x7000, "tSIx"),
    (0x7001, "tNOx"),
    (0x7002, "tGOx"),
    (0x7003, "tDVx"),
    (0x9000, "tTRx"),
    (0x9001, "tNAx"),
    (0x9002, "tBEx"),
    (0x9005, "tBAx"),
    (0xA001, "tDUx"),
    (0xA002, "tODx"),
    (0xA003, "tGRx"),
    (0xA004, "tVAx"),
    (0xA007, "lODx"),
    (0xB002, "tTUx"),
];

/// Arm's code name of the GPU with this raw GPU_ID, if known.
pub fn codename(gpu_id: u64) -> Option<&'static str> {
    let id = decode_gpu_id(gpu_id).ok()?;
    CODENAMES.iter().find(|(p, _)| *p == id).map(|(_, n)| *n)
}

/// The fields of a 32-bit new-style GPU_ID: `(arch_major, arch_minor, arch_rev, product_major)`.
pub fn gpu_id_fields(gpu_id: u64) -> (u8, u8, u8, u8) {
    let low = gpu_id as u32;
    let nibble = |shift: u32| ((low >> shift) & 0xF) as u8;
    (nibble(28), nibble(24), nibble(20), nibble(16))
}

/// `(arch_major, product_major)` of a GPU_ID, or the legacy product id for Midgard.
fn decode_gpu_id(gpu_id: u64) -> Result<u16, u16> {
    let low = gpu_id as u32;
    let legacy = (low >> 16) as u16;
    if legacy == 0x6956 || (legacy < 0x1000 && gpu_id >> 32 == 0) {
        return Err(legacy);
    }
    let (arch_major, product_major) = if low >> 28 == 0xF {
        ((gpu_id >> 56) as u16, ((gpu_id >> 32) & 0xFF) as u16)
    } else {
        ((low >> 28) as u16, ((low >> 16) & 0xF) as u16)
    };
    Ok((arch_major << 12) | product_major)
}

/// Identifies the product of a raw GPU_ID (32-bit, or 64-bit with `GPU_ID[31:28]` = 0xF).
pub fn identify(gpu_id: u64) -> Result<Product, GpuError> {
    let found = match decode_gpu_id(gpu_id) {
        Err(legacy) => MIDGARD_PRODUCTS.iter().find(|p| p.id == legacy).copied(),
        Ok(id) => spec_product(id),
    };
    found.ok_or(GpuError::UnsupportedProduct {
        gpu_id,
        codename: codename(gpu_id),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies_each_generation() {
        assert_eq!(identify(0x0860_0200).unwrap().name, "Mali-T860");
        assert_eq!(identify(0x6956_0000).unwrap().name, "Mali-T600");
        assert_eq!(identify(0x6000_0011).unwrap().name, "Mali-G71");
        let g78 = identify(0x9002_0010).unwrap();
        assert_eq!((g78.name, g78.family), ("Mali-G78", Family::ValhallJm));
        // Arch minor/revision bits do not matter.
        assert_eq!(identify(0x9212_0000).unwrap().name, "Mali-G78");
        assert_eq!(identify(0xA002_0000).unwrap().family, Family::ValhallCsf);
        let g715 = identify(0xB002_0000).unwrap();
        assert!(!g715.vinstr_capable());
        assert_eq!(identify(0xC000_0000).unwrap().family, Family::FifthGen);
        // 64-bit GPU_ID: arch_major in [63:56], product_major in [35:32].
        assert_eq!(identify(0x0E00_0003_F000_0000).unwrap().name, "Mali G1-Pro");
    }

    #[test]
    fn unknown_ids_are_typed_errors() {
        assert!(matches!(
            identify(0x0999_0000),
            Err(GpuError::UnsupportedProduct {
                gpu_id: 0x0999_0000,
                codename: None
            })
        ));
        assert!(matches!(
            identify(0x9009_0000),
            Err(GpuError::UnsupportedProduct { .. })
        ));
        // kbase's dummy model offers tDUx (arch 10.2.0, product 1), which Arm's database lacks.
        let tdux = identify(0xA201_0000).unwrap_err();
        assert_eq!(
            tdux.to_string(),
            "unsupported Mali GPU tDUx (GPU_ID 0xa2010000: arch 10.2.0, product 1): \
             not in Arm's counter database"
        );
        assert!(identify(0).is_err());
    }
}
