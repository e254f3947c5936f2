//! Where the simulated PE is executing, and the PMEVTYPER/PMCCFILTR filtering rules applied to it.

use crate::regs::pmccfiltr::Pmccfiltr;
use crate::regs::pmevtyper::Pmevtyper;

/// An exception level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExceptionLevel {
    /// EL0, applications.
    El0,
    /// EL1, the OS kernel.
    El1,
    /// EL2, the hypervisor.
    El2,
    /// EL3, the secure monitor (always Secure).
    El3,
}

/// A security state. Realm state (FEAT_RME) is not modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SecurityState {
    /// Secure state.
    Secure,
    /// Non-secure state.
    NonSecure,
}

/// The execution context events happen in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExecContext {
    /// Current exception level.
    pub el: ExceptionLevel,
    /// Current security state (ignored at EL3, which is always Secure).
    pub security: SecurityState,
    /// Event counting is prohibited here (for example Secure state without MDCR_EL3.SPME). Event
    /// counters stop; the cycle counter stops only when PMCR_EL0.DP is 1.
    pub counting_prohibited: bool,
}

impl ExecContext {
    /// Non-secure EL1 with counting allowed: a rich OS kernel.
    pub const KERNEL: ExecContext = ExecContext {
        el: ExceptionLevel::El1,
        security: SecurityState::NonSecure,
        counting_prohibited: false,
    };

    /// Non-secure EL0 with counting allowed: an application.
    pub const USER: ExecContext = ExecContext {
        el: ExceptionLevel::El0,
        security: SecurityState::NonSecure,
        counting_prohibited: false,
    };
}

/// The filter bits PMEVTYPER and PMCCFILTR share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Filter {
    p: bool,
    u: bool,
    nsk: bool,
    nsu: bool,
    nsh: bool,
    m: bool,
    sh: bool,
}

impl From<Pmevtyper> for Filter {
    fn from(t: Pmevtyper) -> Self {
        Filter {
            p: t.p(),
            u: t.u(),
            nsk: t.nsk(),
            nsu: t.nsu(),
            nsh: t.nsh(),
            m: t.m(),
            sh: t.sh(),
        }
    }
}

impl From<Pmccfiltr> for Filter {
    fn from(t: Pmccfiltr) -> Self {
        Filter {
            p: t.p(),
            u: t.u(),
            nsk: t.nsk(),
            nsu: t.nsu(),
            nsh: t.nsh(),
            m: t.m(),
            sh: t.sh(),
        }
    }
}

impl Filter {
    /// Whether events in `ctx` are counted.
    ///
    /// Secure EL0/EL1: counted unless U/P. Non-secure EL0/EL1: counted when NSU == U / NSK == P.
    /// Non-secure EL2: counted when NSH. Secure EL2: counted when SH != NSH. EL3: counted when M == P.
    pub(crate) fn permits(self, ctx: ExecContext) -> bool {
        use ExceptionLevel::*;
        use SecurityState::*;
        match (ctx.el, ctx.security) {
            (El0, Secure) => !self.u,
            (El0, NonSecure) => self.u == self.nsu,
            (El1, Secure) => !self.p,
            (El1, NonSecure) => self.p == self.nsk,
            (El2, NonSecure) => self.nsh,
            (El2, Secure) => self.sh != self.nsh,
            (El3, _) => self.m == self.p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(el: ExceptionLevel, security: SecurityState) -> ExecContext {
        ExecContext {
            el,
            security,
            counting_prohibited: false,
        }
    }

    #[test]
    fn linux_exclude_kernel_filter() {
        // exclude_kernel: P = 1, so Non-secure EL1 is filtered out (NSK = 0 differs from P) and EL0
        // still counts; EL2 needs NSH.
        let f = Filter::from(Pmevtyper::default().with_p(true));
        assert!(!f.permits(ExecContext::KERNEL));
        assert!(f.permits(ExecContext::USER));
        assert!(!f.permits(ctx(ExceptionLevel::El2, SecurityState::NonSecure)));
        let f = Filter::from(Pmevtyper::default().with_nsh(true));
        assert!(f.permits(ctx(ExceptionLevel::El2, SecurityState::NonSecure)));
    }

    #[test]
    fn ns_bits_flip_the_non_secure_sense() {
        let f = Filter::from(Pmevtyper::default().with_p(true).with_nsk(true));
        assert!(f.permits(ExecContext::KERNEL));
        assert!(!f.permits(ctx(ExceptionLevel::El1, SecurityState::Secure)));
        let f = Filter::from(Pmccfiltr::default().with_nsu(true));
        assert!(!f.permits(ExecContext::USER));
        assert!(f.permits(ctx(ExceptionLevel::El0, SecurityState::Secure)));
    }

    #[test]
    fn el3_and_secure_el2() {
        let plain = Filter::from(Pmevtyper::default());
        assert!(plain.permits(ctx(ExceptionLevel::El3, SecurityState::Secure)));
        let m = Filter::from(Pmevtyper::default().with_m(true));
        assert!(!m.permits(ctx(ExceptionLevel::El3, SecurityState::Secure)));
        let sh = Filter::from(Pmevtyper::default().with_sh(true));
        assert!(sh.permits(ctx(ExceptionLevel::El2, SecurityState::Secure)));
        assert!(!plain.permits(ctx(ExceptionLevel::El2, SecurityState::Secure)));
    }
}
