//! Programs the architectural software PMU the way a kernel driver programs a real one: an event counter for
//! retired instructions at EL0 with its overflow interrupt, the cycle counter with a divider off, then a
//! workload that wraps the 32-bit counter; the interrupt handler clears the overflow flags and counts the
//! wraps, and the overflow arithmetic reconstructs the exact total.
//!
//! `cargo run -p pmu-regs --example soft_pmu`

use pmu_regs::encoding::PmuRegister;
use pmu_regs::overflow::{CounterWidth, OverflowAccumulator};
use pmu_regs::soft_pmu::{ExecContext, SoftPmu, SoftPmuConfig};
use pmu_regs::{CommonEvent, Pmcr, Pmevtyper, PmuVersion};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A Cortex-A76-like PMU: PMUv3p1, six event counters.
    let version = PmuVersion::V3p1;
    let mut pmu = SoftPmu::new(SoftPmuConfig::new(version, 6)).map_err(|e| format!("{e:?}"))?;
    let inst = CommonEvent::InstRetired.code();
    let typer = Pmevtyper::for_event(inst, version)
        .map_err(|e| format!("{e:?}"))?
        .with_p(true); // P = 1: not counted at EL1
    let write = |pmu: &mut SoftPmu, reg, value| pmu.write(reg, value).map_err(|e| format!("{e:?}"));
    write(&mut pmu, PmuRegister::Pmevtyper(0), typer.bits())?;
    write(&mut pmu, PmuRegister::Pmcntenset, 1)?;
    write(&mut pmu, PmuRegister::Pmintenset, 1)?;
    let pmcr = Pmcr::default().with_e(true).with_p(true);
    write(&mut pmu, PmuRegister::Pmcr, pmcr.bits())?;
    println!(
        "PMEVTYPER0_EL0 = {:#010x}, PMCR_EL0 = {:#010x}",
        typer.bits(),
        pmcr.bits()
    );

    let mut acc = OverflowAccumulator::new(CounterWidth::Bits32, 0);
    let mut overflows = 0;
    for step in 1..=4 {
        pmu.set_context(ExecContext::USER);
        pmu.count_event(inst, 2_500_000_000);
        // Work done at EL1 is filtered out by P = 1.
        pmu.set_context(ExecContext::KERNEL);
        pmu.count_event(inst, 1_000);
        if pmu.irq_asserted() {
            let flags = pmu
                .read(PmuRegister::Pmovsclr)
                .map_err(|e| format!("{e:?}"))?;
            write(&mut pmu, PmuRegister::Pmovsclr, flags)?;
            overflows += 1;
            println!("step {step}: overflow interrupt, PMOVSCLR_EL0 = {flags:#x}, cleared");
        }
        let raw = pmu
            .read(PmuRegister::Pmevcntr(0))
            .map_err(|e| format!("{e:?}"))?;
        println!("step {step}: PMEVCNTR0_EL0 = {raw:#010x}");
    }
    let raw = pmu
        .read(PmuRegister::Pmevcntr(0))
        .map_err(|e| format!("{e:?}"))?;
    acc.update(raw, overflows).map_err(|e| format!("{e:?}"))?;
    println!(
        "{overflows} wraps of a 32-bit counter: {} instructions at EL0 (4 × 2.5e9; EL1 work excluded)",
        acc.total()
    );
    Ok(())
}
