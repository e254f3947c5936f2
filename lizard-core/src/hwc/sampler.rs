//! The HWCPipe sampler thread: one sample at start, one per interval (sleeping in between, never spinning),
//! one at stop, every sample written into the shared store, and the window's account ([`Sampling`]): the
//! periods expected, delivered and missed.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::backend::HwcBackend;
use super::kernel_sampling::KernelRun;
use super::sampling::{Sampling, SamplingMethod, Tally};
use crate::counter::CounterId;
use crate::error::Error;
use crate::store::{Sample, SampleStore, Value};
use crate::DirectError;

/// A backend shared between the engine and its sampler thread.
pub(crate) type SharedBackend = Arc<Mutex<Box<dyn HwcBackend>>>;

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
        let ids = &self.ids;
        self.store
            .push_all(self.scratch.iter().filter_map(|&(index, value)| {
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
        Ok(())
    }
}

/// Nanoseconds from `epoch` to now, saturating.
pub(crate) fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// A running sampler thread.
pub(crate) struct Sampler {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<(Result<(), Error>, Sampling)>,
    backend: SharedBackend,
}

impl Sampler {
    /// Starts sampling the enabled indices every `interval`: by the kernel where the backend can have it
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
        let enabled: Vec<usize> = ids.iter().map(|&(i, _)| i).collect();
        let plan = backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .kernel_sampler(&enabled, interval);
        let reason = match plan {
            Ok(plan) => match KernelRun::start(plan, ids.clone(), Arc::clone(&store), epoch) {
                Ok(run) => {
                    let (stop, stop_rx) = mpsc::channel::<()>();
                    let thread = std::thread::Builder::new()
                        .name("lizard-rings".into())
                        .spawn(move || run.run(stop_rx))
                        .map_err(Error::Thread)?;
                    return Ok(Sampler {
                        stop,
                        thread,
                        backend,
                    });
                }
                Err(err) => format!(
                    "the kernel's sampling could not start ({})",
                    crate::error::error_chain(&err)
                ),
            },
            Err(reason) => reason,
        };
        backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .start(&enabled)?;
        let mut pass = Pass {
            backend: Arc::clone(&backend),
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
        Ok(Sampler {
            stop,
            thread,
            backend,
        })
    }

    /// Signals the thread, which takes the stop sample and exits; joins it and stops the backend. Returns the
    /// first sampling error, if any (samples stored before it are kept), and the window's account (`None`
    /// if the thread panicked).
    pub(crate) fn stop(self) -> (Result<(), Error>, Option<Sampling>) {
        // A send error means the thread already ended (after an error); joining still collects its result.
        let _ = self.stop.send(());
        let (result, sampling) = match self.thread.join() {
            Ok((result, sampling)) => (result, Some(sampling)),
            Err(_) => (Err(Error::Direct(DirectError::SamplerPanicked)), None),
        };
        self.backend
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stop();
        (result, sampling)
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
}
