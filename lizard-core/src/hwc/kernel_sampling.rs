//! The engine's side of kernel sampling ([`hwcpipe::counting::KernelSampler`]): a thread that drains the
//! rings in batches and decodes their records with the perf-record decoder that also reads gatord's perf
//! data ([`PerfCounterTracker`]) — the sampler's events registered with it by key and the attribute they
//! were opened with, each ring's words given to it as they were read, and each group's read after the stop
//! as `read()` filled it — then stores each value as a sample and counts each ring's periods ([`Tally`])
//! from the timers' record times. The tracker also counts the records the kernel lost and times its
//! throttling of the timers, from their records.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hwcpipe::counting::{KernelSampler, TIMER_KEY};
use hwcpipe::sys::monotonic_raw_ns;
use perf_record::{PerfCounterSample, PerfCounterTracker, PerfEventAttr};

use super::backend::KernelPlan;
use super::sampler::nanos_since;
use super::sampling::{Sampling, SamplingMethod, StartSkew, Tally};
use crate::counter::CounterId;
use crate::error::Error;
use crate::store::{Sample, SampleStore, Value};
use crate::DirectError;

/// The missed periods that `throttled_ns` of throttling and `lost_records` lost records do not explain.
fn unexplained(missed: u64, throttled_ns: u64, lost_records: u64, interval: Duration) -> u64 {
    let interval_ns = u64::try_from(interval.as_nanos())
        .unwrap_or(u64::MAX)
        .max(1);
    missed
        .saturating_sub(throttled_ns / interval_ns)
        .saturating_sub(lost_records)
}

/// Why a ring's records could not be read or decoded, for the capture's error.
fn ring_error(err: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Direct(DirectError::Backend(Box::new(err)))
}

/// Decodes rings' words into samples and counts each ring's periods.
struct RingDecoder {
    tracker: PerfCounterTracker,
    epoch: Instant,
    decoded: Vec<PerfCounterSample>,
    tallies: Vec<Tally>,
    /// When each ring's timer was enabled, in ns since `epoch` on the records' clock: its first record's
    /// time less its own count (the CPU-clock time since the enable).
    enabled_ns: Vec<Option<i64>>,
}

impl RingDecoder {
    /// Announces `sampler`'s events to a new tracker, with its clock base set so that a record's time
    /// comes out as nanoseconds since `epoch`; each ring's window starts when its timer was enabled (or at
    /// `started`, were that unknown).
    fn new(sampler: &KernelSampler, epoch: Instant, started: Instant) -> RingDecoder {
        let starts: Vec<Instant> = (0..sampler.rings())
            .map(|ring| sampler.ring_window(ring).0.unwrap_or(started))
            .collect();
        RingDecoder::announced(
            sampler.events(),
            sampler.ids(),
            &starts,
            sampler.interval(),
            epoch,
        )
    }

    /// A decoder of `events` (key and the attribute each was opened with) written under perf `ids`, for
    /// rings sampled every `interval` from `starts` (one a ring).
    fn announced(
        events: &[(i32, PerfEventAttr)],
        ids: &[(u64, i32)],
        starts: &[Instant],
        interval: Duration,
        epoch: Instant,
    ) -> RingDecoder {
        let mut tracker = PerfCounterTracker::new();
        for &(key, attr) in events {
            tracker.register_event(key, attr);
        }
        tracker.register_ids(ids.iter().copied());
        let raw_at_epoch = monotonic_raw_ns().saturating_sub(nanos_since(epoch));
        tracker.set_clock_base(i64::try_from(raw_at_epoch).unwrap_or(i64::MAX));
        RingDecoder {
            tracker,
            epoch,
            decoded: Vec::new(),
            tallies: starts
                .iter()
                .map(|&start| Tally::new(start, interval))
                .collect(),
            enabled_ns: vec![None; starts.len()],
        }
    }

    /// Decodes the records of ring `ring` (on `cpu`): the counters' values are left in `self.decoded`,
    /// each timer record counts as a period of the ring.
    fn feed(&mut self, ring: usize, cpu: u32, words: &[u64]) -> Result<(), Error> {
        self.decoded.clear();
        let result = self
            .tracker
            .handle_words(cpu_number(cpu), words, &mut self.decoded)
            .map_err(ring_error);
        let timers = self.decoded.iter().filter(|s| s.key == TIMER_KEY);
        if let Some(enabled) = self.enabled_ns.get_mut(ring) {
            if let Some(first) = timers.clone().next() {
                enabled.get_or_insert_with(|| {
                    first
                        .time_ns
                        .saturating_sub(i64::try_from(first.total).unwrap_or(i64::MAX))
                });
            }
        }
        if let Some(tally) = self.tallies.get_mut(ring) {
            for sample in timers {
                tally.sampled(self.epoch + Duration::from_nanos(sample.time_ns.max(0) as u64));
            }
        }
        result
    }

