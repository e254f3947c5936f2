//! The HWCPipe sampler thread: one sample at start, one per interval (sleeping in between, never spinning),
//! one at stop, every sample written into the shared store, and the window's account ([`Sampling`]): the
//! periods expected, delivered and missed.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hwcpipe::sys::monotonic_raw_ns;

use super::backend::{GpuMiss, GpuSource, HwcBackend, NoKernelSampling};
use super::kernel_sampling::KernelRun;
use super::sampling::{GpuPace, GpuSampling, GpuTally, Sampling, SamplingMethod, Tally};
use crate::counter::CounterId;
use crate::error::Error;
use crate::store::{Sample, SampleStore, Value};
use crate::DirectError;

/// A backend shared between the engine and its sampler thread.
pub(crate) type SharedBackend = Arc<Mutex<Box<dyn HwcBackend>>>;

/// A backend's GPU side, shared between the backend and the GPU's poller.
pub(crate) type SharedGpu = Arc<Mutex<dyn GpuSource>>;

/// What one sampling pass needs: the backend, which backend index maps to which counter id, the store and the
/// time origin.
struct Pass {
    backend: SharedBackend,
    ids: Vec<(usize, CounterId)>,
    store: Arc<SampleStore>,
    epoch: Instant,
    scratch: Vec<(usize, Value)>,
}

impl Pass {
    fn sample(&mut self) -> Result<(), Error> {
        self.scratch.clear();
        {
            let mut backend = self.backend.lock().unwrap_or_else(PoisonError::into_inner);
            backend.sample(&mut self.scratch)?;
        }
        let timestamp_ns = nanos_since(self.epoch);
        store_values(&self.store, &self.ids, &self.scratch, timestamp_ns);
        Ok(())
    }
}

/// Nanoseconds from `epoch` to now, saturating.
pub(crate) fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A running sampler: the CPU counters' (a thread, or the kernel's timers) and the GPU's (a poller of its
/// own), either of which may be absent.
pub(crate) struct Sampler {
    cpu: Option<CpuRun>,
    gpu: Option<GpuRun>,
    backend: SharedBackend,
}

/// The CPU counters' sampling thread (or the thread draining the kernel's rings).
struct CpuRun {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<(Result<(), Error>, Sampling)>,
}

/// The GPU's poller thread, which sends its result on `done` as it ends, so that the stop can wait for it
/// with a deadline ([`gpu_stop_deadline`]).
struct GpuRun {
    stop: mpsc::Sender<()>,
    done: mpsc::Receiver<(Result<(), Error>, GpuSampling)>,
    thread: JoinHandle<()>,
    deadline: Duration,
}

impl GpuRun {
    /// Waits for the poller's result until the deadline. A poller stuck in the driver is left behind
    /// (its thread detached) and reported as [`DirectError::GpuStalled`]; a panicked one as
    /// [`DirectError::SamplerPanicked`].
    fn finish(self) -> (Result<(), Error>, Option<GpuSampling>) {
        match self.done.recv_timeout(self.deadline) {
            Ok((result, sampling)) => {
                let _ = self.thread.join();
                (result, Some(sampling))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let _ = self.thread.join();
                (Err(Error::Direct(DirectError::SamplerPanicked)), None)
            }
            Err(RecvTimeoutError::Timeout) => (
                Err(Error::Direct(DirectError::GpuStalled {
                    waited: self.deadline,
                })),
                None,
            ),
        }
    }
}

/// How long the stop waits for the GPU's poller: a wait for a dump under way (a period and its deadline),
/// the dumps due by the stop (one more deadline), and two seconds to spare.
pub(crate) fn gpu_stop_deadline(interval: Duration) -> Duration {
    interval
        .saturating_add(dump_deadline(interval).saturating_mul(2))
        .saturating_add(Duration::from_secs(2))
}

