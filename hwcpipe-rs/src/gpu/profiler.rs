//! [`GpuProfiler`]: finds a Mali GPU, runs the handshake, picks a reader, and turns counter dumps
//! into [`GpuCounter`] values.

use std::path::PathBuf;
use std::time::Duration;

use super::counter::GpuCounter;
use super::device::KbaseDevice;
use super::dump::{BlockSums, VinstrLayout};
use super::error::{GpuError, Unavailable};
use super::formula::{resolve, Resolved};
use super::kinstr::KinstrReader;
use super::mali_device::MaliDevice;
use super::product::{identify, Product};
use super::props::{read_props, GpuProps};
use super::version::{set_flags, version_check, DriverVersion, Interface};
use super::vinstr::VinstrReader;

/// Default wait for one dump.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// Device files scanned by [`GpuProfiler::open`]: `/dev/mali0` to `/dev/mali31`.
pub const MAX_DEVICES: u32 = 32;

/// The kernel interface counters are read through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// The vinstr hwcnt reader (64 × u32 blocks).
    Vinstr,
    /// kinstr_prfcnt (u64 values, 64 or 128 per block).
    KinstrPrfcnt,
}

/// What the handshake found out about the GPU.
#[derive(Clone, Copy, Debug)]
pub struct GpuInfo {
    /// The identified product.
    pub product: Product,
    /// Driver interface version.
    pub version: DriverVersion,
    /// GPU properties.
    pub props: GpuProps,
    /// The chosen reader.
    pub backend: Backend,
}

/// One sample: the value of every enabled, available counter over the interval since the
/// previous sample (or `run()`).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSample {
    values: [f64; 37],
    present: u64,
    timestamp_ns: u64,
}

impl Default for GpuSample {
    fn default() -> Self {
        GpuSample {
            values: [0.0; 37],
            present: 0,
            timestamp_ns: 0,
        }
    }
}

impl GpuSample {
    /// The value of `counter`, `None` when it is not enabled or not available.
    pub fn get(&self, counter: GpuCounter) -> Option<f64> {
        (self.present & (1 << counter.index()) != 0).then(|| self.values[counter.index()])
    }

    /// `(counter, value)` pairs in [`GpuCounter::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (GpuCounter, f64)> + '_ {
        GpuCounter::ALL
            .into_iter()
            .filter_map(|c| self.get(c).map(|v| (c, v)))
    }

    /// Driver timestamp of the end of the interval, ns.
    pub fn timestamp_ns(&self) -> u64 {
        self.timestamp_ns
    }
}

#[derive(Debug)]
enum Reader {
    Vinstr(VinstrReader),
    Kinstr(KinstrReader),
}

/// Mali GPU counters of one device, HWCPipe style: `run()`, then `sample()` per interval, `stop()`.
///
/// Call order: [`open`](Self::open) or [`with_device`](Self::with_device) (handshake, product,
/// reader); [`supported_counters`](Self::supported_counters) / [`set_enabled`](Self::set_enabled);
/// [`run`](Self::run); [`sample`](Self::sample) repeatedly; [`stop`](Self::stop). Nothing here
/// panics or blocks longer than the timeout.
pub struct GpuProfiler {
    device: Box<dyn KbaseDevice>,
    info: GpuInfo,
    layout: VinstrLayout,
    formulas: Vec<Option<Resolved>>,
    supported: Vec<GpuCounter>,
    unavailable: Vec<(GpuCounter, Unavailable)>,
    enabled: Vec<GpuCounter>,
    reader: Option<Reader>,
    running: bool,
    sums: BlockSums,
    sample: GpuSample,
    timeout: Duration,
}

impl std::fmt::Debug for GpuProfiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuProfiler")
            .field("device", &self.device.name())
            .field("info", &self.info)
            .field("running", &self.running)
            .finish()
    }
}