    /// Decodes the read of a group after the stop (on `cpu`, of the timer with perf id `id`, at `time`
    /// on the records' clock): the counts since its last record are left in `self.decoded`. It is no
    /// period of the ring.
    fn feed_read(&mut self, cpu: u32, id: u64, time: u64, words: &[u64]) -> Result<(), Error> {
        self.decoded.clear();
        self.tracker
            .handle_read(cpu_number(cpu), id, time, words, &mut self.decoded)
            .map_err(ring_error)
    }
}

/// A CPU as the decoder numbers it.
fn cpu_number(cpu: u32) -> i32 {
    i32::try_from(cpu).unwrap_or(i32::MAX)
}

/// Stores the decoded values of the counters (not the timers'): counter index `key` as store counter
/// `ids[key]`, with its CPU as the core when `per_core`. A value the store cannot hold is not stored, and
/// the first such is the error, after the others are.
fn store_decoded(
    decoded: &[PerfCounterSample],
    store: &SampleStore,
    ids: &[(usize, CounterId)],
    per_core: bool,
) -> Result<(), Error> {
    let mut out_of_range = None;
    store.push_all(decoded.iter().filter_map(|s| {
        let index = usize::try_from(s.key).ok()?;
        let &(_, id) = ids.iter().find(|(i, _)| *i == index)?;
        let value = Value::from_count(s.delta)
            .map_err(|err| {
                out_of_range.get_or_insert(err);
            })
            .ok()?;
        Some((
            id,
            Sample {
                timestamp_ns: u64::try_from(s.time_ns).unwrap_or(0),
                value,
                core: per_core.then_some(u32::try_from(s.core).unwrap_or(0)),
            },
        ))
    }));
    out_of_range.map_or(Ok(()), |err| Err(ring_error(err)))
}

/// A capture sampled by the kernel: the sampler, its decoder, and where the values go.
pub(crate) struct KernelRun {
    sampler: KernelSampler,
    decoder: RingDecoder,
    store: Arc<SampleStore>,
    ids: Vec<(usize, CounterId)>,
    per_core: bool,
    scratch: Vec<u64>,
    pending: Vec<PerfCounterSample>,
    first_error: Option<Error>,
    /// When the engine began enabling the timers, in ns since the epoch.
    enabling_ns: i64,
}

impl KernelRun {
    /// Starts the kernel's timers of `plan`; the values of counter index `i` go to the store as counter
    /// `ids[i]`.
    pub(crate) fn start(
        plan: KernelPlan,
        ids: Vec<(usize, CounterId)>,
        store: Arc<SampleStore>,
        epoch: Instant,
    ) -> Result<KernelRun, Error> {
        let mut sampler = plan.sampler;
        let enabling_ns = i64::try_from(nanos_since(epoch)).unwrap_or(i64::MAX);
        sampler.start().map_err(ring_error)?;
        let started = Instant::now();
        let decoder = RingDecoder::new(&sampler, epoch, started);
        Ok(KernelRun {
            sampler,
            decoder,
            store,
            ids,
            per_core: plan.per_core,
            scratch: Vec::new(),
            pending: Vec::new(),
            first_error: None,
            enabling_ns,
        })
    }

    /// Drains every ring into the store: the rings' values merged in time order first, so that the store
    /// appends each (the rings of several CPUs hold the same span of time).
    fn drain(&mut self) {
        let KernelRun {
            sampler,
            decoder,
            scratch,
            pending,
            first_error,
            ..
        } = self;
        pending.clear();
        let drained = sampler.drain(scratch, |ring, cpu, words| {
            if let Err(err) = decoder.feed(ring, cpu, words) {
                first_error.get_or_insert(err);
            }
            pending.extend_from_slice(&decoder.decoded);
        });
        self.keep(drained.map_err(ring_error));
        self.store_pending();
    }

    /// Stores the values decoded and not yet stored, in time order.
    fn store_pending(&mut self) {
        self.pending.sort_by_key(|s| s.time_ns);
        let stored = store_decoded(&self.pending, &self.store, &self.ids, self.per_core);
        self.keep(stored);
    }

    fn keep(&mut self, result: Result<(), Error>) {
        if let Err(err) = result {
            self.first_error.get_or_insert(err);
        }
    }