impl Sampler {
    /// Starts sampling the enabled indices every `interval`. The GPU's counters, where the backend reads a
    /// GPU ([`HwcBackend::gpu_source`]), on a poller of their own that takes the driver's periodic dumps as
    /// they come ([`GpuPoller`]); the others by the kernel where the backend can have it
    /// ([`HwcBackend::kernel_sampler`]), else by a thread — the backend started, the start sample taken on
    /// the caller's thread (so a failure is reported by `start_capture`), then the thread spawned. Either
    /// way the window's account says who sampled, and why not the kernel.
    pub(crate) fn start(
        backend: SharedBackend,
        ids: Vec<(usize, CounterId)>,
        store: Arc<SampleStore>,
        epoch: Instant,
        interval: Duration,
    ) -> Result<Sampler, Error> {
        let plan = backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .gpu_source();
        let (gpu_ids, cpu_ids): (Vec<_>, Vec<_>) = ids.into_iter().partition(|&(index, _)| {
            plan.as_ref()
                .is_some_and(|p| (p.first..p.first + p.count).contains(&index))
        });
        let gpu = match plan {
            Some(plan) if !gpu_ids.is_empty() => {
                let ids = gpu_ids
                    .into_iter()
                    .map(|(index, id)| (index - plan.first, id))
                    .collect();
                let mut poller =
                    GpuPoller::start(plan.source, ids, Arc::clone(&store), epoch, interval)?;
                if cpu_ids.is_empty() {
                    poller.target = Some(Arc::clone(&backend));
                }
                let (stop, stop_rx) = mpsc::channel::<()>();
                let (done_tx, done) = mpsc::sync_channel(1);
                let thread = std::thread::Builder::new()
                    .name("lizard-gpu".into())
                    .spawn(move || {
                        let _ = done_tx.send(poller.run(stop_rx));
                    })
                    .map_err(Error::Thread)?;
                Some(GpuRun {
                    stop,
                    done,
                    thread,
                    deadline: gpu_stop_deadline(interval),
                })
            }
            _ => None,
        };
        let cpu = if cpu_ids.is_empty() {
            None
        } else {
            match start_cpu(&backend, cpu_ids, store, epoch, interval) {
                Ok(run) => Some(run),
                Err(err) => {
                    if let Some(gpu) = gpu {
                        let _ = gpu.stop.send(());
                        let _ = gpu.finish();
                    }
                    return Err(err);
                }
            }
        };
        Ok(Sampler { cpu, gpu, backend })
    }

    /// Signals the threads, which take their stop samples and exit; joins them and stops the backend.
    /// Returns the first sampling error, if any (samples stored before it are kept), and the window's account
    /// (`None` if a thread panicked).
    pub(crate) fn stop(self) -> (Result<(), Error>, Option<Sampling>) {
        // A send error means the thread already ended (after an error); joining still collects its result.
        if let Some(cpu) = &self.cpu {
            let _ = cpu.stop.send(());
        }
        if let Some(gpu) = &self.gpu {
            let _ = gpu.stop.send(());
        }
        let panicked = || Error::Direct(DirectError::SamplerPanicked);
        let (cpu_result, cpu_sampling) = match self.cpu.map(|cpu| cpu.thread.join()) {
            Some(Ok((result, sampling))) => (result, Some(sampling)),
            Some(Err(_)) => (Err(panicked()), None),
            None => (Ok(()), None),
        };
        let (gpu_result, gpu_sampling) = match self.gpu {
            Some(gpu) => gpu.finish(),
            None => (Ok(()), None),
        };
        // Also after GPU counters only: the backend may have a command to end and reap.
        self.backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
        let sampling = match (cpu_sampling, gpu_sampling) {
            (Some(mut cpu), gpu) => {
                cpu.gpu = gpu;
                Some(cpu)
            }
            (None, Some(gpu)) => Some(Sampling::gpu_only(gpu)),
            (None, None) => None,
        };
        (cpu_result.and(gpu_result), sampling)
    }
}

/// Starts sampling the CPU counters: by the kernel where the backend can have it, else by a thread.
fn start_cpu(
    backend: &SharedBackend,
    ids: Vec<(usize, CounterId)>,
    store: Arc<SampleStore>,
    epoch: Instant,
    interval: Duration,
) -> Result<CpuRun, Error> {
    let enabled: Vec<usize> = ids.iter().map(|&(i, _)| i).collect();
    let plan = backend
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .kernel_sampler(&enabled, interval);
    let refusal = match plan {
        Ok(plan) => match KernelRun::start(plan, ids.clone(), Arc::clone(&store), epoch) {
            Ok(run) => {
                let (stop, stop_rx) = mpsc::channel::<()>();
                let thread = std::thread::Builder::new()
                    .name("lizard-rings".into())
                    .spawn(move || run.run(stop_rx))
                    .map_err(Error::Thread)?;
                return Ok(CpuRun { stop, thread });
            }
            Err(err) => NoKernelSampling::NotStarted(Box::new(err)),
        },
        Err(refusal) => refusal,
    };
    // The account keeps the reason as the words it is shown in, causes included.
    let reason = crate::error::error_chain(&refusal);
    backend
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .start(&enabled)?;
    let mut pass = Pass {
        backend: Arc::clone(backend),
        ids,
        store,
        epoch,
        scratch: Vec::new(),
    };
    if let Err(err) = pass.sample() {
        backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
        return Err(err);
    }
    let tally = Tally::new(Instant::now(), interval);
    let (stop, stop_rx) = mpsc::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("lizard-hwcpipe".into())
        .spawn(move || run(pass, stop_rx, tally, reason))
        .map_err(Error::Thread)?;
    Ok(CpuRun { stop, thread })
}