fn choose_backend(product: &Product, version: DriverVersion) -> Result<Backend, GpuError> {
    let vinstr = product.vinstr_capable();
    let backend = match version.interface {
        Interface::LegacyUk if vinstr => Some(Backend::Vinstr),
        Interface::LegacyUk => None,
        Interface::Jm if vinstr && !version.at_least(11, 40) => Some(Backend::Vinstr),
        Interface::Jm if version.at_least(11, 37) => Some(Backend::KinstrPrfcnt),
        Interface::Csf if vinstr && !version.at_least(1, 21) => Some(Backend::Vinstr),
        Interface::Csf if version.at_least(1, 17) => Some(Backend::KinstrPrfcnt),
        _ => None,
    };
    backend.ok_or(GpuError::DriverTooOld { version })
}

impl GpuProfiler {
    /// Opens the first working Mali GPU among `/dev/mali0` .. `/dev/mali31`.
    ///
    /// [`GpuError::NoDevice`] when none exists; otherwise the error of the first device that
    /// exists but failed.
    pub fn open() -> Result<GpuProfiler, GpuError> {
        let mut first_error = None;
        for n in 0..MAX_DEVICES {
            let path = PathBuf::from(format!("/dev/mali{n}"));
            if !path.exists() {
                continue;
            }
            match MaliDevice::open(&path).and_then(GpuProfiler::with_device) {
                Ok(p) => return Ok(p),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or(GpuError::NoDevice))
    }

    /// Runs the handshake over any [`KbaseDevice`] (a [`MaliDevice`] or a
    /// `SimulatedKbase` (feature `sim`)).
    pub fn with_device<D: KbaseDevice + 'static>(device: D) -> Result<GpuProfiler, GpuError> {
        let mut device: Box<dyn KbaseDevice> = Box::new(device);
        let dev = device.as_mut();
        let version = version_check(dev)?;
        set_flags(dev, version)?;
        let props = read_props(dev, version)?;
        let product = identify(props.gpu_id)?;
        let layout_table = product
            .layout
            .ok_or(GpuError::UnsupportedProduct(props.gpu_id))?;
        let backend = choose_backend(&product, version)?;
        let layout = VinstrLayout::new(props.shader_core_mask, props.l2_slices)?;
        let mut formulas = Vec::with_capacity(GpuCounter::ALL.len());
        let mut supported = Vec::new();
        let mut unavailable = Vec::new();
        for counter in GpuCounter::ALL {
            match resolve(
                product.family,
                layout_table,
                props.bus_width_bytes(),
                counter,
            ) {
                Ok(r) => {
                    supported.push(counter);
                    formulas.push(Some(r));
                }
                Err(reason) => {
                    unavailable.push((counter, reason));
                    formulas.push(None);
                }
            }
        }
        let mut profiler = GpuProfiler {
            device,
            info: GpuInfo {
                product,
                version,
                props,
                backend,
            },
            layout,
            formulas,
            enabled: supported.clone(),
            supported,
            unavailable,
            reader: None,
            running: false,
            sums: BlockSums::default(),
            sample: GpuSample::default(),
            timeout: DEFAULT_TIMEOUT,
        };
        profiler.reader = Some(profiler.open_reader()?);
        Ok(profiler)
    }

    fn open_reader(&mut self) -> Result<Reader, GpuError> {
        let dev = self.device.as_mut();
        Ok(match self.info.backend {
            Backend::Vinstr => {
                Reader::Vinstr(VinstrReader::setup(dev, self.info.version, self.layout)?)
            }
            Backend::KinstrPrfcnt => Reader::Kinstr(KinstrReader::setup(dev)?.0),
        })
    }

    /// Product, driver version, properties and backend.
    pub fn info(&self) -> &GpuInfo {
        &self.info
    }

    /// Counters this GPU can measure, in [`GpuCounter::ALL`] order.
    pub fn supported_counters(&self) -> &[GpuCounter] {
        &self.supported
    }

    /// Counters this GPU cannot measure, each with the reason.
    pub fn unavailable_counters(&self) -> &[(GpuCounter, Unavailable)] {
        &self.unavailable
    }

