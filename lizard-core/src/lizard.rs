//! [`Lizard`]: the engine tying the counter list, the sources, the capture threads and the store together.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use gator_proto::ProtocolVersion;

use crate::config::{CaptureMode, Config};
use crate::counter::{
    Counter, CounterClass, CounterId, Derivation, DerivedInput, ResultType, Source,
};
use crate::error::{Error, NoValue};
use crate::gatord::apc::Unavailable;
use crate::gatord::capture::{Capture, Plan};
use crate::gatord::counter_sets::{self, SetSlots};
use crate::gatord::discovery;
use crate::gatord::xml::GatordDevice;
use crate::hwc::backend::{GpuDevice, HwcBackend, Scaling, UnreadableCounter};
use crate::hwc::sampler::{nanos_since, Sampler, SharedBackend};
use crate::hwc::{Sampling, MIN_SAMPLE_INTERVAL};
use crate::reduce::{self, DerivedSource};
use crate::store::{Sample, SampleStore, Value, Window};
use crate::transport::GatordAddress;
use crate::{GatordError, UsageError};

/// The gatord source after discovery.
#[derive(Debug)]
struct GatordSource {
    address: GatordAddress,
    version: ProtocolVersion,
    /// The counter sets whose events are offered, with their slots.
    sets: Vec<SetSlots>,
}

/// The direct (HWCPipe) source after discovery.
struct HwcSource {
    backend: SharedBackend,
    /// The id of the backend's counter 0.
    first_id: CounterId,
    count: usize,
    /// The GPU the source reads, if any.
    gpu: Option<GpuDevice>,
    /// What the source knows of but cannot read.
    unreadable: Vec<UnreadableCounter>,
}

impl std::fmt::Debug for HwcSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HwcSource")
            .field("first_id", &self.first_id)
            .field("count", &self.count)
            .field("gpu", &self.gpu)
            .finish_non_exhaustive()
    }
}

/// Where the engine is in its capture cycle: what reads cover and which counters were captured follow
/// from it alone.
#[derive(Debug)]
enum CaptureState {
    /// No capture has started.
    Idle,
    /// Between `start_capture` and `stop_capture` (boxed: it holds the capture's threads and sessions).
    Running(Box<Running>),
    /// After `stop_capture`: reads cover this capture until the next one starts.
    Stopped(Stopped),
}

/// A stopped capture.
#[derive(Debug)]
struct Stopped {
    /// When it started: where a derived counter's reading over the whole capture begins.
    start_ns: u64,
    /// The counters it captured (enabled ones; a derived counter's inputs are sampled but not listed).
    ids: Vec<CounterId>,
    /// Persistent mode: the start/stop window reads cover. Reconnecting mode: `None`, reads cover every
    /// sample of the capture.
    window: Option<Window>,
}

/// What is running between `start_capture` and `stop_capture`.
#[derive(Debug)]
struct Running {
    start_ns: u64,
    /// The enabled counters of this capture.
    ids: Vec<CounterId>,
    /// Reconnecting mode: this capture's own gatord session.
    gatord: Option<Capture>,
    /// Whether gatord counters take part (persistent mode uses the shared session).
    uses_gatord: bool,
    sampler: Option<Sampler>,
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sampler")
    }
}

/// The Lizard engine: one counter list over gatord and HWCPipe, captures on background threads, reads with
/// documented reductions.
///
/// # Methods
/// - setup: [`configure`](Self::configure), [`configure_with_backend`](Self::configure_with_backend)
/// - the counter list: [`counters`](Self::counters), [`count`](Self::count), [`counter`](Self::counter);
///   sources: [`gatord_error`](Self::gatord_error), [`hwcpipe_error`](Self::hwcpipe_error),
///   [`protocol_version`](Self::protocol_version)
/// - selection: [`enable`](Self::enable), [`disable`](Self::disable), [`disable_all`](Self::disable_all),
///   [`is_enabled`](Self::is_enabled)
/// - capture: [`start_capture`](Self::start_capture), [`stop_capture`](Self::stop_capture),
///   [`is_capturing`](Self::is_capturing), [`close_session`](Self::close_session)
/// - reads: [`samples`](Self::samples), [`read_int`](Self::read_int), [`read_double`](Self::read_double),
///   [`dropped`](Self::dropped), [`now_ns`](Self::now_ns)
///
/// # Ids
/// Counter ids are `1..=count()` and equal positions: gatord's fixed counters first (events document order,
/// filtered by the daemon's counters list), then the programmable events of gatord's counter sets (events
/// document order; see [`SetEvent`](crate::SetEvent)), then HWCPipe CPU, then HWCPipe GPU. Every method taking an id returns
/// [`UsageError::UnknownCounter`] for an id outside that range.
///
/// # Threads
/// A capture runs a gatord receiver thread and/or an HWCPipe sampler thread; both write one thread-safe
/// [`SampleStore`]. `stop_capture` joins them (with deadlines), and dropping the engine stops and joins
/// everything and closes every socket.
#[derive(Debug)]
pub struct Lizard {
    config: Config,
    counters: Vec<Counter>,
    enabled: Vec<bool>,
    /// The gatord source, or why there is none.
    gatord: Result<GatordSource, Error>,
    /// The direct (HWCPipe) source, or why there is none.
    hwc: Result<HwcSource, Error>,
    store: Arc<SampleStore>,
    epoch: Instant,
    capture: CaptureState,
    /// Persistent mode: the gatord session kept open across captures.
    persistent: Option<Capture>,
    /// Per counter (index `id - 1`): why its source listed it but never delivers it (gatord's derived
    /// counters), known from discovery.
    listed_unavailable: Vec<Option<Unavailable>>,
    /// What the last reconnecting-mode gatord session said it would not send.
    withheld: Vec<(CounterId, Unavailable)>,
    /// Persistent mode: until when reads of a closed window may wait for gatord's closing samples. One
    /// deadline for all reads of the window, so that reading many counters whose samples never come costs
    /// one [`Config::read_timeout`](crate::Config::read_timeout), not one each.
    read_deadline: Mutex<Option<(Window, Instant)>>,
    /// How the direct source's sampling went in the last stopped capture (`None` when it did not sample).
    sampling: Option<Sampling>,
    /// The daemon and machine as the latest gatord session described them.
    gatord_device: Option<GatordDevice>,
}

