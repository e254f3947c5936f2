//! PMCEID0_EL0 and PMCEID1_EL0: which common events the PE implements.

use core::fmt;

use thiserror::Error;

use crate::version::PmuVersion;

/// Where the implemented-bit of a common event lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PmceidBit {
    /// 0 for PMCEID0_EL0, 1 for PMCEID1_EL0.
    pub register: u8,
    /// Bit position inside that 64-bit register.
    pub bit: u8,
}

/// An event number PMCEID cannot describe (only 0x0000–0x003F and 0x4000–0x403F are discoverable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("event {0:#06x} is not a common event that PMCEID0/1_EL0 describe")]
pub struct NotDiscoverable(pub u16);

/// The PMCEID0_EL0/PMCEID1_EL0 pair, decoded as the set of implemented common events.
///
/// | register | bits `[31:0]` | bits `[63:32]` (PMUv3p1) |
/// |---|---|---|
/// | PMCEID0_EL0 | events 0x0000 + n | events 0x4000 + n |
/// | PMCEID1_EL0 | events 0x0020 + n | events 0x4020 + n |
///
/// The AArch32 and external views PMCEID0..3 are the four 32-bit halves, in the order
/// `PMCEID0_EL0[31:0]`, `PMCEID1_EL0[31:0]`, `PMCEID0_EL0[63:32]`, `PMCEID1_EL0[63:32]`.
///
/// ```
/// use pmu_regs::CommonEventSet;
/// // Bit 3 of PMCEID0 = L1D_CACHE_REFILL, bit 31 of PMCEID1 = STALL_SLOT, bit 37 of PMCEID0 = 0x4005.
/// let set = CommonEventSet::from_registers(1 << 3 | 1 << 37, 1 << 31);
/// assert!(set.iter().eq([0x0003, 0x003F, 0x4005]));
/// assert!(set.contains(0x4005) && !set.contains(0x0013));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CommonEventSet {
    pmceid0: u64,
    pmceid1: u64,
}

impl CommonEventSet {
    /// The set described by raw PMCEID0_EL0 and PMCEID1_EL0 values.
    pub const fn from_registers(pmceid0: u64, pmceid1: u64) -> Self {
        Self { pmceid0, pmceid1 }
    }

    /// The set described by the four 32-bit AArch32/external registers PMCEID0..PMCEID3.
    pub const fn from_aarch32(pmceid: [u32; 4]) -> Self {
        Self {
            pmceid0: pmceid[0] as u64 | (pmceid[2] as u64) << 32,
            pmceid1: pmceid[1] as u64 | (pmceid[3] as u64) << 32,
        }
    }

    /// Raw PMCEID0_EL0.
    pub const fn pmceid0(self) -> u64 {
        self.pmceid0
    }

    /// Raw PMCEID1_EL0.
    pub const fn pmceid1(self) -> u64 {
        self.pmceid1
    }

    /// The register and bit describing `event`.
    pub const fn bit_of(event: u16) -> Result<PmceidBit, NotDiscoverable> {
        let base = match event & 0xFFC0 {
            0x0000 => 0,
            0x4000 => 32,
            _ => return Err(NotDiscoverable(event)),
        };
        Ok(PmceidBit {
            register: ((event >> 5) & 1) as u8,
            bit: base + (event & 0x1F) as u8,
        })
    }

    /// The event a register bit describes (`register` 0 or 1, `bit` 0..=63); `None` otherwise.
    pub const fn event_of(register: u8, bit: u8) -> Option<u16> {
        if register > 1 || bit > 63 {
            return None;
        }
        let range = if bit >= 32 { 0x4000 } else { 0 };
        Some(range | (register as u16) << 5 | (bit & 0x1F) as u16)
    }

    /// Whether the PMCEID pair says `event` is implemented (always false for undiscoverable events).
    pub const fn contains(self, event: u16) -> bool {
        match Self::bit_of(event) {
            Ok(PmceidBit { register, bit }) => {
                let word = if register == 0 {
                    self.pmceid0
                } else {
                    self.pmceid1
                };
                word & (1u64 << bit) != 0
            }
            Err(_) => false,
        }
    }

    /// A copy with `event` marked as implemented; events PMCEID cannot describe are ignored.
    #[must_use]
    pub const fn with_event(self, event: u16) -> Self {
        match Self::bit_of(event) {
            Ok(PmceidBit { register: 0, bit }) => Self {
                pmceid0: self.pmceid0 | 1u64 << bit,
                ..self
            },
            Ok(PmceidBit { bit, .. }) => Self {
                pmceid1: self.pmceid1 | 1u64 << bit,
                ..self
            },
            Err(_) => self,
        }
    }