/// How long past its due time the GPU poller waits for a dump before counting it missed: two periods, and
/// at least 20 ms (a driver's dump worker may be scheduled late). Every wait has this deadline.
pub(crate) fn dump_deadline(interval: Duration) -> Duration {
    interval.saturating_mul(2).max(Duration::from_millis(20))
}

/// The GPU's poller: sleeps until the next dump is due, then waits for it (at most until its deadline),
/// stores it on the engine's clock and counts it ([`GpuTally`]).
pub(crate) struct GpuPoller {
    source: SharedGpu,
    ids: Vec<(usize, CounterId)>,
    store: Arc<SampleStore>,
    epoch: Instant,
    /// CLOCK_MONOTONIC_RAW at `epoch`, ns: a dump's driver timestamp minus this is its time on the
    /// engine's clock.
    raw_at_epoch: u64,
    pace: GpuPace,
    tally: GpuTally,
    /// The driver timestamp of the last dump.
    last_timestamp: Option<u64>,
    /// The engine time of the last dump stored, ns.
    last_time_ns: u64,
    /// The backend, looked after between dumps when no CPU counter is sampled
    /// ([`HwcBackend::check_target`]).
    target: Option<SharedBackend>,
    scratch: Vec<(usize, Value)>,
}

impl GpuPoller {
    /// Starts the source counting `ids` (the source's indices) every `interval`.
    pub(crate) fn start(
        source: SharedGpu,
        ids: Vec<(usize, CounterId)>,
        store: Arc<SampleStore>,
        epoch: Instant,
        interval: Duration,
    ) -> Result<GpuPoller, Error> {
        let enabled: Vec<usize> = ids.iter().map(|&(i, _)| i).collect();
        let pace = source
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .start(&enabled, interval)?;
        let started = Instant::now();
        let raw_at_epoch = monotonic_raw_ns().saturating_sub(nanos_since(epoch));
        Ok(GpuPoller {
            source,
            ids,
            store,
            epoch,
            raw_at_epoch,
            pace,
            tally: GpuTally::new(started, interval),
            last_timestamp: None,
            last_time_ns: nanos_since(epoch),
            target: None,
            scratch: Vec::new(),
        })
    }