impl Lizard {
    /// Discovers counters from gatord (if configured) and HWCPipe (if enabled).
    ///
    /// Succeeds if at least one source gives counters; [`gatord_error`](Self::gatord_error) and
    /// [`hwcpipe_error`](Self::hwcpipe_error) then say which source failed and why. Fails with
    /// [`Error::NoSource`] (carrying both reasons) otherwise.
    pub fn configure(config: Config) -> Result<Lizard, Error> {
        let backend = if config.hwcpipe {
            crate::hwc::open_hwcpipe(&config.cpu_events, config.gpu_dumps)
        } else {
            Err(Error::SourceDisabled)
        };
        Self::build(config, backend)
    }

    /// Like [`configure`](Self::configure), with `backend` as the direct counter source instead of HWCPipe
    /// (`config.hwcpipe` is ignored). Its counters follow the gatord counters.
    pub fn configure_with_backend(
        config: Config,
        backend: Box<dyn HwcBackend>,
    ) -> Result<Lizard, Error> {
        Self::build(config, Ok(backend))
    }

    fn build(config: Config, backend: Result<Box<dyn HwcBackend>, Error>) -> Result<Lizard, Error> {
        if config.sample_interval < MIN_SAMPLE_INTERVAL {
            return Err(Error::Usage(UsageError::SampleInterval {
                interval: config.sample_interval,
                min: MIN_SAMPLE_INTERVAL,
            }));
        }
        let mut counters = Vec::new();
        let mut unavailable = Vec::new();
        let gatord = match &config.gatord {
            None => Err(Error::SourceDisabled),
            Some(address) => {
                match discovery::discover(
                    address,
                    config.timeouts,
                    config.max_message_len,
                    config.busy_retry,
                ) {
                    Ok(found) if found.counters.is_empty() => Err(Error::NoCounters),
                    Ok(found) => {
                        unavailable.extend(found.counters.iter().map(|c| {
                            found
                                .derived
                                .contains(&c.key)
                                .then_some(Unavailable::Derived)
                        }));
                        counters.extend(found.counters);
                        Ok(GatordSource {
                            address: address.clone(),
                            version: found.version,
                            sets: found.sets,
                        })
                    }
                    Err(err) => Err(err),
                }
            }
        };
        let hwc = backend.and_then(|backend| {
            let infos = backend.counters();
            if infos.is_empty() {
                return Err(Error::NoCounters);
            }
            let first_id = counters.len() as CounterId + 1;
            let count = infos.len();
            let scope = backend.cpu_scope();
            let gpu = backend.gpu();
            let unreadable = backend.unreadable();
            counters.extend(infos.into_iter().map(|mut info| {
                // A derived counter names its inputs by their index in the backend's list.
                if let Some(derivation) = &mut info.derivation {
                    derivation.offset_counters(first_id);
                }
                crate::hwc::counter_from(info, &scope)
            }));
            Ok(HwcSource {
                backend: Arc::new(Mutex::new(backend)),
                first_id,
                count,
                gpu,
                unreadable,
            })
        });
        let (gatord, hwc) = match (gatord, hwc) {
            (Err(gatord), Err(hwcpipe)) => {
                return Err(Error::NoSource {
                    gatord: Box::new(gatord),
                    hwcpipe: Box::new(hwcpipe),
                })
            }
            sources => sources,
        };
        for (index, counter) in counters.iter_mut().enumerate() {
            counter.id = index as CounterId + 1;
        }
        let store = Arc::new(SampleStore::new(counters.len(), config.capacity));
        unavailable.resize(counters.len(), None);
        Ok(Lizard {
            listed_unavailable: unavailable,
            withheld: Vec::new(),
            read_deadline: Mutex::new(None),
            sampling: None,
            gatord_device: None,
            enabled: vec![false; counters.len()],
            counters,
            gatord,
            hwc,
            store,
            epoch: Instant::now(),
            capture: CaptureState::Idle,
            persistent: None,
            config,
        })
    }

    /// The configuration in effect.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Every counter, id `i` at index `i - 1`.
    pub fn counters(&self) -> &[Counter] {
        &self.counters
    }

    /// The number of counters (the largest valid id).
    pub fn count(&self) -> usize {
        self.counters.len()
    }

