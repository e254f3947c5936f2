//! Where the simulated PE is executing, and the PMEVTYPER/PMCCFILTR filtering rules applied to it.

use crate::diagnosis::FilterExclusion;
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
    pub(crate) fn permits(self, ctx: ExecContext) -> bool {
        self.exclusion(ctx).is_none()
    }

    /// Which filter rule keeps events in `ctx` from being counted, if one does.
    ///
    /// Secure EL0/EL1: counted unless U/P. Non-secure EL0/EL1: counted when NSU == U / NSK == P.
    /// Non-secure EL2: counted when NSH. Secure EL2: counted when SH != NSH. EL3: counted when M == P.
    /// (Without EL3, NSK, NSU and M are RES0; without EL2, NSH; without FEAT_SEL2, SH. Reading them
    /// as zero gives the rules for those PEs.)
    pub(crate) fn exclusion(self, ctx: ExecContext) -> Option<FilterExclusion> {
        use ExceptionLevel::*;
        use SecurityState::*;
        let Filter {
            p,
            u,
            nsk,
            nsu,
            nsh,
            m,
            sh,
        } = self;
        match (ctx.el, ctx.security) {
            (El0, Secure) => u.then_some(FilterExclusion::SecureEl0),
            (El0, NonSecure) => (u != nsu).then_some(FilterExclusion::NonSecureEl0 { u, nsu }),
            (El1, Secure) => p.then_some(FilterExclusion::SecureEl1),
            (El1, NonSecure) => (p != nsk).then_some(FilterExclusion::NonSecureEl1 { p, nsk }),
            (El2, NonSecure) => (!nsh).then_some(FilterExclusion::NonSecureEl2),
            (El2, Secure) => (sh == nsh).then_some(FilterExclusion::SecureEl2 { nsh, sh }),
            (El3, _) => (m != p).then_some(FilterExclusion::El3 { p, m }),
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
