//! The thread-safe, bounded sample store that every capture thread writes into.
//!
//! One ring buffer per counter, each holding at most `capacity` samples. When a buffer is full the oldest sample
//! is dropped and counted, so memory stays bounded however long a capture runs. Every method takes the one lock
//! for a short, allocation-free (amortised) critical section; a poisoned lock is recovered, never a panic.
//!
//! **One integer type for a count.** A count is a `u64` where it is measured: the kernel's perf counts,
//! HWCPipe's [`hwcpipe::Value::Int`], perf-record's running totals and deltas. The store's integer
//! ([`Value::Int`]) is an `i64`, because gatord's values are signed (SLEB128 on the wire) and share the store
//! and the capture document with the counts. A count enters the store in one place,
//! [`Value::from_count`] (and `TryFrom<hwcpipe::Value>`, which uses it): exactly, or, beyond `i64::MAX` —
//! never reached by a real counter, so a corrupted value — as the typed error [`CountOutOfRange`], never a
//! saturated or wrapped number. The capture document writes the integer as it is.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::counter::CounterId;

/// The most cores whose enclosing samples [`SampleStore::samples_around`] looks for beyond a window's edges.
const MAX_CORES: usize = 256;

/// Default number of samples kept per counter (about a minute at gatord's 1 kHz sample rate).
pub const DEFAULT_CAPACITY: usize = 65_536;

/// One sampled value, keeping its type.
///
/// Integers are signed because gatord's are (SLEB128 on the wire); counts are unsigned where they are measured,
/// and [`Value::from_count`] is the one place they convert (see the module documentation). With the `serde`
/// feature it serializes as the bare number.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(untagged))]
pub enum Value {
    /// An integer value (every gatord value, HWCPipe CPU counts).
    Int(i64),
    /// A fractional value (HWCPipe GPU formulas).
    Float(f64),
}

/// A count too large for the store's integer: beyond `i64::MAX`, which no real counter reaches (a corrupted
/// value), refused by [`Value::from_count`] rather than stored saturated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("count {count} is beyond the store's integers (at most {})", i64::MAX)]
pub struct CountOutOfRange {
    /// The count.
    pub count: u64,
}

impl Value {
    /// The value as a double: integers are converted numerically, never reinterpreted.
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Float(v) => v,
        }
    }

    /// A count (a `u64`, as the kernel, HWCPipe and perf-record give it) as the store's integer, exactly.
    pub fn from_count(count: u64) -> Result<Value, CountOutOfRange> {
        i64::try_from(count)
            .map(Value::Int)
            .map_err(|_| CountOutOfRange { count })
    }
}

impl TryFrom<hwcpipe::Value> for Value {
    type Error = CountOutOfRange;

    /// An HWCPipe count keeps its integer type ([`Value::from_count`]); a formula's fraction stays a
    /// fraction.
    fn try_from(value: hwcpipe::Value) -> Result<Value, CountOutOfRange> {
        match value {
            hwcpipe::Value::Int(v) => Value::from_count(v),
            hwcpipe::Value::Float(v) => Ok(Value::Float(v)),
        }
    }
}

/// One timestamped sample of a counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Nanoseconds since the engine's time origin (see [`crate::Lizard::now_ns`]).
    pub timestamp_ns: u64,
    /// The sampled value.
    pub value: Value,
    /// The CPU the value was counted on, for a counter gatord reads per core (its perf-backed counters, one
    /// sample per core per reading; BLOCK_COUNTER values after a core marker); `None` for a value of the
    /// whole system or of a source without cores. A counter's reading combines every core's samples (the
    /// sum for a delta counter): per-core samples are the parts of the counter's value.
    pub core: Option<u32>,
}

/// An inclusive window of timestamps selecting the samples of one capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First timestamp included, in nanoseconds.
    pub start_ns: u64,
    /// Last timestamp included, in nanoseconds.
    pub end_ns: u64,
}

impl Window {
    /// Whether `timestamp_ns` lies inside the window.
    pub fn contains(&self, timestamp_ns: u64) -> bool {
        (self.start_ns..=self.end_ns).contains(&timestamp_ns)
    }
}

#[derive(Debug, Default)]
struct Buffer {
    samples: VecDeque<Sample>,
    dropped: u64,
}

