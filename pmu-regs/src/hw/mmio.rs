//! Volatile access to a PE's external (memory-mapped) PMU block.

use core::ptr::NonNull;

use thiserror::Error;

use crate::encoding::IndexOutOfRange;
use crate::external;
use crate::overflow::{read_hi_lo_hi, TornRead};
use crate::regs::pmceid::CommonEventSet;
use crate::regs::pmcfgr::Pmcfgr;
use crate::regs::pmcr::Pmcr;

/// How many hi-lo-hi rounds a 64-bit counter read tries before reporting a torn read.
const HI_LO_HI_ATTEMPTS: u32 = 4;

/// An MMIO access the view refuses, or a 64-bit read that never settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MmioError {
    /// The base address is not aligned to the 4 KiB block.
    #[error("PMU block base {0:#x} is not 4 KiB aligned")]
    MisalignedBase(usize),
    /// The offset is outside the 4 KiB block.
    #[error("offset {0:#x} is outside the 4 KiB PMU block")]
    OutOfBlock(usize),
    /// The offset is not a multiple of 4.
    #[error("offset {0:#x} is not 32-bit aligned")]
    Misaligned(usize),
    /// An event counter index above 30.
    #[error(transparent)]
    Index(#[from] IndexOutOfRange),
    /// The high word of a 64-bit counter kept changing.
    #[error(transparent)]
    Torn(#[from] TornRead),
}

/// A view of the 4 KiB external PMU block of one PE, accessed with 32-bit volatile loads and stores.
///
/// Offsets are those of [`crate::external`]. The view checks every offset; the caller of
/// [`Mmio::new`] vouches for the mapping.
#[derive(Debug)]
pub struct Mmio {
    base: NonNull<u32>,
}

impl Mmio {
    /// A view of the PMU block at `base`.
    ///
    /// # Safety
    /// `base` must be the start of a PE PMU block (or memory standing in for one), mapped for the
    /// lifetime of the returned value, valid for volatile 32-bit reads and writes across all 4 KiB,
    /// and mapped as Device memory when it is the real block. Nothing else may hold a Rust reference
    /// to that memory while the view exists.
    pub unsafe fn new(base: NonNull<u8>) -> Result<Self, MmioError> {
        let address = base.as_ptr() as usize;
        if !address.is_multiple_of(external::BLOCK_SIZE) {
            return Err(MmioError::MisalignedBase(address));
        }
        Ok(Self { base: base.cast() })
    }

    fn word(&self, offset: usize) -> Result<*mut u32, MmioError> {
        if offset >= external::BLOCK_SIZE {
            return Err(MmioError::OutOfBlock(offset));
        }
        if !offset.is_multiple_of(4) {
            return Err(MmioError::Misaligned(offset));
        }
        // SAFETY: `offset` is inside the 4 KiB block that `new`'s caller vouched for, so the result
        // stays within that allocation.
        Ok(unsafe { self.base.as_ptr().add(offset / 4) })
    }

    /// Reads the 32-bit register at `offset`.
    pub fn read32(&self, offset: usize) -> Result<u32, MmioError> {
        let ptr = self.word(offset)?;
        // SAFETY: `ptr` is an aligned word inside the block `new`'s caller vouched for.
        Ok(unsafe { ptr.read_volatile() })
    }

    /// Writes the 32-bit register at `offset`.
    pub fn write32(&self, offset: usize, value: u32) -> Result<(), MmioError> {
        let ptr = self.word(offset)?;
        // SAFETY: `ptr` is an aligned word inside the block `new`'s caller vouched for.
        unsafe { ptr.write_volatile(value) };
        Ok(())
    }

    /// Reads a 64-bit value held as a low word at `offset` and a high word at `offset + 4`, with the
    /// hi-lo-hi rule.
    pub fn read64(&self, offset: usize) -> Result<u64, MmioError> {
        let low_ptr = self.word(offset)?;
        let high_ptr = self.word(offset + 4)?;
        Ok(read_hi_lo_hi(
            // SAFETY: both pointers are aligned words inside the vouched-for block.
            || unsafe { high_ptr.read_volatile() },
            // SAFETY: as above.
            || unsafe { low_ptr.read_volatile() },
            HI_LO_HI_ATTEMPTS,
        )?)
    }

    /// `PMEVCNTR<n>_EL0` (64 bits on PMUv3p5; the high word reads as zero before).
    pub fn event_counter(&self, n: u8) -> Result<u64, MmioError> {
        self.read64(external::pmevcntr(n)?)
    }

    /// PMCCNTR_EL0.
    pub fn cycle_counter(&self) -> Result<u64, MmioError> {
        self.read64(external::PMCCNTR_LO)
    }

    /// PMCFGR.
    pub fn pmcfgr(&self) -> Result<Pmcfgr, MmioError> {
        Ok(Pmcfgr::from_bits(u64::from(self.read32(external::PMCFGR)?)))
    }

    /// PMCR_EL0 through its external view (bits `[10:0]`; N, IDCODE and IMP are not visible here).
    pub fn pmcr(&self) -> Result<Pmcr, MmioError> {
        Ok(Pmcr::from_bits(
            u64::from(self.read32(external::PMCR)?) & external::PMCR_EXTERNAL_MASK,
        ))
    }

    /// The common-event set from PMCEID0..PMCEID3.
    pub fn common_events(&self) -> Result<CommonEventSet, MmioError> {
        Ok(CommonEventSet::from_aarch32([
            self.read32(external::PMCEID0)?,
            self.read32(external::PMCEID1)?,
            self.read32(external::PMCEID2)?,
            self.read32(external::PMCEID3)?,
        ]))
    }

    /// Writes the unlock key to PMLAR (no effect where the software lock is not implemented).
    pub fn unlock(&self) -> Result<(), MmioError> {
        self.write32(external::PMLAR, external::PMLAR_UNLOCK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4 KiB-aligned block of ordinary memory standing in for the PMU block.
    #[repr(C, align(4096))]
    struct FakeBlock([u32; 1024]);

    #[test]
    fn reads_and_writes_words_and_counters() {
        let mut block = FakeBlock([0; 1024]);
        block.0[external::PMCFGR / 4] = 0x0001_FF06;
        block.0[external::PMCR / 4] = 0xFFFF_FFFF;
        block.0[external::pmevcntr(2).unwrap() / 4] = 0x89AB_CDEF;
        block.0[external::pmevcntr(2).unwrap() / 4 + 1] = 0x0123_4567;
        block.0[external::PMCEID2 / 4] = 1 << 5;
        let base = NonNull::from(&mut block).cast::<u8>();
        // SAFETY: `block` is 4 KiB, aligned, lives to the end of the test and is only reached through
        // the view from here on.
        let mmio = unsafe { Mmio::new(base) }.unwrap();
        assert_eq!(mmio.pmcfgr().unwrap().n(), 6);
        assert_eq!(mmio.pmcr().unwrap().bits(), 0x7FF);
        assert_eq!(mmio.event_counter(2), Ok(0x0123_4567_89AB_CDEF));
        assert!(mmio.common_events().unwrap().contains(0x4005));
        mmio.unlock().unwrap();
        assert_eq!(mmio.read32(external::PMLAR), Ok(external::PMLAR_UNLOCK));
        assert_eq!(mmio.read32(0x1000), Err(MmioError::OutOfBlock(0x1000)));
        assert_eq!(mmio.read32(0x2), Err(MmioError::Misaligned(0x2)));
        assert_eq!(mmio.read64(0xFFC), Err(MmioError::OutOfBlock(0x1000)));
        assert_eq!(
            mmio.event_counter(31),
            Err(MmioError::Index(IndexOutOfRange(31)))
        );
    }

    #[test]
    fn misaligned_base_is_refused() {
        let mut block = FakeBlock([0; 1024]);
        let base = NonNull::from(&mut block.0[1]).cast::<u8>();
        // SAFETY: the view is refused before any access.
        let err = unsafe { Mmio::new(base) }.unwrap_err();
        assert!(matches!(err, MmioError::MisalignedBase(_)));
    }
}
