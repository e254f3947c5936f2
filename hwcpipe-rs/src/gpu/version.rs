//! The per-fd handshake: version check of each driver generation, then SET_FLAGS.

use core::fmt;

use super::device::{Fd, IoctlArg, KbaseDevice};
use super::error::GpuError;
use super::ioctl::{
    SetFlags, UkSetFlags, UkVersionCheck, VersionCheck, Wire,
    CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED, SET_FLAGS, UK_FUNC_SET_FLAGS, UK_FUNC_VERSION_CHECK,
    UK_SET_FLAGS, UK_VERSION_CHECK, VERSION_CHECK_CSF, VERSION_CHECK_JM,
};

/// The ioctl generation a kbase driver speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interface {
    /// Before r21: "UK" calls with an 8-byte header (interface 10.x).
    LegacyUk,
    /// r21 and later, Job Manager GPUs (interface 11.x).
    Jm,
    /// Command Stream Frontend GPUs (interface 1.x).
    Csf,
}

/// A kbase interface version as the version check reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DriverVersion {
    /// Which ioctl generation answered.
    pub interface: Interface,
    /// Major version.
    pub major: u16,
    /// Minor version.
    pub minor: u16,
}

impl DriverVersion {
    /// `true` when this version is at least `major.minor`.
    pub fn at_least(self, major: u16, minor: u16) -> bool {
        (self.major, self.minor) >= (major, minor)
    }

    /// Whether this driver generation still has the vinstr hwcnt reader
    /// (`KBASE_IOCTL_HWCNT_READER_SETUP`): every legacy UK driver, Job Manager drivers before
    /// 11.40 and CSF drivers before 1.21, the versions libGPUCounters stops using it at.
    pub fn offers_vinstr(self) -> bool {
        match self.interface {
            Interface::LegacyUk => true,
            Interface::Jm => !self.at_least(11, 40),
            Interface::Csf => !self.at_least(1, 21),
        }
    }

    /// Whether this driver has kinstr_prfcnt (`KBASE_IOCTL_KINSTR_PRFCNT_ENUM_INFO` and `_SETUP`):
    /// added to all GPUs in Job Manager interface 11.32 and CSF interface 1.6 (the version history
    /// of kbase's own uapi headers; r35p0 is JM 11.33 and CSF 1.8 and has it).
    pub fn offers_kinstr(self) -> bool {
        match self.interface {
            Interface::LegacyUk => false,
            Interface::Jm => self.at_least(11, 32),
            Interface::Csf => self.at_least(1, 6),
        }
    }
}

impl fmt::Display for DriverVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.interface {
            Interface::LegacyUk => "UK",
            Interface::Jm => "JM",
            Interface::Csf => "CSF",
        };
        write!(f, "{kind} {}.{}", self.major, self.minor)
    }
}

/// The UK version HWCPipe asks for; older drivers lack the hwcnt reader.
pub const UK_MIN_VERSION: (u16, u16) = (10, 2);

/// Runs the version check of each generation in HWCPipe's order (legacy UK, r21+ JM, CSF) and
/// returns the first one the driver accepts with a non-zero version.
pub fn version_check(dev: &mut dyn KbaseDevice) -> Result<DriverVersion, GpuError> {
    let mut uk = UkVersionCheck {
        header: UK_FUNC_VERSION_CHECK,
        major: UK_MIN_VERSION.0,
        minor: UK_MIN_VERSION.1,
        ..Default::default()
    }
    .to_bytes();
    if dev
        .ioctl(Fd::Device, UK_VERSION_CHECK, IoctlArg::Struct(&mut uk))
        .is_ok()
    {
        let answer = UkVersionCheck::decode(&uk);
        if answer.header == 0 && (answer.major, answer.minor) != (0, 0) {
            let version = DriverVersion {
                interface: Interface::LegacyUk,
                major: answer.major,
                minor: answer.minor,
            };
            if !version.at_least(UK_MIN_VERSION.0, UK_MIN_VERSION.1) {
                return Err(GpuError::DriverTooOld { version });
            }
            return Ok(version);
        }
    }
    for (request, interface) in [
        (VERSION_CHECK_JM, Interface::Jm),
        (VERSION_CHECK_CSF, Interface::Csf),
    ] {
        let mut bytes = VersionCheck::default().to_bytes();
        if dev
            .ioctl(Fd::Device, request, IoctlArg::Struct(&mut bytes))
            .is_ok()
        {
            let answer = VersionCheck::decode(&bytes);
            if (answer.major, answer.minor) != (0, 0) {
                return Ok(DriverVersion {
                    interface,
                    major: answer.major,
                    minor: answer.minor,
                });
            }
        }
    }
    Err(GpuError::NotKbase)
}