/// Per-counter bounded sample buffers behind one lock, shared by the capture threads and the reader.
#[derive(Debug)]
pub struct SampleStore {
    capacity: usize,
    buffers: Mutex<Vec<Buffer>>,
}

impl SampleStore {
    /// A store for counters `1..=counters`, keeping at most `capacity` samples per counter (at least 1).
    pub fn new(counters: usize, capacity: usize) -> SampleStore {
        let buffers = (0..counters).map(|_| Buffer::default()).collect();
        SampleStore {
            capacity: capacity.max(1),
            buffers: Mutex::new(buffers),
        }
    }

    /// The most samples kept per counter.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The number of counters the store has buffers for.
    pub fn counters(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Buffer>> {
        self.buffers.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn index(id: CounterId) -> Option<usize> {
        (id as usize).checked_sub(1)
    }

    /// Adds one sample to counter `id` in time order (after every sample not later than it), dropping (and
    /// counting) the oldest if the buffer is full.
    ///
    /// Returns `false` (and stores nothing) when `id` is not a counter of this store.
    pub fn push(&self, id: CounterId, sample: Sample) -> bool {
        let mut buffers = self.lock();
        Self::push_locked(&mut buffers, self.capacity, id, sample)
    }

    /// Appends many samples under one lock. Samples for ids outside the store are skipped; returns how many
    /// were stored.
    pub fn push_all(&self, samples: impl IntoIterator<Item = (CounterId, Sample)>) -> usize {
        let mut buffers = self.lock();
        let mut stored = 0;
        for (id, sample) in samples {
            if Self::push_locked(&mut buffers, self.capacity, id, sample) {
                stored += 1;
            }
        }
        stored
    }

    fn push_locked(buffers: &mut [Buffer], capacity: usize, id: CounterId, sample: Sample) -> bool {
        let Some(buffer) = Self::index(id).and_then(|i| buffers.get_mut(i)) else {
            return false;
        };
        // Samples arrive nearly in time order; those of several cores may not (gatord sends each CPU's perf
        // ring in its own frames), so each goes after every sample not later than it.
        let samples = &mut buffer.samples;
        let at = samples.len()
            - samples
                .iter()
                .rev()
                .take_while(|s| s.timestamp_ns > sample.timestamp_ns)
                .count();
        samples.insert(at, sample);
        if samples.len() > capacity {
            samples.pop_front();
            buffer.dropped += 1;
        }
        true
    }

    /// A copy of counter `id`'s samples, oldest first, optionally only those inside `window`; `None` for an
    /// id outside the store.
    pub fn samples(&self, id: CounterId, window: Option<Window>) -> Option<Vec<Sample>> {
        let buffers = self.lock();
        let buffer = buffers.get(Self::index(id)?)?;
        Some(match window {
            None => buffer.samples.iter().copied().collect(),
            Some(w) => buffer
                .samples
                .iter()
                .filter(|s| w.contains(s.timestamp_ns))
                .copied()
                .collect(),
        })
    }

    /// A copy of counter `id`'s samples inside `window` together with the newest sample before it and the
    /// oldest after it, of every core (the samples that enclose the window, which the window reading rules of
    /// [`crate::reduce`] use), oldest first; `None` for an id outside the store.
    pub fn samples_around(&self, id: CounterId, window: Window) -> Option<Vec<Sample>> {
        let buffers = self.lock();
        let samples = &buffers.get(Self::index(id)?)?.samples;
        let first = samples.partition_point(|s| s.timestamp_ns < window.start_ns);
        let after = samples.partition_point(|s| s.timestamp_ns <= window.end_ns);
        // Beyond each edge, one sample of every core.
        let from = one_per_core(samples, (0..first).rev()).unwrap_or(first);
        let to = one_per_core(samples, after..samples.len()).map_or(after, |i| i + 1);
        Some(samples.range(from..to).copied().collect())
    }

    /// How many samples of counter `id` were dropped because its buffer was full; `None` for an unknown id.
    pub fn dropped(&self, id: CounterId) -> Option<u64> {
        let buffers = self.lock();
        buffers.get(Self::index(id)?).map(|b| b.dropped)
    }

    /// Empties the buffers of the given counters and resets their drop counts.
    pub fn clear(&self, ids: impl IntoIterator<Item = CounterId>) {
        let mut buffers = self.lock();
        for id in ids {
            if let Some(buffer) = Self::index(id).and_then(|i| buffers.get_mut(i)) {
                *buffer = Buffer::default();
            }
        }
    }

    /// Empties every buffer and resets every drop count.
    pub fn clear_all(&self) {
        let mut buffers = self.lock();
        for buffer in buffers.iter_mut() {
            *buffer = Buffer::default();
        }
    }

    /// Discards every sample older than `timestamp_ns` except the newest of them of every core (not counted
    /// as dropped):
    /// keeps a long-running persistent session from filling the buffers with samples no capture window will
    /// select, while keeping the sample that encloses a window starting at `timestamp_ns`.
    pub fn prune_before(&self, timestamp_ns: u64) {
        let mut buffers = self.lock();
        for buffer in buffers.iter_mut() {
            let samples = &mut buffer.samples;
            let first = samples.partition_point(|s| s.timestamp_ns < timestamp_ns);
            let keep = one_per_core(samples, (0..first).rev()).unwrap_or(first);
            samples.drain(..keep);
        }
    }
}

/// Walking `indices` of `samples` outwards from a window's edge, the last index of one round of cores: it
/// stops before a core comes round again (per-core samples arrive core after core), after at most
/// [`MAX_CORES`] samples. `None` when `indices` is empty.
fn one_per_core(samples: &VecDeque<Sample>, indices: impl Iterator<Item = usize>) -> Option<usize> {
    let mut seen: Vec<Option<u32>> = Vec::new();
    let mut last = None;
    for i in indices.take(MAX_CORES) {
        let Some(core) = samples.get(i).map(|s| s.core) else {
            break;
        };
        if seen.contains(&core) {
            break;
        }
        seen.push(core);
        last = Some(i);
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn counts_keep_their_value_or_are_refused_never_saturated() {
        assert_eq!(Value::try_from(hwcpipe::Value::Int(7)), Ok(Value::Int(7)));
        let largest = i64::MAX as u64;
        assert_eq!(Value::from_count(largest), Ok(Value::Int(i64::MAX)));
        for count in [largest + 1, u64::MAX] {
            assert_eq!(Value::from_count(count), Err(CountOutOfRange { count }));
            assert_eq!(
                Value::try_from(hwcpipe::Value::Int(count)),
                Err(CountOutOfRange { count })
            );
        }
        assert!(CountOutOfRange { count: u64::MAX }
            .to_string()
            .contains("18446744073709551615"));
        assert_eq!(
            Value::try_from(hwcpipe::Value::Float(2.5)),
            Ok(Value::Float(2.5))
        );
    }
    use std::sync::Arc;

    fn s(t: u64, v: i64) -> Sample {
        Sample {
            timestamp_ns: t,
            value: Value::Int(v),
            core: None,
        }
    }

    #[test]
    fn unknown_ids_are_refused_not_panicking() {
        let store = SampleStore::new(2, 4);
        assert!(!store.push(0, s(0, 1)));
        assert!(!store.push(3, s(0, 1)));
        assert!(store.samples(0, None).is_none());
        assert!(store.samples(3, None).is_none());
        assert!(store.dropped(u32::MAX).is_none());
        assert!(store.push(2, s(0, 1)));
    }

    #[test]
    fn full_buffer_drops_oldest_and_counts() {
        let store = SampleStore::new(1, 3);
        for v in 0..5 {
            store.push(1, s(v as u64, v));
        }
        let values: Vec<_> = store.samples(1, None).unwrap();
        assert_eq!(values, vec![s(2, 2), s(3, 3), s(4, 4)]);
        assert_eq!(store.dropped(1), Some(2));
        store.clear([1]);
        assert_eq!(store.dropped(1), Some(0));
        assert!(store.samples(1, None).unwrap().is_empty());
    }

    #[test]
    fn window_selects_inclusive_range() {
        let store = SampleStore::new(1, 16);
        for t in 0..10 {
            store.push(1, s(t, t as i64));
        }
        let w = Window {
            start_ns: 3,
            end_ns: 5,
        };
        let got = store.samples(1, Some(w)).unwrap();
        assert_eq!(got, vec![s(3, 3), s(4, 4), s(5, 5)]);
        assert_eq!(
            store.samples_around(1, w).unwrap(),
            vec![s(2, 2), s(3, 3), s(4, 4), s(5, 5), s(6, 6)],
            "the window's samples and the two enclosing it"
        );
        let between = Window {
            start_ns: 20,
            end_ns: 30,
        };
        assert_eq!(store.samples_around(1, between).unwrap(), vec![s(9, 9)]);
        store.prune_before(8);
        assert_eq!(
            store.samples(1, None).unwrap(),
            vec![s(7, 7), s(8, 8), s(9, 9)],
            "the newest sample before the cut encloses the next window"
        );
        assert_eq!(store.dropped(1), Some(0));
    }

    #[test]
    fn samples_of_cores_sent_one_after_the_other_are_kept_in_time_order() {
        let c = |t: u64, core: u32| Sample {
            timestamp_ns: t,
            value: Value::Int(i64::from(core)),
            core: Some(core),
        };
        let store = SampleStore::new(1, 5);
        // gatord sends CPU 0's ring, then CPU 1's: the later frames hold earlier samples.
        store.push_all(
            [
                c(10, 0),
                c(20, 0),
                c(30, 0),
                c(5, 1),
                c(15, 1),
                c(20, 1),
                c(35, 1),
            ]
            .map(|x| (1, x)),
        );
        assert_eq!(
            store.samples(1, None).unwrap(),
            vec![c(15, 1), c(20, 0), c(20, 1), c(30, 0), c(35, 1)],
            "oldest first, equal times in arrival order, the two oldest dropped"
        );
        assert_eq!(store.dropped(1), Some(2));
        let w = Window {
            start_ns: 21,
            end_ns: 31,
        };
        assert_eq!(
            store.samples_around(1, w).unwrap(),
            vec![c(20, 0), c(20, 1), c(30, 0), c(35, 1)],
            "each core's samples that enclose the window"
        );
    }

    #[test]
    fn per_core_samples_keep_every_core_s_enclosing_sample() {
        let c = |t: u64, core: u32| Sample {
            timestamp_ns: t,
            value: Value::Int(1),
            core: Some(core),
        };
        let store = SampleStore::new(1, 64);
        // Two cores sampled at their own instants.
        let all = [
            c(0, 0),
            c(5, 1),
            c(10, 0),
            c(15, 1),
            c(20, 0),
            c(25, 1),
            c(30, 0),
        ];
        store.push_all(all.iter().map(|&x| (1, x)));
        let w = Window {
            start_ns: 16,
            end_ns: 21,
        };
        assert_eq!(
            store.samples_around(1, w).unwrap(),
            vec![c(10, 0), c(15, 1), c(20, 0), c(25, 1), c(30, 0)],
            "the newest sample of each core before the window and the oldest of each after it"
        );
        store.prune_before(16);
        assert_eq!(
            store.samples(1, None).unwrap(),
            all[2..].to_vec(),
            "each core keeps the sample that encloses a window starting at the cut"
        );
    }

    #[test]
    fn zero_capacity_is_raised_to_one() {
        let store = SampleStore::new(1, 0);
        assert_eq!(store.capacity(), 1);
        store.push(1, s(1, 1));
        store.push(1, s(2, 2));
        assert_eq!(store.samples(1, None).unwrap(), vec![s(2, 2)]);
    }

    #[test]
    fn concurrent_writers_lose_nothing() {
        let store = Arc::new(SampleStore::new(2, 100_000));
        let threads: Vec<_> = (1..=2)
            .map(|id| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    for v in 0..10_000 {
                        store.push(id, s(v, v as i64));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(store.samples(1, None).unwrap().len(), 10_000);
        assert_eq!(store.samples(2, None).unwrap().len(), 10_000);
    }

    proptest! {
        #[test]
        fn keeps_the_newest_capacity_samples(values in proptest::collection::vec(any::<i64>(), 0..200),
                                             capacity in 1usize..50) {
            let store = SampleStore::new(1, capacity);
            let stored = store.push_all(values.iter().enumerate().map(|(t, &v)| (1, s(t as u64, v))));
            prop_assert_eq!(stored, values.len());
            let kept: Vec<i64> = store.samples(1, None).unwrap().iter().map(|s| match s.value {
                Value::Int(v) => v,
                Value::Float(_) => unreachable!(),
            }).collect();
            let start = values.len().saturating_sub(capacity);
            prop_assert_eq!(&kept[..], &values[start..]);
            prop_assert_eq!(store.dropped(1).unwrap(), start as u64);
        }
    }
}
