//! PMMIR_EL1, the machine identification register (PMUv3p4).

use thiserror::Error;

use crate::regs::field::register;

register! {
    /// PMMIR_EL1: slot and bus parameters the stall and bus events are measured against. Read-only.
    ///
    /// ```
    /// use pmu_regs::Pmmir;
    /// let m = Pmmir::from_bits(0x0005_0108); // BUS_WIDTH 5, BUS_SLOTS 1, SLOTS 8
    /// assert_eq!(m.slots(), 8);
    /// assert_eq!(m.bus_width_bytes(), Ok(Some(16)));
    /// ```
    pub struct Pmmir = "PMMIR_EL1" {
        /// SLOTS, bits `[7:0]`: largest STALL_SLOT increment per cycle.
        field slots / with_slots [7:0] u8, ReadOnly, V3p4;
        /// BUS_SLOTS, bits `[15:8]` (Armv8.7): largest BUS_ACCESS increment per BUS_CYCLES cycle.
        field bus_slots / with_bus_slots [15:8] u8, ReadOnly, V3p7;
        /// BUS_WIDTH, bits `[19:16]` (Armv8.7): log2(bytes) + 1, 0 = not given.
        field bus_width / with_bus_width [19:16] u8, ReadOnly, V3p7;
        /// THWIDTH, bits `[23:20]` (FEAT_PMUv3_TH): width of PMEVTYPER.TH.
        field thwidth / with_thwidth [23:20] u8, ReadOnly, V3p8;
        /// EDGE, bits `[27:24]` (FEAT_PMUv3_EDGE): edge-detection support.
        field edge / with_edge [27:24] u8, ReadOnly, V3p9;
    }
}

/// A BUS_WIDTH encoding the architecture reserves (1, 2, 13, 14 or 15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("PMMIR_EL1.BUS_WIDTH encoding {0:#x} is reserved")]
pub struct ReservedBusWidth(pub u8);

impl Pmmir {
    /// Bus width in bytes: `None` when BUS_WIDTH is 0 (not given), 4 to 2048 for encodings 3 to 12.
    pub const fn bus_width_bytes(self) -> Result<Option<u32>, ReservedBusWidth> {
        match self.bus_width() {
            0 => Ok(None),
            v @ 3..=12 => Ok(Some(1u32 << (v - 1))),
            v => Err(ReservedBusWidth(v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_width_decodes_every_encoding() {
        let m = |v: u64| Pmmir::from_bits(v << 16);
        assert_eq!(m(0).bus_width_bytes(), Ok(None));
        assert_eq!(m(3).bus_width_bytes(), Ok(Some(4)));
        assert_eq!(m(12).bus_width_bytes(), Ok(Some(2048)));
        for bad in [1u64, 2, 13, 14, 15] {
            assert_eq!(m(bad).bus_width_bytes(), Err(ReservedBusWidth(bad as u8)));
        }
    }
}
