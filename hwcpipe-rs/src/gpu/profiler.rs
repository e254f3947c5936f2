//! [`GpuProfiler`]: finds a Mali GPU, runs the handshake, picks a reader, and turns counter dumps
//! into [`GpuCounter`] values.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::counter::GpuCounter;
use super::device::KbaseDevice;
use super::dump::{BlockLayout, BlockSums};
use super::error::{GpuError, Unavailable};
use super::formula::{resolve, Resolved};
use super::kinstr::{self, EnumInfo, KinstrReader};
use super::mali_counter::{MaliConstants, MaliCounters, MaliValues};
use super::mali_device::MaliDevice;
use super::product::{codename, identify, Product};
use super::props::{read_props, GpuProps};
use super::version::{set_flags, version_check, DriverVersion};
use super::vinstr::VinstrReader;

/// Default wait for one dump.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// The shortest period the driver dumps at by itself (vinstr's `DUMP_INTERVAL_MIN_NS`).
pub const MIN_PERIOD: Duration = Duration::from_micros(100);
/// Device files scanned by [`GpuProfiler::open`]: `/dev/mali0` to `/dev/mali31`.
pub const MAX_DEVICES: u32 = 32;

/// The kernel interface counters are read through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
    /// Where the counter blocks of a dump are, as the driver lays them out.
    pub layout: BlockLayout,
    /// The readers this driver offers (vinstr, kinstr_prfcnt, or both).
    pub offered: &'static [Backend],
}

/// One sample: the value of every enabled, available counter over the interval since the
/// previous sample (or `run()`).
#[derive(Clone, Debug, PartialEq)]
pub struct GpuSample {
    values: [f64; 37],
    present: u64,
    timestamp_ns: u64,
    counted: bool,
    stretched: bool,
}