    /// Drains every [`drain_period`](KernelSampler::drain_period) until `stop`; then stops the timers,
    /// drains the rest and reads each group once more for the counts since the last period.
    pub(crate) fn run(mut self, stop: mpsc::Receiver<()>) -> (Result<(), Error>, Sampling) {
        let period = self.sampler.drain_period();
        // A message or a dropped sender both mean stop.
        while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(period) {
            self.drain();
        }
        let stopped = self.sampler.stop().map_err(ring_error);
        self.keep(stopped);
        let at = Instant::now();
        self.drain();
        let time = monotonic_raw_ns();
        let mut reads = Vec::new();
        let read = self
            .sampler
            .read_groups(|ring, cpu, words| reads.push((ring, cpu, words.to_vec())))
            .map_err(ring_error);
        self.keep(read);
        self.pending.clear();
        for (ring, cpu, words) in reads {
            let Some(id) = self.sampler.ring_id(ring) else {
                continue;
            };
            let fed = self.decoder.feed_read(cpu, id, time, &words);
            self.keep(fed);
            self.pending.extend_from_slice(&self.decoder.decoded);
        }
        self.store_pending();
        // Each ring's window ends when its timer was stopped.
        let accounts: Vec<Sampling> = std::mem::take(&mut self.decoder.tallies)
            .into_iter()
            .enumerate()
            .map(|(ring, tally)| tally.finish(self.sampler.ring_window(ring).1.unwrap_or(at)))
            .collect();
        // A timer still throttled at the stop was throttled until then.
        self.decoder.tracker.end_throttling(time);
        let interval = self.sampler.interval();
        let throttling = self.decoder.tracker.throttling();
        let throttled_ns = throttling.total_ns();
        let lost_records = self.decoder.tracker.lost_records();
        let mut method = SamplingMethod::Kernel {
            rings: accounts.len(),
            lost_records,
            throttled: throttling.count(),
            throttled_time: Duration::from_nanos(throttled_ns),
            idle_periods: 0,
        };
        let sampling = Sampling::merge(&accounts, method.clone()).unwrap_or_else(|| {
            Tally::new(at, interval)
                .finish(at)
                .with_method(method.clone())
        });
        if let SamplingMethod::Kernel { idle_periods, .. } = &mut method {
            *idle_periods = unexplained(sampling.missed, throttled_ns, lost_records, interval);
        }
        let groups: Vec<(u32, Option<i64>)> = self
            .sampler
            .ring_cpus()
            .zip(self.decoder.enabled_ns.iter().copied())
            .collect();
        let start = StartSkew::of_groups(&groups, self.enabling_ns);
        (
            self.first_error.map_or(Ok(()), Err),
            sampling.with_method(method).with_start(start),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perf_record::{
        record_header, ReadFormat, ReadValue, SampleLayout, SampleRecord, SampleType, WordSlice,
        CLOCK_MONOTONIC_RAW, PERF_RECORD_SAMPLE,
    };

    /// What the sampler's records hold: the writer's id, the time, a read of the group with ids and times.
    const LAYOUT: SampleLayout = SampleLayout {
        sample_type: SampleType(SampleType::IDENTIFIER | SampleType::TIME | SampleType::READ),
        read_format: ReadFormat(0b1111),
    };

    /// Events as the sampler announces them: a timer (key −1, id 100) leading counter 0 (id 101).
    fn decoder(epoch: Instant) -> RingDecoder {
        decoder_of_rings(epoch, &[epoch])
    }

    /// A decoder of rings whose timers started at `starts`.
    fn decoder_of_rings(epoch: Instant, starts: &[Instant]) -> RingDecoder {
        let timer = PerfEventAttr {
            sample_period_or_freq: 1_000_000,
            sample_type: LAYOUT.sample_type,
            read_format: LAYOUT.read_format,
            ..PerfEventAttr::counting(1, 0)
        }
        .on_clock(CLOCK_MONOTONIC_RAW);
        let member = PerfEventAttr {
            sample_period_or_freq: 0,
            ..timer
        };
        RingDecoder::announced(
            &[(TIMER_KEY, timer), (0, member)],
            &[(100, TIMER_KEY), (101, 0)],
            starts,
            Duration::from_millis(1),
            epoch,
        )
    }

    /// A timer's record at `time` (raw clock) with the group's totals.
    fn record(time: u64, timer: u64, counter: u64) -> Vec<u64> {
        let value = |value, id| ReadValue {
            value,
            id: Some(id),
            lost: None,
        };
        let mut words = Vec::new();
        SampleRecord {
            identifier: Some(100),
            ip: None,
            pid_tid: None,
            time: Some(time),
            addr: None,
            id: None,
            stream_id: None,
            cpu: None,
            period: None,
            read: None,
            tail: WordSlice::default(),
        }
        .encode_words(
            LAYOUT,
            timer,
            timer,
            &[value(timer, 100), value(counter, 101)],
            &mut words,
        );
        words
    }

    #[test]
    fn records_become_deltas_of_the_counters_and_periods_of_the_ring() {
        let epoch = Instant::now();
        let mut decoder = decoder(epoch);
        let t0 = monotonic_raw_ns();
        let mut words = record(t0 + 1_000_000, 1_000_000, 7);
        words.extend(record(t0 + 2_000_000, 2_000_000, 10));
        decoder.feed(0, 3, &words).unwrap();
        let counter: Vec<(u64, i32)> = decoder
            .decoded
            .iter()
            .filter(|s| s.key == 0)
            .map(|s| (s.delta, s.core))
            .collect();
        assert_eq!(counter, [(7, 3), (3, 3)]);
        let account = decoder
            .tallies
            .remove(0)
            .finish(epoch + Duration::from_millis(3));
        assert_eq!((account.delivered, account.expected), (2, 3));
    }

    #[test]
    fn each_ring_starts_at_its_first_record_less_its_timers_count() {
        // Ring 0's first record is at 3 ms with 1 ms of timer count: enabled at 2 ms. Ring 1's first
        // record is at 5.5 ms with 2.5 ms (it was idle for a period): enabled at 3 ms. Later records and
        // the read at the stop do not move either.
        let epoch = Instant::now();
        let mut decoder = decoder_of_rings(epoch, &[epoch, epoch]);
        let base = monotonic_raw_ns().saturating_sub(nanos_since(epoch));
        let mut words = record(base + 3_000_000, 1_000_000, 1);
        words.extend(record(base + 4_000_000, 2_000_000, 2));
        decoder.feed(0, 0, &words).unwrap();
        decoder
            .feed(1, 1, &record(base + 5_500_000, 2_500_000, 1))
            .unwrap();
        decoder
            .feed_read(1, 100, base + 9_000_000, &[2, 0, 0, 9_000_000, 100, 2, 101])
            .unwrap();
        let near = |got: Option<i64>, want: i64| {
            let got = got.expect("a start");
            assert!((got - want).abs() < 200_000, "{got} ns, not {want} ns");
        };
        near(decoder.enabled_ns[0], 2_000_000);
        near(decoder.enabled_ns[1], 3_000_000);
        let groups = [(0, decoder.enabled_ns[0]), (1, decoder.enabled_ns[1])];
        let skew = StartSkew::of_groups(&groups, 1_000_000).expect("known starts");
        let largest = skew.largest.as_nanos() as i64;
        assert!((largest - 1_000_000).abs() < 200_000, "{largest} ns");
    }

    #[test]
    fn each_ring_counts_the_periods_of_its_own_timers_window() {
        // Ring 1's timer was started 4 ms after ring 0's (its thread was preempted in between) and
        // stopped 1 ms before: over the same records it expects fewer periods, and misses none.
        let epoch = Instant::now();
        let ms = Duration::from_millis;
        let mut decoder = decoder_of_rings(epoch, &[epoch, epoch + ms(4)]);
        let t0 = monotonic_raw_ns().saturating_sub(nanos_since(epoch));
        for ring in [0, 1] {
            let offset = if ring == 0 { 0 } else { 4 };
            let mut words = Vec::new();
            for period in 1..=5u64 {
                words.extend(record(
                    t0 + (offset + period) * 1_000_000,
                    period * 1_000_000,
                    period,
                ));
            }
            decoder.feed(ring, ring as u32, &words).unwrap();
        }
        let mut tallies = std::mem::take(&mut decoder.tallies).into_iter();
        let first = tallies.next().unwrap().finish(epoch + ms(10));
        let second = tallies.next().unwrap().finish(epoch + ms(9) + ms(1) / 2);
        assert_eq!((first.expected, first.delivered, first.missed), (10, 5, 4));
        assert_eq!(
            (second.expected, second.delivered, second.missed),
            (5, 5, 0)
        );
    }

    #[test]
    fn a_malformed_ring_is_an_error_and_the_records_before_it_are_kept() {
        let mut decoder = decoder(Instant::now());
        let t0 = monotonic_raw_ns();
        let mut words = record(t0, 1_000, 5);
        // A record whose header claims more words than the ring gave.
        words.push(record_header(PERF_RECORD_SAMPLE, 0, 40));
        words.push(100);
        let err = decoder.feed(0, 0, &words).unwrap_err();
        assert!(
            matches!(err, Error::Direct(DirectError::Backend(_))),
            "{err:?}"
        );
        assert!(decoder.decoded.iter().any(|s| s.key == 0 && s.delta == 5));
        // A record of an id nobody announced.
        let mut stranger = record(t0 + 10, 2_000, 6);
        stranger[1] = 999;
        assert!(decoder.feed(0, 0, &stranger).is_err());
    }

    #[test]
    fn throttling_and_lost_records_are_the_decoders_account() {
        let epoch = Instant::now();
        let mut decoder = decoder(epoch);
        let t0 = monotonic_raw_ns();
        let mut words = record(t0, 1_000_000, 1);
        perf_record::ThrottleRecord {
            time: t0 + 100,
            id: 100,
            stream_id: 100,
        }
        .encode_throttle(&mut words);
        perf_record::LostRecord { id: 100, lost: 4 }.encode_words(&mut words);
        decoder.feed(0, 0, &words).unwrap();
        decoder.tracker.end_throttling(t0 + 600);
        let throttling = decoder.tracker.throttling();
        assert_eq!((throttling.count(), throttling.total_ns()), (1, 500));
        assert_eq!(decoder.tracker.lost_records(), 4);
    }

    #[test]
    fn missed_periods_beyond_throttling_and_losses_are_idle() {
        let ms = Duration::from_millis(1);
        // 10 missed: 3.5 ms throttled explains 3, 2 lost records 2; 5 remain.
        assert_eq!(unexplained(10, 3_500_000, 2, ms), 5);
        // More explained than missed (a throttled stretch overlapping the stop): none.
        assert_eq!(unexplained(2, 9_000_000, 0, ms), 0);
        assert_eq!(unexplained(u64::MAX, u64::MAX, u64::MAX, Duration::ZERO), 0);
    }

    #[test]
    fn the_read_after_the_stop_gives_the_counts_since_the_last_record_and_no_period() {
        let epoch = Instant::now();
        let mut decoder = decoder(epoch);
        let base = monotonic_raw_ns().saturating_sub(nanos_since(epoch));
        decoder
            .feed(0, 2, &record(base + 1_000_000, 1_000_000, 7))
            .unwrap();
        decoder
            .feed_read(
                2,
                100,
                base + 1_500_000,
                &[2, 0, 0, 1_500_000, 100, 12, 101],
            )
            .unwrap();
        let counter: Vec<(i64, u64, i32)> = decoder
            .decoded
            .iter()
            .filter(|s| s.key == 0)
            .map(|s| (s.time_ns, s.delta, s.core))
            .collect();
        // The decoder's clock base and this test's are read a moment apart.
        let [(time_ns, delta, core)] = counter[..] else {
            panic!("one value: {counter:?}");
        };
        assert_eq!((delta, core), (5, 2));
        assert!((time_ns - 1_500_000).abs() < 200_000, "{time_ns} ns");
        let account = decoder
            .tallies
            .remove(0)
            .finish(epoch + Duration::from_millis(2));
        assert_eq!(account.delivered, 1, "the read is no period");
        // A read cut short, or of an id nobody announced, is an error.
        assert!(decoder.feed_read(2, 100, base, &[2, 0, 0, 1]).is_err());
        assert!(decoder.feed_read(2, 999, base, &[1, 0, 0, 1, 999]).is_err());
    }

    #[test]
    fn a_count_the_store_cannot_hold_is_an_error_and_the_others_are_stored() {
        let store = SampleStore::new(2, 16);
        let sample = |key, delta| PerfCounterSample {
            time_ns: 5,
            core: 1,
            key,
            total: delta,
            delta,
        };
        let decoded = [sample(0, 7), sample(1, u64::MAX), sample(TIMER_KEY, 9)];
        let err = store_decoded(&decoded, &store, &[(0, 1), (1, 2)], true).unwrap_err();
        let Error::Direct(DirectError::Backend(source)) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            source.downcast_ref::<crate::store::CountOutOfRange>(),
            Some(&crate::store::CountOutOfRange { count: u64::MAX })
        );
        let stored: Vec<Value> = store
            .samples(1, None)
            .unwrap()
            .iter()
            .map(|s| s.value)
            .collect();
        assert_eq!(stored, [Value::Int(7)]);
        assert!(store.samples(2, None).unwrap().is_empty());
    }
}