    /// Polls until `stop` says so (or the source fails), then stops the source; the result and the
    /// window's account.
    pub(crate) fn run(mut self, stop: mpsc::Receiver<()>) -> (Result<(), Error>, GpuSampling) {
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(TIMER_SLACK_NS));
        let deadline = dump_deadline(self.tally.interval());
        let result = loop {
            let due = self.tally.next_due();
            match stop.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => break Ok(()),
            }
            let wait = (due + deadline).saturating_duration_since(Instant::now());
            // Behind the schedule, a dump not in the ring yet is still waited for a period.
            let wait = wait.max(self.tally.interval().max(Duration::from_millis(1)));
            if let Err(err) = self.take(wait) {
                break Err(err);
            }
            if let Some(backend) = &self.target {
                backend
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .check_target();
            }
        };
        // Manual dumps end with one at the stop, as the CPU's thread does. The driver's own dumps end with
        // those due by the stop, taken from its ring (a poller late at the stop loses none), all within one
        // deadline.
        let stop_at = Instant::now();
        let last = match (&result, &self.pace) {
            (Ok(()), GpuPace::Manual { .. }) => self.take(deadline),
            (Ok(()), GpuPace::Periodic) => loop {
                let left = (stop_at + deadline).saturating_duration_since(Instant::now());
                if self.tally.next_due() > stop_at || left.is_zero() {
                    break Ok(());
                }
                if let Err(err) = self.take(left) {
                    break Err(err);
                }
            },
            (Err(_), _) => Ok(()),
        };
        self.source
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
        let sampling = self.tally.finish(Instant::now(), self.pace);
        (result.and(last), sampling)
    }

    /// Takes one dump, waiting at most `wait`: stores and counts it, or counts it missed. Only a failure of
    /// the source is an error.
    fn take(&mut self, wait: Duration) -> Result<(), Error> {
        self.scratch.clear();
        let next = self
            .source
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .next(wait, &mut self.scratch);
        let at = Instant::now();
        let dump = match next {
            Ok(dump) => dump,
            Err(GpuMiss::Missed(reason)) => {
                self.tally.missed(reason);
                return Ok(());
            }
            Err(GpuMiss::Lost(reason)) => {
                self.tally.lost(reason);
                return Ok(());
            }
            Err(GpuMiss::Failed(err)) => return Err(err),
        };
        // The driver's own dumps say how many periods they cover by their timestamps; a manual dump covers
        // the periods past since the previous one.
        let periods = match (&self.pace, self.last_timestamp) {
            (GpuPace::Periodic, Some(last)) if dump.timestamp_ns > last => {
                Some(self.tally.periods_in(dump.timestamp_ns - last))
            }
            (GpuPace::Periodic, _) => Some(1),
            (GpuPace::Manual { .. }, _) => None,
        };
        let periods = periods.map(|n| if dump.stretched { n.max(2) } else { n });
        self.last_timestamp = Some(dump.timestamp_ns);
        if !self.tally.dump(at, periods, dump.counting) {
            return Ok(());
        }
        let timestamp_ns = self.engine_time(dump.timestamp_ns, at);
        store_values(&self.store, &self.ids, &self.scratch, timestamp_ns);
        Ok(())
    }

    /// A dump's time on the engine's clock: its driver timestamp, on CLOCK_MONOTONIC_RAW like the CPU's
    /// kernel-sampled records, where it lies between the previous sample and now; else (a driver on
    /// another clock) when it was taken.
    fn engine_time(&mut self, timestamp_ns: u64, at: Instant) -> u64 {
        let taken =
            u64::try_from(at.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX);
        let time = match timestamp_ns.checked_sub(self.raw_at_epoch) {
            Some(t) if t <= taken && t >= self.last_time_ns => t,
            _ => taken,
        };
        self.last_time_ns = time;
        time
    }
}

/// The timer slack of the sampler thread: the kernel may delay its wake-ups by this much to batch them
/// (50 µs by default for an ordinary thread, which would make every period at least that much late).
const TIMER_SLACK_NS: u64 = 1_000;

fn run(
    mut pass: Pass,
    stop: mpsc::Receiver<()>,
    mut tally: Tally,
    reason: String,
) -> (Result<(), Error>, Sampling) {
    // Best effort: without it the wake-ups are only later, which the tally counts.
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(TIMER_SLACK_NS));
    let result = loop {
        let wait = tally.next_due().saturating_duration_since(Instant::now());
        match stop.recv_timeout(wait) {
            Err(RecvTimeoutError::Timeout) => {
                if let Err(err) = pass.sample() {
                    break Err(err);
                }
                tally.sampled(Instant::now());
            }
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break Ok(()),
        }
    };
    // The stop sample closes the window even after a sampling error (the samples before it are kept).
    let last = pass.sample();
    let sampling = tally
        .finish(Instant::now())
        .with_method(SamplingMethod::Thread { reason });
    (result.and(last), sampling)
}