/// SET_FLAGS with `BASE_CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED`, in the call convention of `version`.
pub fn set_flags(dev: &mut dyn KbaseDevice, version: DriverVersion) -> Result<(), GpuError> {
    const OP: &str = "KBASE_IOCTL_SET_FLAGS";
    match version.interface {
        Interface::LegacyUk => {
            let mut b = UkSetFlags {
                header: UK_FUNC_SET_FLAGS,
                create_flags: CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED,
                ..Default::default()
            }
            .to_bytes();
            dev.ioctl(Fd::Device, UK_SET_FLAGS, IoctlArg::Struct(&mut b))
                .map_err(|source| GpuError::Ioctl { op: OP, source })?;
            let ret = UkSetFlags::decode(&b).header;
            if ret != 0 {
                return Err(GpuError::UkStatus { op: OP, ret });
            }
        }
        Interface::Jm | Interface::Csf => {
            let mut b = SetFlags {
                create_flags: CONTEXT_SYSTEM_MONITOR_SUBMIT_DISABLED,
            }
            .to_bytes();
            dev.ioctl(Fd::Device, SET_FLAGS, IoctlArg::Struct(&mut b))
                .map_err(|source| GpuError::Ioctl { op: OP, source })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::io::Errno;

    #[test]
    fn versions_compare_and_print() {
        let v = DriverVersion {
            interface: Interface::Jm,
            major: 11,
            minor: 40,
        };
        assert!(v.at_least(11, 37));
        assert!(!v.at_least(11, 41));
        assert_eq!(v.to_string(), "JM 11.40");
        assert!(!v.offers_vinstr() && v.offers_kinstr());
        let r35 = |interface, major, minor| DriverVersion {
            interface,
            major,
            minor,
        };
        // Arm's r35p0 driver offers both readers in both generations.
        for r in [r35(Interface::Jm, 11, 33), r35(Interface::Csf, 1, 8)] {
            assert!(r.offers_vinstr() && r.offers_kinstr(), "{r}");
        }
        assert!(!r35(Interface::Jm, 11, 31).offers_kinstr());
        assert!(!r35(Interface::Csf, 1, 5).offers_kinstr());
        assert!(!r35(Interface::Csf, 1, 21).offers_vinstr());
        assert!(r35(Interface::LegacyUk, 10, 6).offers_vinstr());
        assert!(!r35(Interface::LegacyUk, 10, 6).offers_kinstr());
    }

    use crate::gpu::device::fake::FakeDevice;
    use crate::gpu::ioctl::{UkSetFlags, UK_SET_FLAGS, UK_VERSION_CHECK};

    #[test]
    fn uk_status_and_zero_versions_are_typed() {
        let mut dev = FakeDevice::new(|request, arg| {
            if request == UK_SET_FLAGS {
                UkSetFlags {
                    header: 3,
                    ..UkSetFlags::decode(arg)
                }
                .encode(arg);
            }
            Ok(0)
        });
        let uk = DriverVersion {
            interface: Interface::LegacyUk,
            major: 10,
            minor: 6,
        };
        assert!(matches!(
            set_flags(&mut dev, uk),
            Err(GpuError::UkStatus { ret: 3, .. })
        ));
        // A driver that accepts every version check but reports 0.0 is not kbase.
        let mut zero = FakeDevice::new(|request, arg| {
            if request == UK_VERSION_CHECK {
                arg[..4].copy_from_slice(&0u32.to_ne_bytes());
                arg[8..12].fill(0);
            }
            Ok(0)
        });
        assert!(matches!(version_check(&mut zero), Err(GpuError::NotKbase)));
        let mut failing = FakeDevice::new(|_, _| Err(std::io::Error::from(Errno::IO)));
        let jm = DriverVersion {
            interface: Interface::Jm,
            major: 11,
            minor: 30,
        };
        assert!(matches!(
            set_flags(&mut failing, jm),
            Err(GpuError::Ioctl { .. })
        ));
    }
}