impl Default for GpuSample {
    fn default() -> Self {
        GpuSample {
            values: [0.0; 37],
            present: 0,
            timestamp_ns: 0,
            counted: false,
            stretched: false,
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

    /// Driver timestamp of the end of the interval, ns (CLOCK_MONOTONIC_RAW on a real driver).
    pub fn timestamp_ns(&self) -> u64 {
        self.timestamp_ns
    }

    /// Whether any counter of the dump (all of it, whichever counters are enabled) is not zero. A
    /// CSF driver's first dumps after setup can come before its firmware enabled counting (it does
    /// so asynchronously): every counter of them is zero, as it is for an idle GPU.
    pub fn counted_anything(&self) -> bool {
        self.counted
    }

    /// Whether kinstr_prfcnt flagged the sample as stretched (`SAMPLE_FLAG_OVERFLOW`): it covers
    /// more than one period because the driver could not write a sample in time.
    pub fn stretched(&self) -> bool {
        self.stretched
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
    enumeration: Option<EnumInfo>,
    formulas: Vec<Option<Resolved>>,
    supported: Vec<GpuCounter>,
    unavailable: Vec<(GpuCounter, Unavailable)>,
    enabled: Vec<GpuCounter>,
    reader: Option<Reader>,
    running: bool,
    /// The driver's own dump period while [`GpuProfiler::run_periodic`] counts.
    period: Option<Duration>,
    sums: BlockSums,
    sample: GpuSample,
    timeout: Duration,
    /// Every counter of Arm's database for this GPU.
    mali: MaliCounters,
    /// When the interval of the next sample began (host clock): `run()` or the previous sample.
    interval_start: Option<Instant>,
    /// Seconds the last sample covered.
    last_span_s: f64,
    /// The driver timestamp of the last sample, while the driver dumps by itself.
    last_timestamp: Option<u64>,
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

/// The readers a driver offers for a dump of this layout, in the order they are preferred: vinstr
/// first, as HWCPipe and libGPUCounters choose it wherever it exists (it reads 64-value blocks only),
/// then kinstr_prfcnt where the driver enumerated it.
fn offered_readers(
    version: DriverVersion,
    enumerated: bool,
    layout: &BlockLayout,
) -> &'static [Backend] {
    let vinstr = version.offers_vinstr() && layout.values_per_block == 64;
    match (vinstr, enumerated) {
        (true, true) => &[Backend::Vinstr, Backend::KinstrPrfcnt],
        (true, false) => &[Backend::Vinstr],
        (false, true) => &[Backend::KinstrPrfcnt],
        (false, false) => &[],
    }
}

fn choose_backend(
    version: DriverVersion,
    offered: &[Backend],
    wanted: Option<Backend>,
) -> Result<Backend, GpuError> {
    match wanted {
        Some(backend) if offered.contains(&backend) => Ok(backend),
        Some(backend) => Err(GpuError::ReaderNotOffered { backend, version }),
        None => offered
            .first()
            .copied()
            .ok_or(GpuError::DriverTooOld { version }),
    }
}

/// The driver's own account of its dump: kinstr_prfcnt's enumeration where the driver has it (a
/// driver that should have it but refuses the call is read through vinstr with the layout of the
/// GPU properties), else the layout of the GPU properties with the product's block size.
fn driver_layout(
    dev: &mut dyn KbaseDevice,
    version: DriverVersion,
    props: &GpuProps,
    product_values_per_block: usize,
) -> Result<(BlockLayout, Option<EnumInfo>), GpuError> {
    if version.offers_kinstr() {
        match kinstr::enumerate(dev) {
            Ok(info) => {
                let layout = BlockLayout::from_enumeration(
                    info.slots(),
                    usize::from(info.values_per_block()),
                    props.shader_core_mask,
                    props.l2_slices,
                )?;
                return Ok((layout, Some(info)));
            }
            Err(GpuError::Ioctl { .. }) => {}
            Err(other) => return Err(other),
        }
    }
    let layout = BlockLayout {
        values_per_block: product_values_per_block,
        ..BlockLayout::from_props(props.shader_core_mask, props.l2_slices)?
    };
    Ok((layout, None))
}

impl GpuProfiler {
    /// Opens the first working Mali GPU among `/dev/mali0` .. `/dev/mali31`.
    ///
    /// [`GpuError::NoDevice`] when none exists; otherwise the error of the first device that
    /// exists but failed.
    ///
    /// An error of a device that exists is [`GpuError::OnDevice`]: it names the device and, once the
    /// version check answered, the driver's interface version.
    pub fn open() -> Result<GpuProfiler, GpuError> {
        GpuProfiler::open_using(None)
    }

    /// Like [`open`](Self::open), reading through `backend` (`None`: the driver's preferred reader).
    pub fn open_using(backend: Option<Backend>) -> Result<GpuProfiler, GpuError> {
        let mut first_error = None;
        for n in 0..MAX_DEVICES {
            let path = PathBuf::from(format!("/dev/mali{n}"));
            if !path.exists() {
                continue;
            }
            match GpuProfiler::open_path(&path, backend) {
                Ok(p) => return Ok(p),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        Err(first_error.unwrap_or(GpuError::NoDevice))
    }

    /// Opens the Mali device at `path`, reading through `backend` (`None`: the driver's preferred
    /// reader). Errors are [`GpuError::OnDevice`], naming the device and the driver version.
    pub fn open_path(path: &Path, backend: Option<Backend>) -> Result<GpuProfiler, GpuError> {
        let on_device = |version, source| GpuError::OnDevice {
            device: path.display().to_string(),
            version,
            source: Box::new(source),
        };
        let device = MaliDevice::open(path).map_err(|e| on_device(None, e))?;
        GpuProfiler::handshake(Box::new(device), backend)
            .map_err(|(version, e)| on_device(version, e))
    }

    /// Runs the handshake over any [`KbaseDevice`] (a [`MaliDevice`] or a
    /// `SimulatedKbase` (feature `sim`)), reading through the driver's preferred reader.
    pub fn with_device<D: KbaseDevice + 'static>(device: D) -> Result<GpuProfiler, GpuError> {
        GpuProfiler::with_device_using(device, None)
    }

    /// Like [`with_device`](Self::with_device), reading through `backend` (`None`: the driver's
    /// preferred reader, vinstr where it has it). [`GpuError::ReaderNotOffered`] when the driver
    /// lacks that reader.
    pub fn with_device_using<D: KbaseDevice + 'static>(
        device: D,
        backend: Option<Backend>,
    ) -> Result<GpuProfiler, GpuError> {
        GpuProfiler::handshake(Box::new(device), backend).map_err(|(_, e)| e)
    }

    /// The whole handshake; an error comes with the driver version when the version check answered.
    fn handshake(
        mut device: Box<dyn KbaseDevice>,
        wanted: Option<Backend>,
    ) -> Result<GpuProfiler, (Option<DriverVersion>, GpuError)> {
        let version = version_check(device.as_mut()).map_err(|e| (None, e))?;
        GpuProfiler::identify_and_open(device, version, wanted).map_err(|e| (Some(version), e))
    }

    fn identify_and_open(
        mut device: Box<dyn KbaseDevice>,
        version: DriverVersion,
        wanted: Option<Backend>,
    ) -> Result<GpuProfiler, GpuError> {
        let dev = device.as_mut();
        set_flags(dev, version)?;
        let props = read_props(dev, version)?;
        let product = identify(props.gpu_id)?;
        let layout_table = product.layout.ok_or(GpuError::UnsupportedProduct {
            gpu_id: props.gpu_id,
            codename: codename(props.gpu_id),
        })?;
        let (layout, enumeration) =
            driver_layout(dev, version, &props, layout_table.values_per_block as usize)?;
        let offered = offered_readers(version, enumeration.is_some(), &layout);
        let backend = choose_backend(version, offered, wanted)?;
        let mut formulas = Vec::with_capacity(GpuCounter::ALL.len());
        let mut supported = Vec::new();
        let mut unavailable = Vec::new();
        for counter in GpuCounter::ALL {
            match resolve(
                product.family,
                layout_table,
                props.bus_width_bytes(),
                layout.values_per_block,
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
                layout,
                offered,
            },
            enumeration,
            formulas,
            enabled: supported.clone(),
            supported,
            unavailable,
            reader: None,
            running: false,
            period: None,
            sums: BlockSums::default(),
            sample: GpuSample::default(),
            timeout: DEFAULT_TIMEOUT,
            mali: MaliCounters::for_layout(layout_table, layout.values_per_block),
            interval_start: None,
            last_span_s: 0.0,
            last_timestamp: None,
        };
        profiler.reader = Some(profiler.open_reader()?);
        Ok(profiler)
    }

    fn open_reader(&mut self) -> Result<Reader, GpuError> {
        let dev = self.device.as_mut();
        let layout = self.info.layout;
        Ok(match (self.info.backend, &self.enumeration) {
            (Backend::Vinstr, _) => {
                Reader::Vinstr(VinstrReader::setup(dev, self.info.version, layout)?)
            }
            (Backend::KinstrPrfcnt, Some(info)) => Reader::Kinstr(KinstrReader::setup(
                dev,
                info,
                self.period.map(|p| p.as_nanos() as u64),
            )?),
            (Backend::KinstrPrfcnt, None) => {
                return Err(GpuError::ReaderNotOffered {
                    backend: Backend::KinstrPrfcnt,
                    version: self.info.version,
                })
            }
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

    /// Starts counting: the first sample covers the time since this call, each
    /// [`sample`](Self::sample) asks the driver for a dump.
    pub fn run(&mut self) -> Result<(), GpuError> {
        self.start(None)
    }

    /// Starts counting with the driver dumping every `period` by itself (vinstr's periodic
    /// interval, kinstr_prfcnt's periodic mode); each [`sample`](Self::sample) then returns the
    /// next of those dumps, waiting up to the timeout for it. The caller never waits inside the
    /// kernel for a dump, and a sample is one period: take them as fast as they come, or the
    /// driver's ring fills and it folds periods together. [`GpuError::PeriodTooShort`] below
    /// [`MIN_PERIOD`].
    pub fn run_periodic(&mut self, period: Duration) -> Result<(), GpuError> {
        if period < MIN_PERIOD {
            return Err(GpuError::PeriodTooShort {
                asked: period,
                min: MIN_PERIOD,
            });
        }
        self.start(Some(period))
    }

    fn start(&mut self, period: Option<Duration>) -> Result<(), GpuError> {
        // kinstr_prfcnt fixes its mode at setup: a reader of the other mode is set up anew.
        if self.period != period && matches!(self.reader, Some(Reader::Kinstr(_))) {
            self.stop()?;
        }
        self.period = period;
        if self.reader.is_none() {
            self.reader = Some(self.open_reader()?);
        }
        let dev = self.device.as_mut();
        match (&self.reader, period) {
            (Some(Reader::Vinstr(r)), None) => r.start(dev)?,
            (Some(Reader::Vinstr(r)), Some(p)) => r.start_periodic(dev, p.as_nanos() as u64)?,
            (Some(Reader::Kinstr(r)), _) => r.start(dev)?,
            (None, _) => return Err(GpuError::NotRunning),
        }
        self.running = true;
        self.interval_start = Some(Instant::now());
        self.last_timestamp = None;
        Ok(())
    }

    /// Every counter Arm's database documents for this GPU, hardware and derived, with the reason for each
    /// one this GPU and driver cannot give (empty for a GPU the database lacks, such as Midgard).
    pub fn mali_counters(&self) -> &MaliCounters {
        &self.mali
    }

    /// The device constants of Arm's equations, with the span of the last sample.
    pub fn mali_constants(&self) -> MaliConstants {
        MaliConstants {
            shader_cores: self.info.props.num_cores(),
            l2_slices: self.info.props.l2_slices,
            ext_bus_bytes: self.info.props.bus_width_bytes(),
            time_span_s: self.last_span_s,
        }
    }

    /// Every available [`mali_counters`](Self::mali_counters) value of the last [`sample`](Self::sample)
    /// (all counters of the dump are read, whichever [`GpuCounter`]s are enabled). The span of a sample, for
    /// the rates, is measured on the host clock from `run()` or the previous sample; while the driver dumps
    /// by itself, by the dumps' own timestamps (the first one spans a period), so that dumps taken from
    /// the ring one after another still span their periods.
    pub fn mali_values(&self, out: &mut MaliValues) {
        self.mali.evaluate(&self.sums, &self.mali_constants(), out);
    }

    /// The driver's dump period while counting with [`run_periodic`](Self::run_periodic).
    pub fn period(&self) -> Option<Duration> {
        self.period.filter(|_| self.running)
    }

    /// Reads the counters accumulated since the previous sample (or `run()`).
    pub fn sample(&mut self) -> Result<&GpuSample, GpuError> {
        if !self.running {
            return Err(GpuError::NotRunning);
        }
        self.sums.clear();
        let dev = self.device.as_mut();
        let periodic = self.period.is_some();
        let timeout = self.timeout;
        let sums = &mut self.sums;
        let (timestamp, flags) = match &mut self.reader {
            Some(Reader::Vinstr(r)) if periodic => (r.next_dump(dev, timeout, sums)?, 0),
            Some(Reader::Vinstr(r)) => (r.sample(dev, timeout, sums)?, 0),
            Some(Reader::Kinstr(r)) if periodic => {
                let header = r.next_sample(dev, timeout, sums)?;
                (header.timestamp_stop, header.flags)
            }
            Some(Reader::Kinstr(r)) => {
                let header = r.sample(dev, timeout, sums)?;
                (header.timestamp_stop, header.flags)
            }
            None => return Err(GpuError::NotRunning),
        };
        let now = Instant::now();
        self.last_span_s = match (self.period, self.last_timestamp) {
            (Some(_), Some(last)) if timestamp > last => (timestamp - last) as f64 / 1e9,
            (Some(period), _) => period.as_secs_f64(),
            (None, _) => self
                .interval_start
                .map_or(0.0, |start| now.duration_since(start).as_secs_f64()),
        };
        self.last_timestamp = periodic.then_some(timestamp);
        self.interval_start = Some(now);
        self.sample.present = 0;
        self.sample.timestamp_ns = timestamp;
        self.sample.counted = self.sums.counted();
        self.sample.stretched = flags & kinstr::SAMPLE_FLAG_OVERFLOW != 0;
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
        let was_running = std::mem::replace(&mut self.running, false);
        let dev = self.device.as_mut();
        match self.reader.take() {
            Some(Reader::Vinstr(r)) => r.stop(dev),
            Some(Reader::Kinstr(r)) if was_running => r.stop(dev),
            // A kinstr_prfcnt reader never started takes no STOP (the driver refuses it).
            Some(Reader::Kinstr(r)) => r.close(dev),
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
    use crate::gpu::version::Interface;

    #[test]
    fn open_without_mali_is_no_device() {
        if !std::path::Path::new("/dev/mali0").exists() {
            assert!(matches!(GpuProfiler::open(), Err(GpuError::NoDevice)));
        }
    }

    #[test]
    fn backend_choice_follows_what_the_driver_offers() {
        let v = |interface, major, minor| DriverVersion {
            interface,
            major,
            minor,
        };
        let dummy = BlockLayout::from_enumeration([1, 1, 8, 32], 64, 0xF, 1).unwrap();
        let wide = BlockLayout::from_enumeration([1, 1, 4, 16], 128, 0xFF, 4).unwrap();
        // r35p0 (JM 11.33, CSF 1.8) offers both; vinstr is preferred, either can be asked for.
        let r35 = v(Interface::Csf, 1, 8);
        let both = offered_readers(r35, true, &dummy);
        assert_eq!(both, &[Backend::Vinstr, Backend::KinstrPrfcnt]);
        assert_eq!(choose_backend(r35, both, None).unwrap(), Backend::Vinstr);
        assert_eq!(
            choose_backend(r35, both, Some(Backend::KinstrPrfcnt)).unwrap(),
            Backend::KinstrPrfcnt
        );
        // 128-value blocks and newer drivers: kinstr_prfcnt only.
        assert_eq!(offered_readers(r35, true, &wide), &[Backend::KinstrPrfcnt]);
        let new_jm = v(Interface::Jm, 11, 41);
        let only_kinstr = offered_readers(new_jm, true, &dummy);
        assert_eq!(only_kinstr, &[Backend::KinstrPrfcnt]);
        assert!(matches!(
            choose_backend(new_jm, only_kinstr, Some(Backend::Vinstr)),
            Err(GpuError::ReaderNotOffered {
                backend: Backend::Vinstr,
                ..
            })
        ));
        // Nothing offered: the driver is too old (or too new) for either reader.
        let none = offered_readers(v(Interface::Csf, 1, 30), false, &dummy);
        assert!(matches!(
            choose_backend(v(Interface::Csf, 1, 30), none, None),
            Err(GpuError::DriverTooOld { .. })
        ));
    }
}