/// Stores the backend's values `values` (counter index, value) taken at `timestamp_ns`: index `i` as store
/// counter `ids[i]`.
fn store_values(
    store: &SampleStore,
    ids: &[(usize, CounterId)],
    values: &[(usize, Value)],
    timestamp_ns: u64,
) {
    store.push_all(values.iter().filter_map(|&(index, value)| {
        ids.iter().find(|(i, _)| *i == index).map(|&(_, id)| {
            (
                id,
                Sample {
                    timestamp_ns,
                    value,
                    core: None,
                },
            )
        })
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hwc::backend::HwcCounterInfo;

    /// A backend counting calls: each sample gives 1 for every enabled index.
    #[derive(Debug, Default)]
    struct Counting {
        enabled: Vec<usize>,
        samples: u64,
        fail_after: Option<u64>,
        stopped: bool,
    }

    impl HwcBackend for Counting {
        fn counters(&self) -> Vec<HwcCounterInfo> {
            Vec::new()
        }
        fn start(&mut self, enabled: &[usize]) -> Result<(), Error> {
            self.enabled = enabled.to_vec();
            self.stopped = false;
            Ok(())
        }
        fn sample(&mut self, out: &mut Vec<(usize, Value)>) -> Result<(), Error> {
            if self.fail_after.is_some_and(|n| self.samples >= n) {
                return Err(Error::NoCounters);
            }
            self.samples += 1;
            out.extend(self.enabled.iter().map(|&i| (i, Value::Int(1))));
            Ok(())
        }
        fn stop(&mut self) {
            self.stopped = true;
        }
    }

    fn shared(b: Counting) -> SharedBackend {
        Arc::new(Mutex::new(Box::new(b)))
    }

    #[test]
    fn samples_at_start_interval_and_stop() {
        let backend = shared(Counting::default());
        let store = Arc::new(SampleStore::new(2, 10_000));
        let sampler = Sampler::start(
            Arc::clone(&backend),
            vec![(0, 2)],
            Arc::clone(&store),
            Instant::now(),
            Duration::from_millis(1),
        )
        .unwrap();
        assert!(
            !store.samples(2, None).unwrap().is_empty(),
            "start sample taken before returning"
        );
        std::thread::sleep(Duration::from_millis(30));
        sampler.stop().0.unwrap();
        let samples = store.samples(2, None).unwrap();
        assert!(
            samples.len() >= 3,
            "start, at least one tick, stop: {}",
            samples.len()
        );
        assert!(samples
            .windows(2)
            .all(|w| w[0].timestamp_ns <= w[1].timestamp_ns));
        assert!(
            store.samples(1, None).unwrap().is_empty(),
            "only enabled counters"
        );
    }

    #[test]
    fn immediate_stop_still_has_start_and_stop_samples() {
        let backend = shared(Counting::default());
        let store = Arc::new(SampleStore::new(1, 16));
        let sampler = Sampler::start(
            backend,
            vec![(3, 1)],
            Arc::clone(&store),
            Instant::now(),
            Duration::from_secs(60),
        )
        .unwrap();
        // No period can have passed: the one sample is the start sample, taken before returning.
        assert_eq!(store.samples(1, None).unwrap().len(), 1);
        sampler.stop().0.unwrap();
        assert_eq!(store.samples(1, None).unwrap().len(), 2);
    }

    #[test]
    fn sampling_error_is_reported_at_stop_and_samples_kept() {
        let backend = shared(Counting {
            fail_after: Some(2),
            ..Counting::default()
        });
        let store = Arc::new(SampleStore::new(1, 16));
        let sampler = Sampler::start(
            Arc::clone(&backend),
            vec![(0, 1)],
            Arc::clone(&store),
            Instant::now(),
            Duration::from_millis(1),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let err = sampler.stop().0.unwrap_err();
        assert!(matches!(err, Error::NoCounters), "{err:?}");
        assert_eq!(store.samples(1, None).unwrap().len(), 2);
    }

    #[test]
    fn start_sample_failure_fails_start_and_stops_backend() {
        let backend = shared(Counting {
            fail_after: Some(0),
            ..Counting::default()
        });
        let store = Arc::new(SampleStore::new(1, 16));
        let err = Sampler::start(
            backend,
            vec![(0, 1)],
            store,
            Instant::now(),
            Duration::from_millis(1),
        );
        assert!(matches!(err, Err(Error::NoCounters)));
    }

    /// A GPU whose dumps come at once, each a period after the last, counting 1.
    #[derive(Debug, Default)]
    struct FakeGpu {
        refuse_start: bool,
        /// Every dump request blocks for good, as a driver that stopped answering does.
        stall: bool,
        timestamp_ns: u64,
        stopped: bool,
    }

    impl GpuSource for FakeGpu {
        fn start(&mut self, _: &[usize], _: Duration) -> Result<GpuPace, Error> {
            if self.refuse_start {
                return Err(Error::NoCounters);
            }
            Ok(GpuPace::Periodic)
        }
        fn next(
            &mut self,
            _: Duration,
            out: &mut Vec<(usize, Value)>,
        ) -> Result<super::super::backend::GpuDump, GpuMiss> {
            if self.stall {
                // Holds the lock for good: parked with no one to unpark it, spurious wake-ups aside.
                loop {
                    std::thread::park();
                }
            }
            self.timestamp_ns += 1_000_000;
            out.push((0, Value::Int(1)));
            Ok(super::super::backend::GpuDump {
                timestamp_ns: self.timestamp_ns,
                counting: true,
                stretched: false,
            })
        }
        fn stop(&mut self) {
            self.stopped = true;
        }
    }

    /// A backend of one GPU counter, counting its target checks and stops.
    #[derive(Debug)]
    struct GpuOnly {
        gpu: Arc<Mutex<FakeGpu>>,
        checks: Arc<Mutex<(u64, bool)>>,
    }

    impl HwcBackend for GpuOnly {
        fn counters(&self) -> Vec<HwcCounterInfo> {
            Vec::new()
        }
        fn start(&mut self, _: &[usize]) -> Result<(), Error> {
            Ok(())
        }
        fn sample(&mut self, _: &mut Vec<(usize, Value)>) -> Result<(), Error> {
            Ok(())
        }
        fn stop(&mut self) {
            self.checks.lock().unwrap().1 = true;
        }
        fn gpu_source(&self) -> Option<super::super::backend::GpuPlan> {
            Some(super::super::backend::GpuPlan {
                source: Arc::clone(&self.gpu) as SharedGpu,
                first: 0,
                count: 1,
            })
        }
        fn check_target(&mut self) {
            self.checks.lock().unwrap().0 += 1;
        }
    }

    #[test]
    fn gpu_counters_alone_are_polled_and_the_target_looked_after_between_dumps() {
        let gpu = Arc::new(Mutex::new(FakeGpu::default()));
        let checks = Arc::new(Mutex::new((0, false)));
        let backend: SharedBackend = Arc::new(Mutex::new(Box::new(GpuOnly {
            gpu: Arc::clone(&gpu),
            checks: Arc::clone(&checks),
        })));
        let store = Arc::new(SampleStore::new(1, 10_000));
        let sampler = Sampler::start(
            backend,
            vec![(0, 1)],
            Arc::clone(&store),
            Instant::now(),
            Duration::from_millis(1),
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(20));
        let (result, sampling) = sampler.stop();
        result.unwrap();
        let sampling = sampling.unwrap();
        assert_eq!(sampling.method, SamplingMethod::GpuOnly);
        let gpu_account = sampling.gpu.unwrap();
        assert!(gpu_account.delivered > 0);
        assert_eq!(
            store.samples(1, None).unwrap().len() as u64,
            gpu_account.delivered
        );
        let (checked, stopped) = *checks.lock().unwrap();
        // Looked after between dumps (those drained at the stop aside).
        assert!(checked > 0, "{gpu_account:?}");
        assert!(
            stopped,
            "the backend is stopped after GPU counters only too"
        );
        assert!(gpu.lock().unwrap().stopped);
    }

    #[test]
    fn a_gpu_that_cannot_start_fails_the_start() {
        let backend: SharedBackend = Arc::new(Mutex::new(Box::new(GpuOnly {
            gpu: Arc::new(Mutex::new(FakeGpu {
                refuse_start: true,
                ..FakeGpu::default()
            })),
            checks: Arc::new(Mutex::new((0, false))),
        })));
        let err = Sampler::start(
            backend,
            vec![(0, 1)],
            Arc::new(SampleStore::new(1, 16)),
            Instant::now(),
            Duration::from_millis(1),
        );
        assert!(matches!(err, Err(Error::NoCounters)));
    }

    #[test]
    fn a_gpu_stuck_in_the_driver_does_not_hang_the_stop() {
        let backend: SharedBackend = Arc::new(Mutex::new(Box::new(GpuOnly {
            gpu: Arc::new(Mutex::new(FakeGpu {
                stall: true,
                ..FakeGpu::default()
            })),
            checks: Arc::new(Mutex::new((0, false))),
        })));
        let interval = Duration::from_millis(1);
        let sampler = Sampler::start(
            backend,
            vec![(0, 1)],
            Arc::new(SampleStore::new(1, 16)),
            Instant::now(),
            interval,
        )
        .unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let asked = Instant::now();
        let (result, sampling) = sampler.stop();
        let waited = asked.elapsed();
        match result {
            Err(Error::Direct(DirectError::GpuStalled { waited })) => {
                assert_eq!(waited, gpu_stop_deadline(interval))
            }
            other => panic!("{other:?}"),
        }
        assert!(sampling.is_none(), "no account from a stuck poller");
        assert!(waited >= gpu_stop_deadline(interval), "{waited:?}");
        assert!(waited < gpu_stop_deadline(interval) * 3, "{waited:?}");
    }
}