    /// Counters reported by [`sample`](Self::sample) (initially all supported ones).
    pub fn enabled_counters(&self) -> &[GpuCounter] {
        &self.enabled
    }

    /// Chooses the counters to report. Fails, changing nothing, if one is unavailable.
    pub fn set_enabled(&mut self, counters: &[GpuCounter]) -> Result<(), GpuError> {
        if let Some(&(counter, reason)) =
            self.unavailable.iter().find(|(c, _)| counters.contains(c))
        {
            return Err(GpuError::CounterUnavailable { counter, reason });
        }
        let mut enabled: Vec<GpuCounter> = counters.to_vec();
        enabled.sort();
        enabled.dedup();
        self.enabled = enabled;
        Ok(())
    }

    /// Maximum wait for a dump in [`sample`](Self::sample).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Starts counting: the first sample covers the time since this call.
    pub fn run(&mut self) -> Result<(), GpuError> {
        if self.reader.is_none() {
            self.reader = Some(self.open_reader()?);
        }
        let dev = self.device.as_mut();
        match &self.reader {
            Some(Reader::Vinstr(r)) => r.start(dev)?,
            Some(Reader::Kinstr(r)) => r.start(dev)?,
            None => return Err(GpuError::NotRunning),
        }
        self.running = true;
        Ok(())
    }

    /// Reads the counters accumulated since the previous sample (or `run()`).
    pub fn sample(&mut self) -> Result<&GpuSample, GpuError> {
        if !self.running {
            return Err(GpuError::NotRunning);
        }
        self.sums.clear();
        let dev = self.device.as_mut();
        let timestamp = match &mut self.reader {
            Some(Reader::Vinstr(r)) => r.sample(dev, self.timeout, &mut self.sums)?,
            Some(Reader::Kinstr(r)) => r.sample(dev, self.timeout, &mut self.sums)?.timestamp_stop,
            None => return Err(GpuError::NotRunning),
        };
        self.sample.present = 0;
        self.sample.timestamp_ns = timestamp;
        for &counter in &self.enabled {
            if let Some(Some(formula)) = self.formulas.get(counter.index()) {
                self.sample.values[counter.index()] = formula.eval(&self.sums);
                self.sample.present |= 1 << counter.index();
            }
        }
        Ok(&self.sample)
    }

    /// Stops counting and closes the reader; `run()` opens a new one.
    pub fn stop(&mut self) -> Result<(), GpuError> {
        self.running = false;
        let dev = self.device.as_mut();
        match self.reader.take() {
            Some(Reader::Vinstr(r)) => r.stop(dev),
            Some(Reader::Kinstr(r)) => r.stop(dev),
            None => Ok(()),
        }
    }
}

impl Drop for GpuProfiler {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn open_without_mali_is_no_device() {
        if !std::path::Path::new("/dev/mali0").exists() {
            assert!(matches!(GpuProfiler::open(), Err(GpuError::NoDevice)));
        }
    }

    #[test]
    fn backend_choice_follows_driver_versions() {
        let g78 = identify(0x9002_0000).unwrap();
        let g715 = identify(0xB002_0000).unwrap();
        let v = |interface, major, minor| DriverVersion {
            interface,
            major,
            minor,
        };
        assert_eq!(
            choose_backend(&g78, v(Interface::Jm, 11, 20)).unwrap(),
            Backend::Vinstr
        );
        assert_eq!(
            choose_backend(&g78, v(Interface::Jm, 11, 41)).unwrap(),
            Backend::KinstrPrfcnt
        );
        assert_eq!(
            choose_backend(&g715, v(Interface::Csf, 1, 20)).unwrap(),
            Backend::KinstrPrfcnt
        );
        assert!(matches!(
            choose_backend(&g715, v(Interface::Csf, 1, 10)),
            Err(GpuError::DriverTooOld { version }) if version.minor == 10
        ));
        assert!(choose_backend(&g715, v(Interface::LegacyUk, 10, 6)).is_err());
    }
}
