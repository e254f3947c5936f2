//! `TRCRSCTLR<n>`, the ETE's resource selectors, and the selector numbers the trace controls use.

use thiserror::Error;

use crate::encoding::SysRegEncoding;
use crate::regs::field::register;

/// A resource selector number the trace unit does not have: selectors are 0..=31 and pairs 1..=15.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("no trace resource {kind} {index} (selectors 0..=31, pairs 1..=15)")]
pub struct NoSuchResource {
    /// `"selector"` or `"pair"`.
    pub kind: &'static str,
    /// The rejected number.
    pub index: u8,
}

/// A resource selector, 0..=31. Selector 0 is always FALSE and selector 1 always TRUE; 2..=31 are
/// programmed through `TRCRSCTLR<n>` (those below 2 × TRCIDR4.NUMRSPAIR exist).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceSelector(pub(crate) u8);

impl ResourceSelector {
    /// Selector 0: always FALSE.
    pub const FALSE: ResourceSelector = ResourceSelector(0);
    /// Selector 1: always TRUE.
    pub const TRUE: ResourceSelector = ResourceSelector(1);

    /// Selector `n`, or [`NoSuchResource`] above 31.
    pub const fn new(n: u8) -> Result<ResourceSelector, NoSuchResource> {
        if n > 31 {
            Err(NoSuchResource {
                kind: "selector",
                index: n,
            })
        } else {
            Ok(ResourceSelector(n))
        }
    }

    /// Its number.
    pub const fn index(self) -> u8 {
        self.0
    }

    /// Whether it is one of the two fixed selectors (0 = FALSE, 1 = TRUE) that have no register.
    pub const fn is_fixed(self) -> bool {
        self.0 < 2
    }
}

register! {
    /// `TRCRSCTLR<n>` (FEAT_ETE, n = 2..=31): what resource selector n watches. GROUP picks a group of
    /// resources and SELECT one bit per resource of the group; INV inverts the result, PAIRINV (even n
    /// only) inverts the pair's combined result.
    ///
    /// Group 0b0000 is the external input selectors: SELECT bit n follows `TRCEXTINSELR<n>`
    /// ([`TrcExtInSelR`](crate::TrcExtInSelR)). Selectors 0 and 1 are fixed (FALSE and TRUE) and have no
    /// register.
    ///
    /// Encoding `S2_1_C1_C<n[3:0]>_<n[4]>` ([`TrcRsctlr::encoding`]); external offset `0x200 + 4n` of
    /// the ETE component.
    ///
    /// ```
    /// use pmu_regs::regs::trcrsctlr::ResourceSelector;
    /// use pmu_regs::TrcRsctlr;
    /// // Selector 2 is true while external input 0 is active.
    /// let rs2 = TrcRsctlr::external_inputs(0b0001).unwrap();
    /// assert_eq!(rs2.bits(), 0x0000_0001);
    /// let two = ResourceSelector::new(2).unwrap();
    /// assert_eq!(TrcRsctlr::encoding(two).map(|e| e.to_string()), Some("S2_1_C1_C2_0".into()));
    /// assert_eq!(TrcRsctlr::external_offset(two), Some(0x208));
    /// assert_eq!(TrcRsctlr::encoding(ResourceSelector::TRUE), None); // fixed, no register
    /// ```
    pub struct TrcRsctlr = "TRCRSCTLR<n>" {
        /// SELECT, bits `[15:0]`: one bit per resource of the group.
        field select / with_select [15:0] u16, ReadWrite, V3;
        /// GROUP, bits `[19:16]`: the resource group (0b0000: external input selectors).
        field group / with_group [19:16] u8, ReadWrite, V3;
        /// INV, bit 20: invert the selected resources' result.
        flag inv / with_inv [20], ReadWrite, V3;
        /// PAIRINV, bit 21 (even n only): invert the pair's combined result.
        flag pairinv / with_pairinv [21], ReadWrite, V3;
    }
}

impl TrcRsctlr {
    /// GROUP value of the external input selectors.
    pub const GROUP_EXTERNAL_INPUTS: u8 = 0b0000;

    /// A selector watching the external inputs in `inputs` (bit n = `TRCEXTINSELR<n>`, n ≤ 3): true
    /// while any of them is active.
    pub const fn external_inputs(inputs: u8) -> Result<TrcRsctlr, crate::FieldOverflow> {
        if inputs > 0xF {
            return Err(crate::FieldOverflow {
                register: "TRCRSCTLR<n>",
                field: "select",
                value: inputs as u64,
                width: 4,
            });
        }
        Ok(TrcRsctlr(inputs as u64))
    }

    /// `S2_1_C1_C<n[3:0]>_<n[4]>`, or `None` for the fixed selectors 0 and 1.
    pub const fn encoding(selector: ResourceSelector) -> Option<SysRegEncoding> {
        if selector.is_fixed() {
            return None;
        }
        let n = selector.index();
        Some(SysRegEncoding::new(2, 1, 1, n & 0xF, n >> 4))
    }

    /// Offset in the ETE's external register block, `0x200 + 4n`, or `None` for selectors 0 and 1.
    pub const fn external_offset(selector: ResourceSelector) -> Option<usize> {
        if selector.is_fixed() {
            return None;
        }
        Some(crate::external::ete::TRCRSCTLR_BASE + 4 * selector.index() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PmuVersion, Register};

    #[test]
    fn layout_and_addresses() {
        assert_eq!(
            TrcRsctlr::res0_mask(PmuVersion::V3) & 0xFFFF_FFFF,
            0xFFC0_0000
        );
        assert!(TrcRsctlr::external_inputs(0x10).is_err());
        assert_eq!(ResourceSelector::new(32).unwrap_err().index, 32);
        for n in 2..=31u8 {
            let sel = ResourceSelector::new(n).unwrap();
            let reg = (TrcRsctlr::external_offset(sel).unwrap() >> 2) as u8;
            assert_eq!(
                TrcRsctlr::encoding(sel),
                Some(SysRegEncoding::new(
                    2,
                    1,
                    (reg >> 7) & 7,
                    reg & 0xF,
                    (reg >> 4) & 7
                )),
                "{n}"
            );
        }
    }
}