    fn index(&self, id: CounterId) -> Result<usize, Error> {
        (id as usize)
            .checked_sub(1)
            .filter(|&i| i < self.counters.len())
            .ok_or(Error::Usage(UsageError::UnknownCounter {
                id,
                count: self.counters.len(),
            }))
    }

    /// The description of counter `id`.
    pub fn counter(&self, id: CounterId) -> Result<&Counter, Error> {
        Ok(&self.counters[self.index(id)?])
    }

    /// Why gatord gives no counters (`None` when it does).
    pub fn gatord_error(&self) -> Option<&Error> {
        self.gatord.as_ref().err()
    }

    /// Why gatord gives no counters, the engine given up for it (see [`crate::sources`]).
    pub(crate) fn into_gatord_error(mut self) -> Option<Error> {
        // The engine implements `Drop`, so the source is swapped out rather than moved.
        std::mem::replace(&mut self.gatord, Err(Error::SourceDisabled)).err()
    }

    /// Why HWCPipe gives no counters (`None` when it does).
    pub fn hwcpipe_error(&self) -> Option<&Error> {
        self.hwc.as_ref().err()
    }

    /// The GPU whose counters the direct source reads (product and driver version), if it reads one.
    pub fn gpu(&self) -> Option<&GpuDevice> {
        self.hwc.as_ref().ok().and_then(|h| h.gpu.as_ref())
    }

    /// Counters the direct source knows of but cannot read here, with the reason (for example a counter of
    /// Arm's database that the GPU's layout lacks or whose equation needs one); they have no id.
    pub fn unreadable(&self) -> &[UnreadableCounter] {
        self.hwc.as_ref().map_or(&[], |h| h.unreadable.as_slice())
    }

    /// How counter `id`'s total so far was scaled because the kernel multiplexed it (a local CPU counter
    /// sharing the PMU's hardware counters); `None` for a counter the kernel never multiplexes, or before
    /// its first sample.
    pub fn scaling(&self, id: CounterId) -> Result<Option<Scaling>, Error> {
        self.counter(id)?;
        let Ok(hwc) = &self.hwc else {
            return Ok(None);
        };
        let Some(index) = id.checked_sub(hwc.first_id) else {
            return Ok(None);
        };
        let backend = hwc.backend.lock().unwrap_or_else(PoisonError::into_inner);
        let scaling = backend.scaling().into_iter();
        Ok(scaling
            .filter(|(i, _)| *i == index as usize)
            .map(|(_, s)| s)
            .next())
    }

    /// Whether the direct source leaves kernel execution out of its CPU counts (the kernel refused to
    /// count it for this target).
    pub fn kernel_excluded(&self) -> bool {
        self.hwc.as_ref().is_ok_and(|hwc| {
            let backend = hwc.backend.lock().unwrap_or_else(PoisonError::into_inner);
            backend.kernel_excluded()
        })
    }

    /// The daemon and the machine it runs on, as gatord described them at the start of the latest capture
    /// that used it (its build id and source checksum, the model, OS, CPU id); `None` before one.
    pub fn gatord_device(&self) -> Option<&GatordDevice> {
        self.gatord_device.as_ref()
    }

