//! Register reads and writes of the software PMU, by [`PmuRegister`].

use super::{ExceptionLevel, SoftPmu, SoftPmuError};
use crate::encoding::PmuRegister;
use crate::regs::counter_set::CounterSet;
use crate::regs::field::Register;
use crate::regs::pmccfiltr::Pmccfiltr;
use crate::regs::pmcr::Pmcr as PmcrValue;
use crate::regs::pmevtyper::Pmevtyper;
use crate::regs::pmselr::{Pmselr as PmselrValue, Selected};
use crate::regs::pmuserenr::Pmuserenr as PmuserenrValue;

/// Whether an access reads or writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Read,
    Write,
}

impl SoftPmu {
    /// Reads `register` as the current context would with MRS.
    pub fn read(&self, register: PmuRegister) -> Result<u64, SoftPmuError> {
        use PmuRegister::*;
        self.check_el0(register, Direction::Read)?;
        let version = self.config.version;
        Ok(match register {
            Pmcr => self.pmcr().bits(),
            Pmcntenset | Pmcntenclr => (self.cnten & self.visible()).bits(),
            Pmintenset | Pmintenclr => (self.inten & self.visible()).bits(),
            Pmovsset | Pmovsclr => (self.ovs & self.visible()).bits(),
            Pmswinc | Pmzr => return Err(SoftPmuError::WriteOnly(register)),
            Pmselr => self.pmselr.bits(),
            Pmceid0 => self.config.common_events.for_version(version).pmceid0(),
            Pmceid1 => self.config.common_events.for_version(version).pmceid1(),
            Pmccntr => self.ccntr,
            Pmxevtyper => match self.pmselr.selected(self.config.counters) {
                Selected::EventCounter(n) => self.evtyper[usize::from(n)].bits(),
                Selected::CycleFilter => self.ccfiltr.bits(),
                Selected::Unpredictable(sel) => {
                    return Err(SoftPmuError::Unpredictable { register, sel })
                }
            },
            Pmxevcntr => match self.pmselr.selected(self.config.counters) {
                Selected::EventCounter(n) => self.evcntr[usize::from(n)],
                Selected::CycleFilter | Selected::Unpredictable(_) => {
                    return Err(SoftPmuError::Unpredictable {
                        register,
                        sel: self.pmselr.sel(),
                    })
                }
            },
            Pmuserenr => self.pmuserenr.bits(),
            Pmmir => {
                if !version.has_pmmir() {
                    return Err(SoftPmuError::NotImplemented { register, version });
                }
                self.config.pmmir.bits() & !crate::Pmmir::res0_mask(version)
            }
            Pmevcntr(n) => self.event_counter(n)?,
            Pmevtyper(n) => self.event_type(n)?.bits(),
            Pmccfiltr => self.ccfiltr.bits(),
            Pmuacr | Pmicntr | Pmicfiltr => return Err(SoftPmuError::NotModelled(register)),
        })
    }