    /// A copy with `event` marked as not implemented; events PMCEID cannot describe are ignored.
    ///
    /// ```
    /// use pmu_regs::CommonEventSet;
    /// let a720_like = CommonEventSet::all_defined().without_event(0x06).without_event(0x07);
    /// assert!(!a720_like.contains(0x06) && a720_like.contains(0x08));
    /// ```
    #[must_use]
    pub const fn without_event(self, event: u16) -> Self {
        match Self::bit_of(event) {
            Ok(PmceidBit { register: 0, bit }) => Self {
                pmceid0: self.pmceid0 & !(1u64 << bit),
                ..self
            },
            Ok(PmceidBit { bit, .. }) => Self {
                pmceid1: self.pmceid1 & !(1u64 << bit),
                ..self
            },
            Err(_) => self,
        }
    }

    /// Every event of [`CommonEvent`](crate::CommonEvent): what a PE implementing all the defined
    /// common events reports.
    pub const fn all_defined() -> Self {
        let all = crate::event::CommonEvent::ALL;
        let mut set = Self::from_registers(0, 0);
        let mut i = 0;
        while i < all.len() {
            set = set.with_event(all[i] as u16);
            i += 1;
        }
        set
    }

    /// Marks `event` as implemented.
    pub fn insert(&mut self, event: u16) -> Result<(), NotDiscoverable> {
        let PmceidBit { register, bit } = Self::bit_of(event)?;
        let word = if register == 0 {
            &mut self.pmceid0
        } else {
            &mut self.pmceid1
        };
        *word |= 1u64 << bit;
        Ok(())
    }

    /// The set as `version` reports it: without the 0x4000 range before PMUv3p1.
    #[must_use]
    pub const fn for_version(self, version: PmuVersion) -> Self {
        if version.has_extended_pmceid() {
            self
        } else {
            Self {
                pmceid0: self.pmceid0 & 0xFFFF_FFFF,
                pmceid1: self.pmceid1 & 0xFFFF_FFFF,
            }
        }
    }

    /// The implemented event numbers, ascending: 0x0000–0x003F first, then 0x4000–0x403F.
    pub fn iter(self) -> impl Iterator<Item = u16> {
        (0u16..0x40)
            .chain(0x4000u16..0x4040)
            .filter(move |&e| self.contains(e))
    }
}

impl fmt::Debug for CommonEventSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommonEventSet")
            .field("pmceid0", &format_args!("{:#018x}", self.pmceid0))
            .field("pmceid1", &format_args!("{:#018x}", self.pmceid1))
            .field("events", &format_args!("{:x?}", IterFmt(*self)))
            .finish()
    }
}

struct IterFmt(CommonEventSet);

impl fmt::Debug for IterFmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_bits() {
        // QEMU's rule: bit (event & 0x1F) of PMCEID0 if (event & 0x20) == 0, else of PMCEID1.
        assert_eq!(
            CommonEventSet::bit_of(0x0011),
            Ok(PmceidBit {
                register: 0,
                bit: 17
            })
        );
        assert_eq!(
            CommonEventSet::bit_of(0x0023),
            Ok(PmceidBit {
                register: 1,
                bit: 3
            })
        );
        assert_eq!(
            CommonEventSet::bit_of(0x003F),
            Ok(PmceidBit {
                register: 1,
                bit: 31
            })
        );
        assert_eq!(
            CommonEventSet::bit_of(0x4000),
            Ok(PmceidBit {
                register: 0,
                bit: 32
            })
        );
        assert_eq!(
            CommonEventSet::bit_of(0x4010),
            Ok(PmceidBit {
                register: 0,
                bit: 48
            })
        );
        assert_eq!(
            CommonEventSet::bit_of(0x4024),
            Ok(PmceidBit {
                register: 1,
                bit: 36
            })
        );
        assert_eq!(CommonEventSet::bit_of(0x0040), Err(NotDiscoverable(0x40)));
        assert_eq!(CommonEventSet::bit_of(0x8005), Err(NotDiscoverable(0x8005)));
        assert_eq!(CommonEventSet::event_of(2, 0), None);
        assert_eq!(CommonEventSet::event_of(0, 64), None);
    }

    #[test]
    fn aarch32_halves() {
        let set = CommonEventSet::from_aarch32([1, 2, 4, 8]);
        assert_eq!(set.pmceid0(), 1 | 4 << 32);
        assert_eq!(set.pmceid1(), 2 | 8 << 32);
        assert!(set.iter().eq([0x0000, 0x0021, 0x4002, 0x4023]));
    }

    #[test]
    fn all_defined_has_every_common_event_and_nothing_else() {
        let set = CommonEventSet::all_defined();
        assert_eq!(set.iter().count(), crate::CommonEvent::ALL.len());
        assert!(set.contains(0x4026) && !set.contains(0x4007));
        assert_eq!(
            CommonEventSet::default().with_event(0x8000),
            CommonEventSet::default()
        );
    }

    #[test]
    fn v3_hides_the_upper_range() {
        let set = CommonEventSet::from_registers(u64::MAX, u64::MAX);
        assert_eq!(set.iter().count(), 128);
        assert_eq!(set.for_version(PmuVersion::V3).iter().count(), 64);
        let mut s = CommonEventSet::default();
        assert_eq!(s.insert(0x1234), Err(NotDiscoverable(0x1234)));
        s.insert(0x4026).unwrap();
        assert!(s.contains(0x4026));
    }
}