    /// The protocol version gatord announced at discovery (`None` without gatord).
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.gatord.as_ref().ok().map(|g| g.version)
    }

    /// Selects counter `id` for the next capture. Takes effect at the next `start_capture`.
    ///
    /// [`GatordError::TooManyEvents`], changing nothing, for an event of a programmable counter set
    /// (`ARMv8_Cortex_A72:INST_RETIRED`) whose slots the events already enabled take.
    pub fn enable(&mut self, id: CounterId) -> Result<(), Error> {
        let i = self.index(id)?;
        if !self.enabled[i] {
            self.check_slot_free(i)?;
        }
        self.enabled[i] = true;
        Ok(())
    }

    /// [`GatordError::TooManyEvents`] when counter `i` is an event of a programmable counter set whose slots
    /// the events already enabled take: gatord counts one event per slot, so enabling every counter (as
    /// a per-draw caller may) gets the events that fit, and each one beyond says why.
    fn check_slot_free(&self, i: usize) -> Result<(), Error> {
        let (Some(event), Ok(gatord)) = (&self.counters[i].set_event, &self.gatord) else {
            return Ok(());
        };
        let Some(slots) = gatord.sets.iter().find(|s| s.set == event.set) else {
            return Ok(());
        };
        let same_set = |c: &Counter| c.set_event.as_ref().is_some_and(|e| e.set == event.set);
        let taken: Vec<String> = self
            .counters
            .iter()
            .zip(&self.enabled)
            .filter(|(c, &on)| on && same_set(c))
            .map(|(c, _)| c.key.clone())
            .collect();
        if taken.len() < slots.slots.len() {
            return Ok(());
        }
        let mut events = taken;
        events.push(self.counters[i].key.clone());
        Err(Error::Gatord(GatordError::TooManyEvents {
            set: event.set.clone(),
            slots: slots.slots.len(),
            events,
        }))
    }

    /// Deselects counter `id`. Takes effect at the next `start_capture`.
    pub fn disable(&mut self, id: CounterId) -> Result<(), Error> {
        let i = self.index(id)?;
        self.enabled[i] = false;
        Ok(())
    }

    /// Deselects every counter.
    pub fn disable_all(&mut self) {
        self.enabled.iter_mut().for_each(|e| *e = false);
    }

    /// Whether counter `id` is selected.
    pub fn is_enabled(&self, id: CounterId) -> Result<bool, Error> {
        Ok(self.enabled[self.index(id)?])
    }

    /// Whether a capture is running.
    pub fn is_capturing(&self) -> bool {
        matches!(self.capture, CaptureState::Running(_))
    }

    /// Nanoseconds since the engine was configured: the time base of every [`Sample::timestamp_ns`].
    pub fn now_ns(&self) -> u64 {
        nanos_since(self.epoch)
    }

    /// The host's `CLOCK_BOOTTIME` at the engine's time zero (where [`now_ns`](Self::now_ns) reads 0), in
    /// nanoseconds: adding it to a sample's timestamp puts the sample on the clock other traces of this
    /// machine use (Perfetto's default). Read now, so within microseconds of the truth.
    pub fn boottime_at_zero_ns(&self) -> u64 {
        let now = rustix::time::clock_gettime(rustix::time::ClockId::Boottime);
        let boottime = u64::try_from(now.tv_sec)
            .unwrap_or(0)
            .saturating_mul(1_000_000_000)
            .saturating_add(u64::try_from(now.tv_nsec).unwrap_or(0));
        boottime.saturating_sub(self.now_ns())
    }

    fn enabled_ids(&self, pick: impl Fn(Source) -> bool) -> Vec<CounterId> {
        self.counters
            .iter()
            .zip(&self.enabled)
            .filter(|(c, &on)| on && pick(c.source))
            .map(|(c, _)| c.id)
            .collect()
    }

    fn plan(&self, gatord: &GatordSource, ids: &[CounterId]) -> Result<Plan, Error> {
        let enabled: Vec<&Counter> = ids
            .iter()
            .map(|&id| &self.counters[id as usize - 1])
            .collect();
        Ok(Plan {
            address: gatord.address.clone(),
            timeouts: self.config.timeouts,
            max_len: self.config.max_message_len,
            sample_rate: self.config.sample_rate,
            live_rate_ms: self.config.live_rate_ms,
            busy_retry: self.config.busy_retry,
            counters: counter_sets::assign(&enabled, &gatord.sets)?,
        })
    }

    /// `ids` and, transitively, every counter input of the derived counters among them, ascending.
    fn with_inputs(&self, ids: &[CounterId]) -> Vec<CounterId> {
        let mut out: Vec<CounterId> = ids.to_vec();
        let mut next = 0;
        while next < out.len() {
            let id = out[next];
            next += 1;
            let Some(derivation) = self
                .counters
                .get(id as usize - 1)
                .and_then(|c| c.derivation.as_ref())
            else {
                continue;
            };
            for input in &derivation.inputs {
                if let DerivedInput::Counter(input) = *input {
                    if (1..=self.counters.len() as CounterId).contains(&input)
                        && !out.contains(&input)
                    {
                        out.push(input);
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Starts capturing the enabled counters.
    ///
    /// Reconnecting mode: clears every stored sample, opens a gatord session (configuration connection, then
    /// capture connection) if gatord counters are enabled, and starts the HWCPipe sampler (which samples once
    /// before this returns) if HWCPipe counters are enabled. Persistent mode: reuses the open gatord session
    /// when the enabled gatord counters are unchanged (no connection at all), opening one otherwise.
    ///
    /// Fails without starting anything if any enabled source cannot start; [`GatordError::SessionInProgress`] means
    /// gatord is still busy with another session. The enabled events of a counter set get its slots in id
    /// order; [`GatordError::TooManyEvents`] when more are enabled than the set has slots.
    pub fn start_capture(&mut self) -> Result<(), Error> {
        if self.is_capturing() {
            return Err(Error::Usage(UsageError::CaptureRunning));
        }
        let gatord_ids = self.enabled_ids(|s| s == Source::Gatord);
        let hwc_ids = self.enabled_ids(|s| s != Source::Gatord);
        if gatord_ids.is_empty() && hwc_ids.is_empty() {
            return Err(Error::Usage(UsageError::NothingEnabled));
        }
        let persistent = self.config.mode == CaptureMode::Persistent;
        if !persistent {
            self.store.clear_all();
        }
        let mut own_gatord = None;
        if let (false, Ok(gatord)) = (gatord_ids.is_empty(), self.gatord.as_ref()) {
            if persistent {
                let reusable = self
                    .persistent
                    .as_ref()
                    .is_some_and(|c| c.counters() == gatord_ids.as_slice() && !c.is_finished());
                if !reusable {
                    let plan = self.plan(gatord, &gatord_ids)?;
                    if let Some(old) = self.persistent.take() {
                        let _ = old.stop(self.config.stop_timeout);
                    }
                    let capture = Capture::open(&plan, Arc::clone(&self.store), self.epoch)?;
                    self.gatord_device = capture.target().cloned();
                    self.persistent = Some(capture);
                }
            } else {
                let plan = self.plan(gatord, &gatord_ids)?;
                let capture = Capture::open(&plan, Arc::clone(&self.store), self.epoch)?;
                self.gatord_device = capture.target().cloned();
                own_gatord = Some(capture);
            }
        }
        let start_ns = self.now_ns();
        // A derived counter's reading is its equation over its inputs' totals: they are sampled and stored
        // with it, though not shown as captured.
        let sampled_hwc = self.with_inputs(&hwc_ids);
        if persistent {
            self.store.prune_before(start_ns);
            self.store.clear(sampled_hwc.iter().copied());
        }
        let mut sampler = None;
        if let (false, Ok(hwc)) = (hwc_ids.is_empty(), self.hwc.as_ref()) {
            let map = sampled_hwc
                .iter()
                .map(|&id| ((id - hwc.first_id) as usize, id))
                .collect();
            match Sampler::start(
                Arc::clone(&hwc.backend),
                map,
                Arc::clone(&self.store),
                self.epoch,
                self.config.sample_interval,
            ) {
                Ok(s) => sampler = Some(s),
                Err(err) => {
                    if let Some(capture) = own_gatord {
                        let _ = capture.stop(self.config.stop_timeout);
                    }
                    return Err(err);
                }
            }
        }
        let uses_gatord = !gatord_ids.is_empty();
        if !uses_gatord {
            self.withheld.clear();
        }
        let mut ids = gatord_ids;
        ids.extend(hwc_ids);
        self.capture = CaptureState::Running(Box::new(Running {
            start_ns,
            ids,
            gatord: own_gatord,
            uses_gatord,
            sampler,
        }));
        Ok(())
    }

    /// Stops the capture: the HWCPipe sampler takes its last sample and is joined; in reconnecting mode the
    /// gatord session is stopped (APC_STOP, drain to the end marker within
    /// [`Config::stop_timeout`](crate::Config::stop_timeout)) and closed; in persistent mode the window is
    /// closed at once, without waiting for gatord (a read that needs a later sample waits for it), and the
    /// session stays open.
    ///
    /// Always returns promptly and always leaves the engine stopped. Samples received before any error stay
    /// readable: [`GatordError::Disconnected`] (gatord died), [`GatordError::Daemon`] (gatord reported an error during
    /// the capture), [`GatordError::StopTimeout`] (no end marker), [`GatordError::MalformedFrames`], a protocol error, or
    /// an HWCPipe error. In reconnecting mode, when the sources ended cleanly but no enabled counter has a
    /// value (see [`read_int`](Self::read_int)), the result is [`Error::NothingCaptured`]: nothing was
    /// measured. (In persistent mode a sample that closes the window may still be on its way, so that is
    /// left to the reads.)
    pub fn stop_capture(&mut self) -> Result<(), Error> {
        let running = match std::mem::replace(&mut self.capture, CaptureState::Idle) {
            CaptureState::Running(running) => *running,
            other => {
                self.capture = other;
                return Err(Error::Usage(UsageError::NotCapturing));
            }
        };
        let (hwc_result, sampling) = running.sampler.map_or((Ok(()), None), Sampler::stop);
        self.sampling = sampling;
        let end_ns = self.now_ns();
        let gatord_result = match running.gatord {
            Some(capture) => {
                self.withheld = capture.unavailable();
                capture.stop(self.config.stop_timeout)
            }
            None if running.uses_gatord => self.check_persistent(),
            None => Ok(()),
        };
        let window = match self.config.mode {
            CaptureMode::Reconnecting => None,
            CaptureMode::Persistent => Some(Window {
                start_ns: running.start_ns,
                end_ns,
            }),
        };
        let count = running.ids.len();
        self.capture = CaptureState::Stopped(Stopped {
            start_ns: running.start_ns,
            ids: running.ids,
            window,
        });
        gatord_result.and(hwc_result)?;
        let reconnecting = self.config.mode == CaptureMode::Reconnecting;
        if reconnecting
            && self
                .captured()
                .iter()
                .all(|&id| self.read_double(id).is_err())
        {
            return Err(Error::NothingCaptured(count));
        }
        Ok(())
    }

    /// Whether the running capture's gatord session has ended on gatord's side (the daemon closed the
    /// connection or sent its end marker) or gatord reported an error: no more gatord samples will come and
    /// the capture should be stopped now ([`stop_capture`](Self::stop_capture) then says why). `false` when
    /// no capture runs or it uses no gatord counter.
    pub fn capture_ended(&self) -> bool {
        let CaptureState::Running(running) = &self.capture else {
            return false;
        };
        match (&running.gatord, &self.persistent) {
            (Some(capture), _) => capture.has_ended(),
            (None, Some(capture)) if running.uses_gatord => capture.has_ended(),
            _ => false,
        }
    }

    /// Persistent mode at a stop: the shared session must still be alive; if gatord ended it (closed the
    /// connection or reported an error), it is stopped and the reason returned.
    fn check_persistent(&mut self) -> Result<(), Error> {
        if self.persistent.as_ref().is_some_and(|c| !c.has_ended()) {
            return Ok(());
        }
        match self.persistent.take() {
            Some(capture) => match capture.stop(self.config.stop_timeout) {
                Ok(()) | Err(Error::Gatord(GatordError::StopTimeout(_))) => {
                    Err(Error::Gatord(GatordError::Disconnected))
                }
                Err(err) => Err(err),
            },
            None => Err(Error::Gatord(GatordError::Disconnected)),
        }
    }

    /// Persistent mode: ends the open gatord session now (APC_STOP, drain, close). Harmless when none is open.
    pub fn close_session(&mut self) -> Result<(), Error> {
        match self.persistent.take() {
            Some(capture) => capture.stop(self.config.stop_timeout),
            None => Ok(()),
        }
    }

    fn current_window(&self) -> Option<Window> {
        match (&self.capture, self.config.mode) {
            (CaptureState::Running(running), CaptureMode::Persistent) => Some(Window {
                start_ns: running.start_ns,
                end_ns: u64::MAX,
            }),
            (CaptureState::Running(_), CaptureMode::Reconnecting) | (CaptureState::Idle, _) => None,
            (CaptureState::Stopped(stopped), _) => stopped.window,
        }
    }

    /// The counters of the running or last capture (none before one).
    fn captured(&self) -> &[CounterId] {
        match &self.capture {
            CaptureState::Idle => &[],
            CaptureState::Running(running) => &running.ids,
            CaptureState::Stopped(stopped) => &stopped.ids,
        }
    }

    /// The counters a capture takes when the user names none: every counter, with each programmable counter
    /// set's slots left to the daemon's metrics of its CPUs, or given the events the most useful metrics
    /// need where it has none ([`crate::selection`]).
    pub fn default_counters(&self) -> crate::selection::DefaultChoice {
        let sets = self.gatord.as_ref().map_or(&[][..], |g| g.sets.as_slice());
        crate::selection::default_choice(&self.counters, &|set| {
            sets.iter()
                .find(|s| s.set == set)
                .map(|s| crate::selection::SetRoom {
                    slots: s.slots.len(),
                    metrics: s
                        .metrics
                        .iter()
                        .filter(|m| self.counters.iter().any(|c| &c.key == *m))
                        .count(),
                })
        })
    }

    /// When the running or last capture started, on the engine's time base (that of the samples): a derived
    /// counter's reading over a whole capture covers the time from here to its last sample.
    pub fn capture_started_ns(&self) -> Option<u64> {
        match &self.capture {
            CaptureState::Idle => None,
            CaptureState::Running(running) => Some(running.start_ns),
            CaptureState::Stopped(stopped) => Some(stopped.start_ns),
        }
    }

    /// The samples of counter `id` in the last (or running) capture, oldest first.
    pub fn samples(&self, id: CounterId) -> Result<Vec<Sample>, Error> {
        self.index(id)?;
        Ok(self
            .store
            .samples(id, self.current_window())
            .unwrap_or_default())
    }

    /// The series of counter `id` in the last (or running) capture: its [`samples`](Self::samples) with the
    /// samples of one instant from different cores combined into one ([`reduce::combined`]: added for a delta
    /// counter, averaged for an absolute one), as its reading combines them.
    pub fn series(&self, id: CounterId) -> Result<Vec<Sample>, Error> {
        let counter = self.counter(id)?;
        Ok(reduce::combined(counter, &self.samples(id)?))
    }

    /// Whether counter `id` was counted per core in the last (or running) capture (a gatord perf counter,
    /// one sample per core): its [`core_readings`](Self::core_readings) are then each core's part.
    pub fn counted_per_core(&self, id: CounterId) -> Result<bool, Error> {
        Ok(reduce::has_cores(&self.samples(id)?))
    }

    /// Each core's part of counter `id`, by ascending core: the core's samples and its reading by the rules
    /// of [`read_int`](Self::read_int) (over the capture, or the start/stop window) as an integer or double,
    /// as the counter's [`ResultType`](crate::ResultType) says. Empty when the counter was not counted per
    /// core. Call it after the counter's own read, which waits for a window's closing samples.
    pub fn core_readings(&self, id: CounterId) -> Result<Vec<CoreReading>, Error> {
        let counter = self.counter(id)?;
        let window = self.current_window();
        let shown = reduce::by_core(&self.store.samples(id, window).unwrap_or_default());
        // A window's reading also uses the samples enclosing it, of each core.
        let around =
            window.map(|w| reduce::by_core(&self.store.samples_around(id, w).unwrap_or_default()));
        Ok(shown
            .into_iter()
            .map(|(core, samples)| {
                let value = match &around {
                    None => reading_value(counter, &samples, None),
                    Some(around) => {
                        let used = around
                            .iter()
                            .find(|(c, _)| *c == core)
                            .map_or(&[][..], |(_, s)| s);
                        reading_value(counter, used, window)
                    }
                };
                CoreReading {
                    core,
                    samples,
                    value,
                }
            })
            .collect())
    }

    /// The reading of counter `id` over `window` of the running (or last) capture, whatever the capture's
    /// mode: a frame, a submission, any stretch the caller timed on [`now_ns`](Self::now_ns)'s clock. The
    /// window rules of [`crate::reduce`] apply: a delta counter reads the apportioned part of each sample
    /// whose interval overlaps the window, an absolute counter the level in force, a derived counter its
    /// equation over its inputs' totals in the window; the counter's multiplier is applied. It reads what
    /// has arrived and never waits: a window whose closing sample has not arrived yet reads short, so read
    /// a window once the source's sampling has passed its end (about one sampling interval later).
    pub fn read_window(&self, id: CounterId, window: Window) -> Result<f64, Error> {
        let counter = self.counter(id)?;
        let no_value = |reason| Error::NoValue { id, reason };
        if !self.captured().contains(&id) {
            return Err(no_value(NoValue::NotCaptured));
        }
        if let Some(why) = self.unavailable(id)? {
            return Err(no_value(NoValue::Unavailable(why)));
        }
        if let Some(derivation) = &counter.derivation {
            let value = reduce::derived(derivation, window, &|input| {
                let inner = self.counters.get((input as usize).checked_sub(1)?)?;
                Some(match &inner.derivation {
                    Some(inner) => DerivedSource::Derivation(inner),
                    None => DerivedSource::Samples(self.store.samples_around(input, window)?),
                })
            })
            .map_err(no_value)?;
            return Ok(value * counter.scale());
        }
        let samples = self.store.samples_around(id, window).unwrap_or_default();
        reduce::read_double_in(counter, &samples, window).ok_or_else(|| {
            no_value(if samples.is_empty() {
                NoValue::NoSamples
            } else {
                NoValue::NotEnclosed
            })
        })
    }

    /// Discards every stored sample older than `timestamp_ns` except, for each counter, the newest of each
    /// core before it (the one a window starting there reads from): a long capture read window by window
    /// with [`read_window`](Self::read_window) keeps its store small. Discarded samples are not counted as
    /// dropped, and reads over the whole capture no longer see them.
    pub fn prune_before(&self, timestamp_ns: u64) {
        self.store.prune_before(timestamp_ns);
    }

    /// How the direct (HWCPipe) source's periodic sampling went in the last stopped capture: the periods
    /// expected in the window, the samples delivered, the periods missed and the largest gap. `None` before
    /// a capture that sampled the direct source has stopped.
    pub fn sampling(&self) -> Option<Sampling> {
        self.sampling.clone()
    }

    /// How many samples of counter `id` were dropped because its buffer was full.
    pub fn dropped(&self, id: CounterId) -> Result<u64, Error> {
        self.index(id)?;
        Ok(self.store.dropped(id).unwrap_or(0))
    }

    /// Why counter `id` has no values here, if so: gatord lists it but never sends it (a derived counter),
    /// or, in the running or last capture, gatord will not send it (e.g. a perf counter it opens for
    /// counting only, or one its `captured` map gave no key); `None` for a counter that is delivered.
    pub fn unavailable(&self, id: CounterId) -> Result<Option<Unavailable>, Error> {
        let index = self.index(id)?;
        if let Some(why) = self.listed_unavailable[index] {
            return Ok(Some(why));
        }
        let own = match &self.capture {
            CaptureState::Running(running) => running.gatord.as_ref(),
            CaptureState::Idle | CaptureState::Stopped(_) => None,
        };
        let live = own.or(self.persistent.as_ref()).map(Capture::unavailable);
        let list = live.as_deref().unwrap_or(&self.withheld);
        Ok(list.iter().find(|(i, _)| *i == id).map(|(_, why)| *why))
    }

    /// The integer reading of counter `id` over the last (or running) capture, by the rules of
    /// [`crate::reduce`]: in reconnecting mode over every sample of the capture, in persistent mode over the
    /// start/stop window (a window shorter than gatord's sample period reads the absolute level in force or
    /// the apportioned part of the delta that encloses it).
    ///
    /// A counter with no usable sample has no value, never 0: [`Error::NoValue`] says why ([`NoValue`]).
    pub fn read_int(&self, id: CounterId) -> Result<i64, Error> {
        self.reading(id, reduce::read_int, reduce::read_int_in, |c, v| {
            (v * c.scale()) as i64
        })
    }

    /// The floating-point reading of counter `id` (see [`read_int`](Self::read_int)).
    pub fn read_double(&self, id: CounterId) -> Result<f64, Error> {
        self.reading(id, reduce::read_double, reduce::read_double_in, |c, v| {
            v * c.scale()
        })
    }

    /// Whether `value`, a reading of counter `id`, cannot happen on working hardware, and why
    /// ([`reduce::implausible`]).
    pub fn implausible(
        &self,
        id: CounterId,
        value: f64,
    ) -> Result<Option<reduce::Implausible>, Error> {
        Ok(reduce::implausible(self.counter(id)?, value))
    }

    /// The reading of derived counter `id`: its equation over its inputs' totals in the window (or over the
    /// whole capture, from its start to the last sample of it or its inputs).
    fn derived_reading(&self, id: CounterId, derivation: &Derivation) -> Result<f64, NoValue> {
        let window = self.current_window();
        let latest = || {
            self.with_inputs(&[id])
                .into_iter()
                .filter_map(|id| self.store.samples(id, None)?.last().map(|s| s.timestamp_ns))
                .max()
        };
        let span = match window {
            Some(w) if w.end_ns != u64::MAX => w,
            Some(w) => Window {
                start_ns: w.start_ns,
                end_ns: latest().unwrap_or(w.start_ns),
            },
            None => Window {
                start_ns: self.capture_started_ns().ok_or(NoValue::NotCaptured)?,
                end_ns: latest().ok_or(NoValue::NoSamples)?,
            },
        };
        reduce::derived(derivation, span, &|id| {
            let counter = self.counters.get((id as usize).checked_sub(1)?)?;
            Some(match &counter.derivation {
                Some(inner) => DerivedSource::Derivation(inner),
                None => DerivedSource::Samples(match window {
                    Some(w) => self.store.samples_around(id, w)?,
                    None => self.store.samples(id, None)?,
                }),
            })
        })
    }

    fn reading<T>(
        &self,
        id: CounterId,
        all: fn(&Counter, &[Sample]) -> Option<T>,
        in_window: fn(&Counter, &[Sample], Window) -> Option<T>,
        from_f64: fn(&Counter, f64) -> T,
    ) -> Result<T, Error> {
        let counter = self.counter(id)?;
        let no_value = |reason| Error::NoValue { id, reason };
        if !self.captured().contains(&id) {
            return Err(no_value(NoValue::NotCaptured));
        }
        if let Some(why) = self.unavailable(id)? {
            return Err(no_value(NoValue::Unavailable(why)));
        }
        if let Some(derivation) = &counter.derivation {
            return self
                .derived_reading(id, derivation)
                .map(|v| from_f64(counter, v))
                .map_err(no_value);
        }
        let (samples, value) = match self.current_window() {
            None => {
                let samples = self.store.samples(id, None).unwrap_or_default();
                let value = all(counter, &samples);
                (samples, value)
            }
            Some(window) => {
                let mut samples = self.store.samples_around(id, window).unwrap_or_default();
                if let Some(capture) = &self.persistent {
                    if self.awaits_closing_sample(counter, window, &samples, capture.latest_ns()) {
                        capture.wait_until(self.read_deadline(window), |latest| {
                            samples = self.store.samples_around(id, window).unwrap_or_default();
                            !self.awaits_closing_sample(counter, window, &samples, latest)
                        });
                    }
                }
                let value = in_window(counter, &samples, window);
                (samples, value)
            }
        };
        value.ok_or_else(|| {
            no_value(if samples.is_empty() {
                NoValue::NoSamples
            } else {
                NoValue::NotEnclosed
            })
        })
    }
}

/// One core's part of a counter counted per core ([`Lizard::core_readings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CoreReading {
    /// The core.
    pub core: u32,
    /// The core's samples of the capture (or the window), oldest first.
    pub samples: Vec<Sample>,
    /// The core's reading: [`Value::Int`] for an integer counter, [`Value::Float`] otherwise; `None` when no
    /// sample is usable.
    pub value: Option<Value>,
}

/// `counter`'s reading over `samples` (over `window`, when given), as its result type reads.
fn reading_value(counter: &Counter, samples: &[Sample], window: Option<Window>) -> Option<Value> {
    match (counter.result_type, window) {
        (ResultType::Integer, None) => reduce::read_int(counter, samples).map(Value::Int),
        (ResultType::Integer, Some(w)) => reduce::read_int_in(counter, samples, w).map(Value::Int),
        (ResultType::Floating, None) => reduce::read_double(counter, samples).map(Value::Float),
        (ResultType::Floating, Some(w)) => {
            reduce::read_double_in(counter, samples, w).map(Value::Float)
        }
    }
}

impl Lizard {
    /// Until when reads of the closed persistent `window` may wait: [`Config::read_timeout`] from the
    /// window's first read that waits.
    ///
    /// [`Config::read_timeout`]: crate::Config::read_timeout
    fn read_deadline(&self, window: Window) -> Instant {
        let mut deadline = self
            .read_deadline
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match *deadline {
            Some((w, until)) if w == window => until,
            _ => {
                let until = Instant::now() + self.config.read_timeout;
                *deadline = Some((window, until));
                until
            }
        }
    }

    /// Whether reading `counter` over the closed persistent `window` must first wait for gatord's next
    /// sample: a delta counter's reading is final only once the sample whose interval encloses the window's
    /// end has arrived; an absolute counter reads the level in force from what has arrived, and waits only
    /// while nothing of it has arrived at all (a session's first samples are still on their way).
    ///
    /// A counter the session has sent nothing of stops waiting once gatord has sent anything stamped at or
    /// after the window's end (`latest_ns`, the latest timestamp received): gatord sends a counter it
    /// serves in every sample period, so one still silent then (an event-driven counter whose event never
    /// fired, a source that failed) would make every window wait out the read timeout.
    fn awaits_closing_sample(
        &self,
        counter: &Counter,
        window: Window,
        samples: &[Sample],
        latest_ns: Option<u64>,
    ) -> bool {
        let silent_past_window =
            samples.is_empty() && latest_ns.is_some_and(|t| t >= window.end_ns);
        !self.is_capturing()
            && self.config.mode == CaptureMode::Persistent
            && counter.source == Source::Gatord
            && !silent_past_window
            && match counter.class {
                CounterClass::Delta | CounterClass::Derived => !closes_window(samples, window),
                CounterClass::Absolute => samples.is_empty(),
            }
    }
}

/// Whether `samples` (oldest first) reach the end of `window` for every core they come from: each core has
/// a sample stamped at or after it.
fn closes_window(samples: &[Sample], window: Window) -> bool {
    // (core, whether it has reached the end), for the few cores there are.
    let mut cores: Vec<(Option<u32>, bool)> = Vec::new();
    for s in samples {
        let reached = s.timestamp_ns >= window.end_ns;
        match cores.iter_mut().find(|(core, _)| *core == s.core) {
            Some((_, done)) => *done |= reached,
            None => cores.push((s.core, reached)),
        }
    }
    !cores.is_empty() && cores.iter().all(|&(_, done)| done)
}

impl Drop for Lizard {
    /// Stops a running capture and closes the persistent session, joining every thread and closing every
    /// socket.
    fn drop(&mut self) {
        if self.is_capturing() {
            let _ = self.stop_capture();
        }
        let _ = self.close_session();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_can_move_to_another_thread() {
        fn send<T: Send>() {}
        send::<Lizard>();
        send::<Error>();
    }
}