    /// Writes `value` to `register` as the current context would with MSR.
    ///
    /// RES0 and read-only bits of `value` are dropped, as the hardware ignores them.
    pub fn write(&mut self, register: PmuRegister, value: u64) -> Result<(), SoftPmuError> {
        use PmuRegister::*;
        self.check_el0(register, Direction::Write)?;
        let version = self.config.version;
        let bitmap = CounterSet::from_bits_retain(value) & self.visible();
        match register {
            Pmcr => self.write_pmcr(PmcrValue::from_bits(value)),
            Pmcntenset => self.cnten |= bitmap,
            Pmcntenclr => self.cnten &= !bitmap,
            Pmintenset => self.inten |= bitmap,
            Pmintenclr => self.inten &= !bitmap,
            Pmovsset => self.ovs |= bitmap,
            Pmovsclr => self.ovs &= !bitmap,
            Pmswinc => self.software_increment(bitmap & CounterSet::EVENT_COUNTERS),
            Pmzr => {
                if !version.has_v3p9_controls() {
                    return Err(SoftPmuError::NotImplemented { register, version });
                }
                for n in bitmap.event_counters() {
                    self.evcntr[usize::from(n)] = 0;
                }
                if bitmap.contains(CounterSet::C) {
                    self.ccntr = 0;
                }
            }
            Pmselr => self.pmselr = PmselrValue::from_bits(value & 0x1F),
            Pmceid0 | Pmceid1 | Pmmir => return Err(SoftPmuError::ReadOnly(register)),
            Pmccntr => self.ccntr = value,
            Pmxevtyper => match self.pmselr.selected(self.config.counters) {
                Selected::EventCounter(n) => self.write_event_type(n, value)?,
                Selected::CycleFilter => self.write_cycle_filter(value),
                Selected::Unpredictable(sel) => {
                    return Err(SoftPmuError::Unpredictable { register, sel })
                }
            },
            Pmxevcntr => match self.pmselr.selected(self.config.counters) {
                Selected::EventCounter(n) => self.write_event_counter(n, value)?,
                Selected::CycleFilter | Selected::Unpredictable(_) => {
                    return Err(SoftPmuError::Unpredictable {
                        register,
                        sel: self.pmselr.sel(),
                    })
                }
            },
            Pmuserenr => {
                self.pmuserenr =
                    PmuserenrValue::from_bits(value & PmuserenrValue::writable_mask(version))
            }
            Pmevcntr(n) => self.write_event_counter(n, value)?,
            Pmevtyper(n) => self.write_event_type(n, value)?,
            Pmccfiltr => self.write_cycle_filter(value),
            Pmuacr | Pmicntr | Pmicfiltr => return Err(SoftPmuError::NotModelled(register)),
        }
        Ok(())
    }

    /// Writes PMCR_EL0: stores the writable bits, then performs the P and C resets.
    pub fn write_pmcr(&mut self, value: PmcrValue) {
        let writable = self.pmcr_writable();
        let kept = self.pmcr.bits() & !writable;
        self.pmcr = PmcrValue::from_bits(kept | (value.bits() & writable));
        if value.p() {
            // P resets the counters of the current context's range: below HPMN at EL0/EL1, all at EL2+.
            for n in (self.visible() & CounterSet::EVENT_COUNTERS).event_counters() {
                self.evcntr[usize::from(n)] = 0;
            }
        }
        if value.c() {
            self.ccntr = 0;
            self.prescale = 0;
        }
    }

    /// Writes `PMEVCNTR<index>_EL0` (bits above the storage width are dropped before PMUv3p5).
    pub fn write_event_counter(&mut self, index: u8, value: u64) -> Result<(), SoftPmuError> {
        self.check_counter(index)?;
        self.evcntr[usize::from(index)] = value & self.event_storage_mask();
        Ok(())
    }

    /// Writes `PMEVTYPER<index>_EL0` (RES0 bits of the version dropped).
    pub fn write_event_type(&mut self, index: u8, value: u64) -> Result<(), SoftPmuError> {
        self.check_counter(index)?;
        let mask = Pmevtyper::writable_mask(self.config.version);
        self.evtyper[usize::from(index)] = Pmevtyper::from_bits(value & mask);
        Ok(())
    }

    /// Writes PMCCFILTR_EL0 (RES0 bits of the version dropped).
    pub fn write_cycle_filter(&mut self, value: u64) {
        let mask = Pmccfiltr::writable_mask(self.config.version);
        self.ccfiltr = Pmccfiltr::from_bits(value & mask);
    }

    /// Applies the EL0 access rules: EL1-only registers are UNDEFINED, and with PMUSERENR_EL0.EN clear
    /// only SW (PMSWINC writes), CR (PMCCNTR reads) and ER (event counter reads, PMSELR) grant access.
    fn check_el0(&self, register: PmuRegister, direction: Direction) -> Result<(), SoftPmuError> {
        use PmuRegister::*;
        if self.context.el != ExceptionLevel::El0 {
            return Ok(());
        }
        let u = self.pmuserenr;
        let allowed = match register {
            Pmintenset | Pmintenclr | Pmmir | Pmuacr => false,
            Pmuserenr => direction == Direction::Read,
            _ if u.en() => true,
            Pmswinc => u.sw() && direction == Direction::Write,
            Pmccntr => u.cr() && direction == Direction::Read,
            Pmevcntr(_) | Pmxevcntr => u.er() && direction == Direction::Read,
            Pmselr => u.er(),
            _ => false,
        };
        if allowed {
            Ok(())
        } else {
            Err(SoftPmuError::TrappedAtEl0(register))
        }
    }
}
