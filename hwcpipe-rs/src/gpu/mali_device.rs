//! The real kbase device: every [`KbaseDevice`] call becomes the system call it names.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::io::Errno;

use super::device::{Fd, IoctlArg, KbaseDevice, PollOutcome};
use super::error::GpuError;
use super::ioctl::UkHwcntReaderSetup;
use super::ioctl::{Wire, HWCNT_READER_SETUP, KINSTR_PRFCNT_SETUP, UK_HWCNT_READER_SETUP};
use crate::sys::kbase;
use crate::sys::mapping::Mapping;
use crate::sys::poll::{poll_in, Poll};

struct Reader {
    fd: OwnedFd,
    map: Option<Mapping>,
}

/// An opened `/dev/mali<N>` character device. Owns the device fd, every reader fd it created and
/// their mappings; all are closed when it is dropped.
pub struct MaliDevice {
    path: PathBuf,
    fd: OwnedFd,
    readers: HashMap<i32, Reader>,
}

impl std::fmt::Debug for MaliDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MaliDevice")
            .field("path", &self.path)
            .field("readers", &self.readers.len())
            .finish()
    }
}

impl MaliDevice {
    /// Opens `path`, which must be a character device.
    pub fn open(path: impl AsRef<Path>) -> Result<MaliDevice, GpuError> {
        let path = path.as_ref().to_path_buf();
        let meta = std::fs::metadata(&path).map_err(|source| open_error(&path, source))?;
        if !meta.file_type().is_char_device() {
            return Err(GpuError::NotCharDevice(path));
        }
        let fd = kbase::open_device(&path).map_err(|source| open_error(&path, source))?;
        Ok(MaliDevice {
            path,
            fd,
            readers: HashMap::new(),
        })
    }

    /// The device path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn reader(&self, reader: i32) -> io::Result<&Reader> {
        self.readers
            .get(&reader)
            .ok_or_else(|| io::Error::from(Errno::BADF))
    }
}

pub(crate) fn open_error(path: &Path, source: io::Error) -> GpuError {
    match source.kind() {
        io::ErrorKind::PermissionDenied => GpuError::PermissionDenied {
            path: path.to_path_buf(),
            source,
        },
        io::ErrorKind::NotFound => GpuError::NoDevice,
        _ => GpuError::Open {
            path: path.to_path_buf(),
            source,
        },
    }
}

impl KbaseDevice for MaliDevice {
    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn ioctl(&mut self, fd: Fd, request: u32, arg: IoctlArg<'_>) -> io::Result<i32> {
        let file = match fd {
            Fd::Device => &self.fd,
            Fd::Reader(r) => &self.reader(r)?.fd,
        };
        let mut uk_setup = false;
        let ret = match arg {
            IoctlArg::Value(v) => kbase::ioctl_value(file, request, v)?,
            IoctlArg::Struct(bytes) => {
                let ret = kbase::ioctl_struct(file, request, bytes)?;
                if fd == Fd::Device && request == UK_HWCNT_READER_SETUP {
                    let setup = UkHwcntReaderSetup::decode(bytes);
                    if setup.header == 0 && setup.fd >= 0 {
                        uk_setup = true;
                        let owned = kbase::adopt_fd(setup.fd)?;
                        self.readers.insert(
                            setup.fd,
                            Reader {
                                fd: owned,
                                map: None,
                            },
                        );
                    }
                }
                ret
            }
            IoctlArg::StructWithBuffer {
                arg,
                ptr_offset,
                buffer,
            } => kbase::ioctl_struct_with_buffer(file, request, arg, ptr_offset, buffer)?,
        };
        if !uk_setup
            && fd == Fd::Device
            && (request == HWCNT_READER_SETUP || request == KINSTR_PRFCNT_SETUP)
        {
            let owned = kbase::adopt_fd(ret)?;
            self.readers.insert(
                owned.as_raw_fd(),
                Reader {
                    fd: owned,
                    map: None,
                },
            );
        }
        Ok(ret)
    }

    fn mmap(&mut self, reader: i32, len: usize) -> io::Result<()> {
        let entry = self.readers.get_mut(&reader).ok_or(Errno::BADF)?;
        entry.map = Some(kbase::map_reader(&entry.fd, len)?);
        Ok(())
    }

    fn read_mapped(&self, reader: i32, offset: usize, out: &mut [u8]) -> io::Result<()> {
        match &self.reader(reader)?.map {
            Some(map) => map.read(offset, out),
            None => Err(Errno::INVAL.into()),
        }
    }

    fn poll(&mut self, reader: i32, timeout: Duration) -> io::Result<PollOutcome> {
        Ok(match poll_in(&self.reader(reader)?.fd, timeout)? {
            Poll::Readable => PollOutcome::Ready,
            Poll::TimedOut => PollOutcome::TimedOut,
            Poll::HungUp => PollOutcome::HungUp,
        })
    }

    fn close(&mut self, reader: i32) -> io::Result<()> {
        // Dropping the entry unmaps first (field order), then closes the fd.
        match self.readers.remove(&reader) {
            Some(Reader { fd, map }) => {
                drop(map);
                drop(fd);
                Ok(())
            }
            None => Err(Errno::BADF.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regular_files_and_missing_paths_are_refused() {
        assert!(matches!(
            MaliDevice::open("/dev/mali-nope"),
            Err(GpuError::NoDevice)
        ));
        let regular = std::env::temp_dir().join(format!("hwcpipe-regular-{}", std::process::id()));
        std::fs::write(&regular, b"not a device").unwrap();
        let opened = MaliDevice::open(&regular);
        std::fs::remove_file(&regular).unwrap();
        assert!(matches!(opened, Err(GpuError::NotCharDevice(_))));
    }

    #[test]
    fn a_char_device_that_is_not_kbase_refuses_ioctls() {
        let mut dev = MaliDevice::open("/dev/null").unwrap();
        let mut b = [0u8; 4];
        assert!(dev
            .ioctl(
                Fd::Device,
                super::super::ioctl::VERSION_CHECK_JM,
                IoctlArg::Struct(&mut b)
            )
            .is_err());
        assert_eq!(
            dev.mmap(7, 16).unwrap_err().raw_os_error(),
            Some(Errno::BADF.raw_os_error())
        );
        assert!(dev.close(7).is_err());
        assert!(dev.poll(7, Duration::ZERO).is_err());
        assert!(dev.read_mapped(7, 0, &mut b).is_err());
        assert_eq!(dev.name(), "/dev/null");
    }

    #[test]
    fn open_errors_are_classified() {
        let p = Path::new("/dev/mali0");
        let denied = open_error(p, io::Error::from(Errno::ACCESS));
        assert!(matches!(denied, GpuError::PermissionDenied { .. }));
        assert!(denied.to_string().contains("/dev/mali0"));
        assert!(matches!(
            open_error(p, io::Error::from(Errno::NOENT)),
            GpuError::NoDevice
        ));
        assert!(matches!(
            open_error(p, io::Error::from(Errno::BUSY)),
            GpuError::Open { .. }
        ));
    }
}
